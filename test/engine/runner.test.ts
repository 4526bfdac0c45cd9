import { expect } from "chai";
import { Wallet } from "ethers";
import { sendSummary } from "../../service/model/batch-views";
import { execute, prepareAndSign } from "../helpers/flow";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";

/**
 * The runner answers a send from its own copy of the batch (no read-back). That copy must be exactly what the store
 * holds once the run ended, whichever way it ended.
 */
describe("engine: the batch runner's answer is what it stored", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let issuer: Wallet;
  const chainId = "aa36a7";
  const symbol = "RUNR";

  const stored = async (txId: string) =>
    JSON.parse(JSON.stringify(sendSummary((await service.services.batches.get(txId))!)));
  const rows = (txId: string) =>
    service.services.db.query<{
      status: string;
      broadcast_at: unknown;
      confirmed_at: unknown;
      block_number: string | null;
    }>(
      "SELECT status, broadcast_at, confirmed_at, block_number FROM batch_transactions WHERE tx_id = $1 ORDER BY index",
      [txId],
    );

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    issuer = sandbox.accounts[1];
    const { key } = await service.services.apiKeys.create({ email: "runner@engine.test", plan: "Enterprise" });
    api = service.api.withKey(key);
    await service.services.signers.add(issuer.address, "all-keys");
    await execute(api, issuer, {
      method: "newTokenization",
      chainId,
      tokenizerEmail: "runner@engine.test",
      name: "Runner",
      tokenSymbol: symbol,
    });
  });
  after(async () => service?.stop());

  it("a confirmed batch: the send's summary equals the stored batch; each transaction is stored confirmed with its broadcast time", async () => {
    const { prepared, sent } = await execute(api, issuer, {
      method: "mintToken",
      chainId,
      tokenSymbol: symbol,
      userToMint: [
        { investorEmail: "holder@engine.test", investorAddress: Wallet.createRandom().address, amount: "5" },
      ],
    });
    expect(prepared.transactions.length).to.equal(2); // whitelist, then mint: two runs of the wait, in order
    expect(sent).to.deep.equal(await stored(prepared.txId));
    for (const row of await rows(prepared.txId)) {
      expect(row.status).to.equal("confirmed");
      expect(row.broadcast_at).to.not.equal(null);
      expect(row.confirmed_at).to.not.equal(null);
      expect(row.block_number).to.not.equal(null);
    }
  });

  it("a paid relayed batch: the send's summary (signed, numbered and priced by the relayer) equals the stored batch", async () => {
    const txId = await prepareRelayedToken(service.api, "RUNRL", sandbox.accounts[6].address);
    const res = await payRelayedSend(service.api, txId, sandbox.accounts[3]);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.status).to.equal("success");
    const { payment: _payment, ...summary } = res.body;
    expect(summary).to.deep.equal(await stored(txId));
  });

  it("a batch that reverts on-chain: the send's summary equals the stored, rejected batch", async () => {
    // Enough gas to be accepted, too little to run: mined, reverted.
    const { prepared, signedTransactions } = await prepareAndSign(api, issuer, {
      method: "whitelist",
      chainId,
      tokenSymbol: symbol,
      gasLimit: "30000",
      userToWhitelist: [{ investorAddress: Wallet.createRandom().address, whitelistStatus: true }],
    });
    const res = await api.post("/send-transactions", { txId: prepared.txId, signedTransactions });
    expect(res.status).to.equal(200);
    expect(res.body.status).to.equal("rejected");
    expect(res.body.failedIndex).to.equal(0);
    expect(res.body).to.deep.equal(await stored(prepared.txId));
    expect((await rows(prepared.txId))[0].status).to.equal("reverted");
  });
});
