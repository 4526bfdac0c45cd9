import { expect } from "chai";
import { Wallet, type Wallet as WalletType } from "ethers";
import { buildTransactions, startBuildReads } from "../../service/engine/prepare";
import { execute } from "../helpers/flow";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";
import { cliJson, runAdminCli } from "../helpers/admin-cli";

type Call = { method: string; params: unknown };

/**
 * A prepare's build reads that need no plan (the signer's nonce, the fees) start before the method's pre-checks, so
 * that they travel while the pre-checks read the chain (engine/prepare.ts startBuildReads). A pre-check that refuses
 * still answers exactly as it did, and the reads started for it fail nobody.
 */
describe("engine: a prepare's build reads start before its pre-checks", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let issuer: WalletType, agent: WalletType;
  const symbol = "EARLY";
  const chainId = "aa36a7";

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    [issuer, agent] = [1, 2].map((i) => sandbox.accounts[i]);
    const admin = async (...args: string[]) => cliJson(await runAdminCli(service.dataDir, args));
    const key = await admin("keys", "create", "--email", "ops@early.test", "--plan", "Enterprise");
    for (const w of [issuer, agent]) await admin("signers", "add", w.address, "--key-id", key.id);
    api = service.api.withKey(key.apiKey);
    await execute(api, issuer, {
      method: "newTokenization",
      chainId,
      tokenizerEmail: "issuer@early.test",
      name: "Early Reads",
      tokenSymbol: symbol,
      tokenType: "RWA_TOKEN",
      supplyCap: "1000",
      url: "https://early.test",
    });
  });
  after(async () => service?.stop());

  const sepolia = () => service.services.chains.find(11155111)!;

  /** Every JSON-RPC call the service makes on Sepolia while `work` runs; `refuse` names methods answered by a failure. */
  async function recorded<T>(work: () => Promise<T>, refuse: string[] = []): Promise<{ result: T; calls: Call[] }> {
    const rpc = sepolia().provider;
    const send = rpc.send.bind(rpc);
    const calls: Call[] = [];
    rpc.send = (method: string, params: unknown[] | Record<string, unknown>) => {
      calls.push({ method, params });
      return refuse.includes(method)
        ? Promise.reject(new Error(`${method} refused by the test`))
        : send(method, params);
    };
    try {
      return { result: await work(), calls };
    } finally {
      rpc.send = send;
    }
  }

  /** Unhandled rejections while `work` runs and shortly after (a read started for a refused prepare ends later). */
  async function unhandledDuring<T>(work: () => Promise<T>): Promise<{ result: T; unhandled: unknown[] }> {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", listener);
    try {
      const result = await work();
      await new Promise((r) => setTimeout(r, 200));
      return { result, unhandled };
    } finally {
      process.off("unhandledRejection", listener);
    }
  }

  const whitelistBody = (signer: string) => ({
    method: "whitelist",
    chainId,
    signerAddress: signer,
    tokenSymbol: symbol,
    userToWhitelist: [{ investorAddress: Wallet.createRandom().address, whitelistStatus: true }],
  });

  it("asks for the signer's nonce before the pre-check's role read, and builds with it", async () => {
    const { result, calls } = await recorded(() => api.post("/prepare-transactions", whitelistBody(issuer.address)));
    expect(result.status, JSON.stringify(result.body)).to.equal(200);
    const methods = calls.map((c) => c.method);
    const nonceRead = methods.indexOf("eth_getTransactionCount");
    const roleRead = methods.indexOf("eth_call");
    expect(nonceRead, methods.join(",")).to.be.at.least(0);
    expect(roleRead, methods.join(",")).to.be.at.least(0);
    expect(nonceRead, `the nonce is asked first: ${methods.join(",")}`).to.be.lessThan(roleRead);
    expect(
      methods.filter((m) => m === "eth_getTransactionCount"),
      "one nonce read",
    ).to.have.length(1);
    expect(result.body.transactions[0].nonce).to.equal(
      await sepolia().provider.getTransactionCount(issuer.address, "pending"),
    );
  });

  it("a refused pre-check answers as before even when the early reads fail, and leaves no unhandled rejection", async () => {
    // The agent holds no WHITELISTER_ROLE on the token: the role check refuses it.
    const before = await api.post("/prepare-transactions", whitelistBody(agent.address));
    expect(before.status, JSON.stringify(before.body)).to.equal(400);
    expect(before.body.error.code).to.equal("PREFLIGHT_FAILED");
    const { result, unhandled } = await unhandledDuring(() =>
      recorded(() => api.post("/prepare-transactions", whitelistBody(agent.address)), ["eth_getTransactionCount"]),
    );
    expect(unhandled.map(String)).to.deep.equal([]);
    expect(result.calls.map((c) => c.method)).to.include("eth_getTransactionCount");
    expect(result.result.status).to.equal(before.status);
    expect(result.result.body.error).to.deep.equal(before.body.error);
  });

  it("a plan that goes through answers the failure of its early reads", async () => {
    const reads = await recorded(async () => startBuildReads(sepolia(), issuer.address), ["eth_getTransactionCount"]);
    const built = await buildTransactions(sepolia(), [], reads.result).catch((e: unknown) => e);
    expect(String(built)).to.match(/eth_getTransactionCount refused by the test/);
  });
});
