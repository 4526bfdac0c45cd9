import { expect } from "chai";
import { Wallet } from "ethers";
import type { ApiKeyRecord } from "../../service/store/api-keys";
import { sendSummary } from "../../service/model/batch-views";
import { SendFlow } from "../../service/usecases/send-flow";
import type { RequestFacts } from "../../service/wire/request";
import { execute, prepareAndSign } from "../helpers/flow";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";

/** A request as the send reads it: no payment header, no client address. */
const request: RequestFacts = {
  header: () => undefined,
  protocol: "http",
  host: "localhost",
  hostname: "localhost",
  method: "POST",
  path: "/send-transactions",
  originalUrl: "/send-transactions",
};

/**
 * One send (usecases/send-flow.ts), in process against the sandbox chain: its typed result says how it ended, and the
 * batch it answers with is the one the store holds (what markSending, the run's writes and the batch's end returned).
 */
describe("the send flow", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let apiKey: ApiKeyRecord;
  let issuer: Wallet;
  const chainId = "aa36a7";
  const symbol = "FLOW";

  const send = (body: { txId: string; signedTransactions: string[] }) =>
    new SendFlow(service.services, request, { apiKey }, body).run();
  const rows = (txId: string) =>
    service.services.db.query<{ status: string; broadcast_at: unknown; confirmed_at: unknown }>(
      "SELECT status, broadcast_at, confirmed_at FROM batch_transactions WHERE tx_id = $1 ORDER BY index",
      [txId],
    );

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    issuer = sandbox.accounts[1];
    const created = await service.services.apiKeys.create({ email: "flow@engine.test", plan: "Enterprise" });
    apiKey = created.record;
    api = service.api.withKey(created.key);
    await service.services.signers.add(issuer.address, "all-keys");
    await execute(api, issuer, {
      method: "newTokenization",
      chainId,
      tokenizerEmail: "flow@engine.test",
      name: "Flow",
      tokenSymbol: symbol,
    });
  });
  after(async () => service?.stop());

  it("a batch whose run ends within SEND_WAIT_MS: `ended`, with the batch as stored, each transaction confirmed with its broadcast time", async () => {
    const { prepared, signedTransactions } = await prepareAndSign(api, issuer, {
      method: "mintToken",
      chainId,
      tokenSymbol: symbol,
      userToMint: [
        { investorEmail: "holder@engine.test", investorAddress: Wallet.createRandom().address, amount: "5" },
      ],
    });
    expect(prepared.transactions.length).to.equal(2); // whitelist, then mint: two runs of the wait, in order
    const result = await send({ txId: prepared.txId, signedTransactions });
    expect(result.kind).to.equal("ended");
    expect(result.batch.status).to.equal("success");
    expect(result.batch).to.deep.equal(await service.services.batches.get(prepared.txId));
    for (const row of await rows(prepared.txId)) {
      expect(row.status).to.equal("confirmed");
      expect(row.broadcast_at).to.not.equal(null);
      expect(row.confirmed_at).to.not.equal(null);
    }
  });

  it("a batch that reverts on chain: `ended`, rejected at that transaction, as stored", async () => {
    // Enough gas to be accepted, too little to run: mined, reverted.
    const { prepared, signedTransactions } = await prepareAndSign(api, issuer, {
      method: "whitelist",
      chainId,
      tokenSymbol: symbol,
      gasLimit: "30000",
      userToWhitelist: [{ investorAddress: Wallet.createRandom().address, whitelistStatus: true }],
    });
    const result = await send({ txId: prepared.txId, signedTransactions });
    expect(result.kind).to.equal("ended");
    expect(result.batch).to.deep.include({ status: "rejected", failedIndex: 0 });
    expect(result.batch.transactions[0].status).to.equal("reverted");
    expect(result.batch).to.deep.equal(await service.services.batches.get(prepared.txId));
  });

  it("a send refused before anything is written leaves the batch prepared: the next send of it goes through", async () => {
    const { prepared, signedTransactions } = await prepareAndSign(api, issuer, {
      method: "whitelist",
      chainId,
      tokenSymbol: symbol,
      userToWhitelist: [{ investorAddress: Wallet.createRandom().address, whitelistStatus: true }],
    });
    const stranger = await new Wallet(Wallet.createRandom().privateKey).signTransaction({
      ...prepared.transactions[0],
      from: undefined,
    });
    const refused = await send({ txId: prepared.txId, signedTransactions: [stranger] }).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(Error);
    expect((await service.services.batches.get(prepared.txId))!.status).to.equal("prepared");
    const result = await send({ txId: prepared.txId, signedTransactions });
    expect(result.kind).to.equal("ended");
    expect(result.batch.status).to.equal("success");
  });

  it("a paid relayed batch over HTTP: the answer (signed, numbered and priced by the relayer) is the stored batch and its payment", async () => {
    const txId = await prepareRelayedToken(service.api, "FLOWR", sandbox.accounts[6].address);
    const res = await payRelayedSend(service.api, txId, sandbox.accounts[3]);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.status).to.equal("success");
    const { payment, ...summary } = res.body;
    expect(summary).to.deep.equal(JSON.parse(JSON.stringify(sendSummary((await service.services.batches.get(txId))!))));
    expect(payment.status).to.equal("settled");
  });
});
