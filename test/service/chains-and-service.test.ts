// tier: release
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { JsonRpcProvider, Wallet } from "ethers";
import { openDb } from "../../service/store/db";
import { ScriptProcess, type Credentials } from "../helpers/script-process";
import { ApiClient } from "../helpers/service";

/**
 * `npm run chains` and `npm run service` as separate processes: the service can be killed and restarted alone, and
 * finishes the batch it was killed in; when the chains themselves are restarted (empty), the credit of a batch the
 * reset abandoned comes back.
 */
describe("npm run chains + npm run service (the sandbox in two processes)", function () {
  this.timeout(240_000);
  let dataDir: string;
  const processes: ScriptProcess[] = [];
  const credentialsFile = () => path.join(dataDir, "sandbox", "dev-credentials.json");

  const start = (script: string) => {
    const proc = new ScriptProcess(dataDir, script, { LOG_LEVEL: "info" });
    processes.push(proc);
    return proc;
  };
  const startChains = async () => {
    const chains = start("scripts/chains.ts");
    await chains.waitFor("the chains banner", () => chains.stdout.includes("Local chains are up"), 120_000);
    return chains;
  };
  const startService = async () => {
    const service = start("scripts/service.ts");
    await service.waitFor("the service banner", () => service.stdout.includes("sandbox is up"), 120_000);
    const credentials = JSON.parse(fs.readFileSync(credentialsFile(), "utf8")) as Credentials;
    return { service, credentials, api: new ApiClient(credentials.baseUrl, credentials.apiKey) };
  };
  const hardKill = async (proc: ScriptProcess) => {
    proc.signalGroup("SIGKILL");
    expect(await proc.exitedWithin(10_000)).to.equal(true);
  };
  const rpc = (credentials: Credentials, chainId: string) =>
    new JsonRpcProvider(credentials.chains[chainId].rpcUrl, Number(chainId), { staticNetwork: true, cacheTimeout: -1 });

  before(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-chains-service-"));
  });
  after(async function () {
    this.timeout(30_000);
    for (const proc of processes) {
      proc.signalGroup("SIGKILL");
      await proc.exitedWithin(10_000);
    }
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("`npm run service` without `npm run chains` says what to run", async () => {
    const service = start("scripts/service.ts");
    expect(await service.exitedWithin(60_000)).to.equal(true);
    expect(service.exit?.code).to.equal(1);
    expect(service.stderr).to.match(/Run `npm run chains` first/);
  });

  it("a service killed between the two transactions of a batch, restarted alone, finishes it; the chains kept running", async () => {
    const chains = await startChains();
    let { service, credentials, api } = await startService();
    // Everything the two processes wrote in the data directory is private to this user: chains.json and the deployment
    // files as the database and the secrets (issue 41: they were 0644 in 0755 directories).
    const modes: string[] = [];
    const walk = (dir: string) => {
      modes.push(`${path.relative(dataDir, dir) || "."}/ ${(fs.statSync(dir).mode & 0o777).toString(8)}`);
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const target = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(target);
        else if (entry.isFile())
          modes.push(`${path.relative(dataDir, target)} ${(fs.statSync(target).mode & 0o777).toString(8)}`);
      }
    };
    walk(path.join(dataDir, "sandbox"));
    expect(
      modes.some((m) => m.startsWith("sandbox/chains.json ")) &&
        modes.some((m) => m.startsWith("sandbox/deployments/11155111.json ")),
      modes.join("\n"),
    ).to.equal(true);
    expect(
      modes.filter((m) => !/ (700|600)$/.test(m)),
      "files and directories others could read",
    ).to.deep.equal([]);
    const issuer = new Wallet(credentials.accounts[1].privateKey);
    const sepolia = rpc(credentials, "11155111");
    const prepareSignSend = async (body: Record<string, unknown>) => {
      const prepared = await api.post("/prepare-transactions", {
        chainId: "aa36a7",
        signerAddress: issuer.address,
        ...body,
      });
      expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
      const signedTransactions = await Promise.all(
        prepared.body.transactions.map((tx: Record<string, unknown>) => issuer.signTransaction(tx)),
      );
      return {
        prepared: prepared.body,
        send: () => api.post("/send-transactions", { txId: prepared.body.txId, signedTransactions }),
      };
    };
    const created = await prepareSignSend({
      method: "newTokenization",
      tokenizerEmail: "issuer@two-processes.test",
      name: "Two",
      tokenSymbol: "TWOP",
    });
    expect((await created.send()).body.status).to.equal("success");

    const mint = await prepareSignSend({
      method: "mintToken",
      tokenSymbol: "TWOP",
      userToMint: [
        { investorAddress: credentials.accounts[3].address, investorEmail: "inv@two-processes.test", amount: "5" },
      ],
    });
    expect(mint.prepared.transactions).to.have.length(2);
    const nonceBefore = await sepolia.getTransactionCount(issuer.address, "latest");
    await sepolia.send("evm_setAutomine", [false]);
    const pending = await Promise.race([
      mint.send(),
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 3000)),
    ]);
    expect(pending?.body.status ?? "pending").to.equal("pending");
    await hardKill(service);
    expect(chains.alive).to.equal(true);
    await sepolia.send("evm_mine", []);
    await sepolia.send("evm_setAutomine", [true]);

    ({ service, credentials, api } = await startService());
    let status: any;
    for (let i = 0; i < 100 && status?.status !== "success"; i++) {
      status = (await api.get("/get-transaction-status", { txId: mint.prepared.txId })).body;
      if (status.status !== "success") await new Promise((r) => setTimeout(r, 200));
    }
    expect(status.status, JSON.stringify(status)).to.equal("success");
    expect(await sepolia.getTransactionCount(issuer.address, "latest")).to.equal(nonceBefore + 2);
    const balance = await api.get("/get-balance-whitelist", {
      tokenSymbol: "TWOP",
      investorAddress: credentials.accounts[3].address,
    });
    expect(balance.body.tokenBalance).to.equal("5");

    // Ctrl-C on the service stops only the service.
    service.signalGroup("SIGINT");
    expect(await service.exitedWithin(20_000)).to.equal(true);
    expect(chains.alive).to.equal(true);
    sepolia.destroy();
  });

  it("restarted (empty) chains: the records of the old ones are dropped and the credit of a batch they abandoned comes back", async () => {
    let { service, credentials, api } = await startService();
    const issuer = new Wallet(credentials.accounts[1].privateKey);
    const sepolia = rpc(credentials, "11155111");
    const prepared = await api.post("/prepare-transactions", {
      method: "newTokenization",
      chainId: "aa36a7",
      signerAddress: issuer.address,
      tokenizerEmail: "issuer@two-processes.test",
      name: "Lost",
      tokenSymbol: "LOST",
    });
    expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
    const signedTransactions = [await issuer.signTransaction(prepared.body.transactions[0])];
    await sepolia.send("evm_setAutomine", [false]);
    const sent = await Promise.race([
      api.post("/send-transactions", { txId: prepared.body.txId, signedTransactions }),
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 3000)),
    ]);
    expect(sent?.body.status ?? "pending").to.equal("pending");
    sepolia.destroy();
    await hardKill(service);

    // The chains go down with the batch pending, and come back empty.
    for (const proc of processes.filter((p) => p.script === "scripts/chains.ts" && p.alive)) await hardKill(proc);
    await startChains();
    ({ service, credentials, api } = await startService());
    expect((await api.get("/get-transaction-status", { txId: prepared.body.txId })).status).to.equal(404);
    expect((await api.get("/get-token-info", { tokenSymbol: "TWOP" })).status).to.equal(400); // the old chain's token is gone
    service.signalGroup("SIGINT");
    expect(await service.exitedWithin(20_000)).to.equal(true);

    const db = await openDb({ dataDir: path.join(dataDir, "sandbox", "pglite") });
    try {
      const [charge] = await db.query<{ refunded_at: unknown }>(
        "SELECT refunded_at FROM credit_charges WHERE tx_id = $1",
        [prepared.body.txId],
      );
      expect(charge.refunded_at, "abandoned batch refunded").to.not.equal(null);
      const [{ balance }] = await db.query<{ balance: number }>(
        "SELECT balance FROM credit_balances b JOIN credit_charges c ON c.key_id = b.key_id WHERE c.tx_id = $1 AND b.method = 'newTokenization'",
        [prepared.body.txId],
      );
      expect(balance).to.equal(10_000 - 1); // TWOP's tokenization was charged and confirmed; LOST's came back
    } finally {
      await db.close();
    }
  });
});
