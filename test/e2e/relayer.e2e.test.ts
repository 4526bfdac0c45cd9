import { expect } from "chai";
import { TransactionReceipt } from "ethers";
import { USDC__factory } from "../../typechain-types";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, providerFor, RELAYER_INDEX, SETTLEMENT_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

const SENDS = 50;

describe("e2e: concurrent service-relayed sends", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  let service: TestService;

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
  });
  after(async () => service?.stop());

  it("a runner that reaches a transaction another runner already signed gets its bytes, and takes no nonce", async () => {
    const relayer = sandbox.accounts[RELAYER_INDEX].address;
    const txId = await prepareRelayedToken(service.api, "TWICE", sandbox.accounts[6].address);
    const batch = (await service.services.batches.get(txId))!;
    const counter = () => service.services.walletNonces.syncFloor(84532, relayer, 0);
    const first = await service.services.relayer.sign(batch, batch.transactions[0]);
    const after = await counter();
    // The same, as a second runner (or instance) holding the batch as it was before the first one signed.
    const second = await service.services.relayer.sign(batch, batch.transactions[0]);
    expect(second).to.include({ signedRaw: first.signedRaw, txHash: first.txHash });
    expect(await counter()).to.equal(after);
    expect((await service.services.batchTransactions.transaction(txId, 0))?.txHash).to.equal(first.txHash);
  });

  it(`${SENDS} concurrent paid relayed sends all confirm, with contiguous relayer nonces, one transaction each carrying its payment, broadcast once`, async () => {
    const provider = providerFor(sandbox.baseSepolia);
    const relayer = sandbox.accounts[RELAYER_INDEX].address;
    const settler = sandbox.accounts[SETTLEMENT_INDEX].address;
    const payer = sandbox.accounts[3];
    const usdc = USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, provider);
    const txIds: string[] = [];
    for (let i = 0; i < SENDS; i++)
      txIds.push(await prepareRelayedToken(service.api, `CC${i}`, sandbox.accounts[6].address));
    const [relayerNonce, settlerNonce, payerBefore] = await Promise.all([
      provider.getTransactionCount(relayer, "latest"),
      provider.getTransactionCount(settler, "latest"),
      usdc.balanceOf(payer.address),
    ]);

    // Every JSON-RPC broadcast the service makes on the payment chain, counted.
    const rpc = service.services.chains.find(84532)!.provider;
    const send = rpc.send.bind(rpc);
    let broadcasts = 0;
    rpc.send = (method: string, params: unknown[] | Record<string, unknown>) => {
      if (method === "eth_sendRawTransaction") broadcasts++;
      return send(method, params);
    };
    const results = await Promise.all(txIds.map((txId) => payRelayedSend(service.api, txId, payer))).finally(
      () => (rpc.send = send),
    );
    for (const r of results) {
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.status, JSON.stringify(r.body)).to.equal("success");
      expect(r.body.payment.status).to.equal("settled");
    }

    const nonces = [];
    for (const txId of txIds) {
      const status = (await service.api.get("/get-transaction-status", { txId })).body;
      const receipt = (await provider.getTransactionReceipt(status.txHash)) as TransactionReceipt;
      expect(receipt.status).to.equal(1);
      const tx = await provider.getTransaction(status.txHash);
      expect(tx!.from).to.equal(relayer);
      // Same chain: the payment was settled by the operation's own transaction (the relayer's EIP-7702 delegate).
      expect(status.payments[0]).to.include({ status: "settled", settlementTransaction: status.txHash });
      nonces.push(tx!.nonce);
    }
    nonces.sort((a, b) => a - b);
    expect(nonces).to.deep.equal(Array.from({ length: SENDS }, (_, i) => relayerNonce + i)); // no gap, no reuse
    expect(await provider.getTransactionCount(relayer, "latest")).to.equal(relayerNonce + SENDS);
    expect(await provider.getTransactionCount(settler, "latest")).to.equal(settlerNonce); // no settlement transaction of its own
    expect(payerBefore - (await usdc.balanceOf(payer.address))).to.equal(BigInt(SENDS) * 10_000n);
    // The relayer's broadcast is the only one: the runner looks the accepted bytes up instead of sending them again.
    expect(broadcasts).to.equal(SENDS);
  });
});
