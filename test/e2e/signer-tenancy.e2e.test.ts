import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Wallet } from "ethers";
import { runAdminCommand } from "../../service/operator/commands";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";

/**
 * Issue 41, item 2: another tenant could claim your transaction. Tried on the built service before the fix: tenant A
 * prepared newTokenization for its signer, tenant B prepared the identical call for the same signer (a byte-identical
 * unsigned transaction), the signer broadcast A's, B reported the hash first, and the token was recorded under B. The
 * hole was the deployment-wide signer whitelist: now a signer is whitelisted per key, so B's prepare for A's signer is
 * refused and B has nothing to report A's hash to. A deployment-wide whitelist is the operator's explicit choice.
 */
describe("e2e: signers are whitelisted per API key (two tenants, a signer in common)", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let service: TestService;
  let keyA: { client: ApiClient; id: string };
  let keyB: { client: ApiClient; id: string };
  let signer: Wallet;

  const expectStatus = (res: ApiResponse, status: number, label = "") => {
    expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.equal(status);
    return res.body;
  };

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    const key = async (email: string) => {
      const { key, record } = await service.services.apiKeys.create({ email, plan: "Enterprise" });
      return { client: service.api.withKey(key), id: record.id };
    };
    keyA = await key("a@tenancy.test");
    keyB = await key("b@tenancy.test");
    // Tenant A's own signer, funded; whitelisted by the operator for A's key only.
    signer = new Wallet(Wallet.createRandom().privateKey, providerFor(sandbox.sepolia));
    await (
      await sandbox.accounts[0]
        .connect(providerFor(sandbox.sepolia))
        .sendTransaction({ to: signer.address, value: 10n ** 18n })
    ).wait();
    expect(
      await runAdminCommand(service.services, { command: "signers.add", address: signer.address, keyId: keyA.id }),
    ).to.deep.include({ keyId: keyA.id, whitelisted: true });
  });
  after(async () => service?.stop());

  const tokenization = (symbol: string) => ({
    method: "newTokenization",
    chainId: "aa36a7",
    signerAddress: signer.address,
    tokenizerEmail: `issuer-${symbol}@tenancy.test`,
    name: "Tenancy",
    tokenSymbol: symbol,
    executionMode: "client-broadcast",
  });

  it("B's identical prepare for A's signer is refused (403 naming signerAddress): the signer broadcasts A's, B has no batch to report it to, and the token is A's", async () => {
    const symbol = `T${randomBytes(2).toString("hex").toUpperCase()}`;
    const prepared = expectStatus(
      await keyA.client.post("/prepare-transactions", tokenization(symbol)),
      200,
      "A prepares",
    );
    const stolen = expectStatus(
      await keyB.client.post("/prepare-transactions", tokenization(symbol)),
      403,
      "B prepares for A's signer",
    );
    expect(stolen.error.param ?? stolen.error.details.field).to.equal("signerAddress");
    expect(stolen.message).to.match(
      new RegExp(`^Signer ${signer.address} is not whitelisted for this API key \\(${keyB.id}\\)`),
    );
    // Without a key (an x402 payer) neither: the entry is A's only.
    const keyless = await service.api.post("/prepare-transactions", {
      ...tokenization(symbol),
      method: "agentCreateToken",
      chainId: "84532",
      name: "T",
      symbol,
      agentWallet: signer.address,
    });
    expect(keyless.status, JSON.stringify(keyless.body)).to.equal(403);

    // The signer broadcasts A's transaction itself; B tries to report the hash (to any batch it may have) first.
    const sent = await signer.sendTransaction(prepared.transactions[0]);
    const claim = await keyB.client.post("/send-transactions", { txId: prepared.txId, txHash: sent.hash });
    expect(claim.status, JSON.stringify(claim.body)).to.equal(403);
    expect(claim.body.message).to.match(/prepared under another API key/);
    await sent.wait();
    const reported = expectStatus(
      await keyA.client.post("/send-transactions", { txId: prepared.txId, txHash: sent.hash }),
      200,
      "A reports",
    );
    expect(reported.status).to.equal("success");
    expectStatus(await keyA.client.get("/get-tokenizer-info", { tokenSymbol: symbol }), 200, "A reads its token");
    const foreign = expectStatus(
      await keyB.client.get("/get-tokenizer-info", { tokenSymbol: symbol }),
      403,
      "B reads A's token",
    );
    expect(foreign.message).to.match(/Unauthorized token symbol/);
  });

  it("the operator whitelists a signer for several keys one by one, or for every key as an explicit choice (--all-keys), and can take either back", async () => {
    const symbol = `U${randomBytes(2).toString("hex").toUpperCase()}`;
    const other = Wallet.createRandom();
    const body = { ...tokenization(symbol), signerAddress: other.address };
    expectStatus(await keyB.client.post("/prepare-transactions", body), 403, "not whitelisted at all");
    await runAdminCommand(service.services, { command: "signers.add", address: other.address, keyId: keyB.id });
    expectStatus(await keyB.client.post("/prepare-transactions", body), 200, "B's own signer");
    expectStatus(await keyA.client.post("/prepare-transactions", body), 403, "A may not");
    await runAdminCommand(service.services, { command: "signers.add", address: other.address, allKeys: true });
    expectStatus(await keyA.client.post("/prepare-transactions", body), 200, "every key, the operator's choice");
    expect(
      await runAdminCommand(service.services, { command: "signers.list", keyId: keyA.id }),
    ).to.deep.include.members([{ address: other.address, allKeys: true }]);
    await runAdminCommand(service.services, { command: "signers.remove", address: other.address, allKeys: true });
    expectStatus(await keyA.client.post("/prepare-transactions", body), 403, "taken back");
    expectStatus(await keyB.client.post("/prepare-transactions", body), 200, "B's entry stays");
  });
});
