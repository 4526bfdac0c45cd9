import { expect } from "chai";
import { Wallet, parseUnits } from "ethers";
import { privateKeyToAccount } from "viem/accounts";
import { x402Client, wrapFetchWithPayment } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import {
  AgentTokenFactory__factory,
  AgentToken__factory,
  PaidRelayDelegate__factory,
  USDC__factory,
} from "../../typechain-types";
import { getSandbox, providerFor, SETTLEMENT_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";
import { decodePaymentResponse, payWithEthers, quoteOf } from "../helpers/x402";
import { send, unwrap } from "../../client/index";
import { payingClient } from "../helpers/client";

const PRICE = 10_000n; // 0.01 USDC, the sandbox's flat write price

describe("e2e: x402 payments and service-relayed execution", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let payer: Wallet;
  let payTo: string;
  let ipCounter = 1;

  /** `X402_BALANCE_REPORT=1 npx hardhat test test/e2e/x402.e2e.test.ts` prints each case's USDC balances. */
  const report: { case: string; payerBefore: string; payerAfter: string; payToBefore: string; payToAfter: string }[] =
    [];
  const note = (label: string, before: { payer: bigint; payTo: bigint }, after: { payer: bigint; payTo: bigint }) =>
    report.push({
      case: label,
      payerBefore: before.payer.toString(),
      payerAfter: after.payer.toString(),
      payToBefore: before.payTo.toString(),
      payToAfter: after.payTo.toString(),
    });
  const usdcBase = () =>
    USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, providerFor(sandbox.baseSepolia));
  const balances = async () => ({
    payer: await usdcBase().balanceOf(payer.address),
    payTo: await usdcBase().balanceOf(payTo),
  });
  /** Distinct client addresses (behind the loopback proxy) so the per-IP prepare limit does not interfere. */
  const asClient = () => ({ "x-forwarded-for": `10.1.0.${ipCounter++ % 250}` });
  /** A relayed agentCreateToken prepared through the typed client's facade (free: the send pays). */
  const relayedCreate = async (symbol: string, agentWallet = sandbox.accounts[6].address) =>
    unwrap(
      await api.typed.POST("/x402/token/create", {
        body: { chainId: "14a34", name: `Agent ${symbol}`, symbol, agentWallet, premint: "1000" },
        headers: asClient(),
      }),
    );

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    api = service.api;
    payer = sandbox.accounts[2];
    payTo = sandbox.accounts[SETTLEMENT_INDEX].address;
  });
  after(async () => {
    if (process.env.X402_BALANCE_REPORT) console.table(report);
    await service?.stop();
  });

  it("an authorization valid from a moment ago pays on an idle local chain (its latest block older than validAfter)", async () => {
    // The CLI signs validAfter = now - 60 s; a local chain with no block for a minute has a latest block older than
    // that. Simulating on that block would call the authorization not yet valid: the facilitator simulates on pending.
    const prepared = await relayedCreate("IDLE");
    const quote = quoteOf(await api.post("/send-transactions", { txId: prepared.txId })).accepts[0];
    await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
    const latest = Number((await providerFor(sandbox.baseSepolia).getBlock("latest"))!.timestamp);
    await new Promise((r) => setTimeout(r, Math.max(0, (latest + 3) * 1000 - Date.now())));
    const paid = await api.post(
      "/send-transactions",
      { txId: prepared.txId },
      { "X-PAYMENT": await payWithEthers(payer, quote, { validAfter: latest + 1 }) },
    );
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(decodePaymentResponse(paid)).to.include({ success: true });
  });

  it("relayed: free prepare, 402 quote at send, a hand-built ethers payment (X-PAYMENT) pays, settles after confirmation", async () => {
    const prepared = await relayedCreate("AGNT");
    expect(prepared.executionMode).to.equal("service-relayed");
    expect(prepared.x402Requirements).to.include({
      scheme: "exact",
      network: "eip155:84532",
      amount: PRICE.toString(),
      payTo,
    });

    const unpaid = await api.post("/send-transactions", { txId: prepared.txId });
    const quote = quoteOf(unpaid);
    expect(unpaid.headers.get("access-control-expose-headers"))
      .to.match(/PAYMENT-REQUIRED/)
      .and.to.match(/PAYMENT-RESPONSE/);
    expect(quote.x402Version).to.equal(2);
    expect(quote.accepts[0]).to.deep.include({
      scheme: "exact",
      network: "eip155:84532",
      asset: sandbox.deployments[84532].contracts.USDC,
      amount: "10000",
      payTo,
      maxTimeoutSeconds: 300,
    });
    expect(quote.accepts[0].extra).to.include({
      name: "USDC",
      version: "2",
      tokenSymbol: "USDC",
      displayPrice: "0.01 USDC",
      assetTransferMethod: "eip3009",
      routeKey: "POST /send-transactions",
    });

    const before = await balances();
    const paid = await api.post(
      "/send-transactions",
      {
        txId: prepared.txId,
        transactions: prepared.transactions.map((t) => ({ to: t.to, data: t.data, value: "0x0" })),
      },
      {
        "X-PAYMENT": await payWithEthers(payer, quote.accepts[0]),
      },
    );
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(paid.body.status).to.equal("success");
    const settlement = decodePaymentResponse(paid);
    expect(settlement).to.include({ success: true, network: "eip155:84532" });
    expect(settlement.payer.toLowerCase()).to.equal(payer.address.toLowerCase());
    const after = await balances();
    note("(2) relayed send paid with a hand-built ethers X-PAYMENT", before, after);
    expect(before.payer - after.payer).to.equal(PRICE);
    expect(after.payTo - before.payTo).to.equal(PRICE);

    const status = await api.get("/get-transaction-status", { txId: prepared.txId });
    expect(status.body).to.include({ status: "success", executionMode: "service-relayed" });
    expect(status.body.payments).to.have.length(1);
    expect(status.body.payments[0]).to.include({
      status: "settled",
      step: "send",
      settlementTransaction: settlement.transaction,
    });
    const tokenAddress = status.body.outcome.tokenAddress;
    const token = AgentToken__factory.connect(tokenAddress, providerFor(sandbox.baseSepolia));
    expect(await token.owner()).to.equal(sandbox.accounts[6].address);
    expect(await token.balanceOf(sandbox.accounts[6].address)).to.equal(parseUnits("1000", 18));
    const sent = status.body.transactions[0];
    expect(sent.from).to.equal(service.services.relayer.address(84532));

    // the same payment cannot pay again, nor can the txId be paid twice
    const replay = await api.post(
      "/send-transactions",
      { txId: (await relayedCreate("AGNX")).txId },
      {
        "X-PAYMENT": paid.body
          ? await payWithEthers(payer, quote.accepts[0], {
              nonce: (await service.services.payments.forBatch(prepared.txId))[0].authorizationNonce,
            })
          : "",
      },
    );
    expect(quoteOf(replay).error).to.match(/already used|verification failed/);
    expect(
      (
        await api.post(
          "/send-transactions",
          { txId: prepared.txId },
          { "X-PAYMENT": await payWithEthers(payer, quote.accepts[0]) },
        )
      ).status,
    ).to.equal(409);
    note("(3) replayed authorization, and a second payment for a paid txId", after, await balances());
    expect(await balances()).to.deep.equal(after);
  });

  it("the typed client pays for a relayed send through the official @x402/fetch client (an ethers signer) and gets the result", async () => {
    const prepared = await relayedCreate("FETCH");
    const paying = await payingClient(service.url, payer);
    const before = await balances();
    const sent = await send(paying, prepared.txId);
    expect(sent.httpStatus, JSON.stringify(sent.summary)).to.equal(200);
    expect(sent.summary).to.include({ success: true, status: "success" });
    expect(sent.settlement).to.include({ success: true, network: "eip155:84532" });
    expect(sent.summary.payment).to.include({ status: "settled", payer: payer.address.toLowerCase() });
    const after = await balances();
    note("(1) typed client + official @x402/fetch client, relayed send", before, after);
    expect(before.payer - after.payer).to.equal(PRICE);
    expect(after.payTo - before.payTo).to.equal(PRICE);

    // A viem account through @x402/fetch directly, as its documentation shows, pays the same way.
    const other = await relayedCreate("FETCV");
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: privateKeyToAccount(payer.privateKey as `0x${string}`) });
    client.setSpendControls({
      allowedAssets: [
        { network: "eip155:84532", asset: sandbox.deployments[84532].contracts.USDC, maxAmountPerPayment: "1000000" },
      ],
    } as never);
    const response = await wrapFetchWithPayment(fetch, client)(`${service.url}/send-transactions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ txId: other.txId }),
    });
    expect(response.status).to.equal(200);
    expect(response.headers.get("payment-response")).to.be.a("string");
    expect(before.payer - (await balances()).payer).to.equal(2n * PRICE);

    // A payment above the client's cap is refused by the client itself: nothing is signed, nothing moves.
    const capped = await payingClient(service.url, payer, "9999");
    const third = await relayedCreate("CAPD");
    const payerBefore = (await balances()).payer;
    const refused = await send(capped, third.txId).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(refused?.message).to.match(/maxAmountPerPayment/);
    expect((await balances()).payer).to.equal(payerBefore);
  });

  it("refuses replayed, under-paid, wrong-recipient, wrong-chain, expired and forged payments with 402; no USDC moves", async () => {
    const prepared = await relayedCreate("REFUSE");
    const quote = quoteOf(await api.post("/send-transactions", { txId: prepared.txId })).accepts[0];
    const now = Math.floor(Date.now() / 1000);
    const sepoliaUsdc = sandbox.deployments[11155111].contracts.USDC;
    const cases: [string, string, RegExp][] = [
      ["under-paid", await payWithEthers(payer, quote, { amount: "9999" }), /wrong amount 9999/],
      ["under-paid authorization", await payWithEthers(payer, quote, { value: "9999" }), /authorization value 9999/],
      ["wrong recipient", await payWithEthers(payer, quote, { payTo: sandbox.accounts[3].address }), /wrong recipient/],
      [
        "wrong chain",
        await payWithEthers(payer, quote, { network: "eip155:11155111", asset: sepoliaUsdc }),
        /wrong network eip155:11155111/,
      ],
      [
        "expired",
        await payWithEthers(payer, quote, { validAfter: now - 900, validBefore: now - 300 }),
        /verification failed/,
      ],
      [
        "not yet valid",
        await payWithEthers(payer, quote, { validAfter: now + 3600, validBefore: now + 7200 }),
        /verification failed/,
      ],
      [
        "forged",
        (await payWithEthers(new Wallet(Wallet.createRandom().privateKey), quote)).replace(/.{8}$/, ""),
        /invalid payment header|verification failed/,
      ],
      ["not base64", "%%%not-base64%%%", /invalid payment header/],
      ["signed for another chain", await payWithEthers(payer, quote, { chainId: 11155111 }), /verification failed/],
      [
        "the payer's authorization signed by another key",
        await payWithEthers(new Wallet(Wallet.createRandom().privateKey), quote, { from: payer.address }),
        /verification failed/,
      ],
    ];
    const before = await balances();
    for (const [label, header, reason] of cases) {
      const res = await api.post("/send-transactions", { txId: prepared.txId }, { "X-PAYMENT": header });
      expect(res.status, label).to.equal(402);
      expect(quoteOf(res).error, label).to.match(reason);
      expect(res.body.error.code, label).to.equal("PAYMENT_REQUIRED");
    }
    note(
      "(3) under-paid, wrong recipient, wrong chain, expired, not yet valid, forged, malformed",
      before,
      await balances(),
    );
    const broke = new Wallet(Wallet.createRandom().privateKey);
    const noFunds = await api.post(
      "/send-transactions",
      { txId: prepared.txId },
      { "payment-signature": await payWithEthers(broke, quote) },
    );
    expect(quoteOf(noFunds).error).to.match(/verification failed: .*insufficient/i);
    expect(await balances()).to.deep.equal(before);
    expect((await api.get("/get-transaction-status", { txId: prepared.txId })).body.status).to.equal("prepared");

    // a valid payment still works, then replaying it is refused
    const header = await payWithEthers(payer, quote);
    expect((await api.post("/send-transactions", { txId: prepared.txId }, { "x-payment": header })).status).to.equal(
      200,
    );
    const other = await relayedCreate("REPLAY");
    const replay = await api.post("/send-transactions", { txId: other.txId }, { "X-Payment": header });
    expect(replay.status).to.equal(402);
    expect((await balances()).payer).to.equal(before.payer - PRICE);
  });

  it("an operation that would revert is refused before anything is sent: the payment released, the relayer spends nothing", async () => {
    const provider = providerFor(sandbox.baseSepolia);
    const relayer = service.services.relayer.address(84532);
    const factoryAddress = sandbox.deployments[84532].contracts.AgentTokenFactory;
    const prepared = await relayedCreate("WOULD");
    const quote = quoteOf(await api.post("/send-transactions", { txId: prepared.txId })).accepts[0];
    const before = await balances();
    const relayerBefore = {
      nonce: await provider.getTransactionCount(relayer, "latest"),
      eth: await provider.getBalance(relayer),
    };
    // The factory reverts every call while this send runs (its code swapped for `revert(0, 0)`, put back after): the
    // simulation just before signing sees it.
    const code = await provider.getCode(factoryAddress);
    await sandbox.baseSepolia.provider.request({ method: "hardhat_setCode", params: [factoryAddress, "0x60006000fd"] });
    let sent;
    try {
      sent = await api.post(
        "/send-transactions",
        { txId: prepared.txId },
        { "X-PAYMENT": await payWithEthers(payer, quote) },
      );
    } finally {
      await sandbox.baseSepolia.provider.request({ method: "hardhat_setCode", params: [factoryAddress, code] });
    }
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(sent.body.status).to.equal("rejected");
    expect(sent.body.error).to.match(/^transaction 1 would revert: .*; nothing was sent$/);
    expect(sent.body.txHashes ?? []).to.deep.equal([]);
    expect(sent.body.payment).to.include({ status: "released", settlementTransaction: null });
    expect(sent.headers.get("payment-response")).to.equal(null);
    note("(4) a relayed operation that would revert: refused unsigned, payment released", before, await balances());
    expect(await balances()).to.deep.equal(before);
    expect(await provider.getTransactionCount(relayer, "latest")).to.equal(relayerBefore.nonce);
    expect(await provider.getBalance(relayer)).to.equal(relayerBefore.eth);
  });

  it("same chain: one transaction carries the payment and the operation (the relayer's EIP-7702 delegate), no settlement transaction of its own", async () => {
    const provider = providerFor(sandbox.baseSepolia);
    const relayer = service.services.relayer.address(84532);
    const delegate = sandbox.deployments[84532].contracts.PaidRelayDelegate!;
    expect(service.services.relayer.delegate(84532)).to.equal(delegate);
    expect((await provider.getCode(relayer)).toLowerCase()).to.equal(`0xef0100${delegate.slice(2).toLowerCase()}`);
    const settlementNonce = await provider.getTransactionCount(payTo, "latest");
    const relayerNonce = await provider.getTransactionCount(relayer, "latest");

    const prepared = await relayedCreate("ONETX");
    const quote = quoteOf(await api.post("/send-transactions", { txId: prepared.txId })).accepts[0];
    const before = await balances();
    const paid = await api.post(
      "/send-transactions",
      { txId: prepared.txId },
      { "X-PAYMENT": await payWithEthers(payer, quote) },
    );
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    const settlement = decodePaymentResponse(paid);
    expect(paid.body.txHashes).to.have.length(1);
    expect(settlement).to.include({ success: true, transaction: paid.body.txHashes[0] }); // the settlement IS the operation's transaction

    const receipt = (await provider.getTransactionReceipt(settlement.transaction))!;
    expect(receipt.status).to.equal(1);
    expect(receipt.from).to.equal(relayer);
    expect(receipt.to).to.equal(relayer); // sent to itself: its delegate settles, then calls the factory
    const usdc = usdcBase();
    const transfers = receipt.logs
      .filter((l) => l.address === usdc.target)
      .map((l) => usdc.interface.parseLog(l))
      .filter((e) => e?.name === "Transfer");
    expect(transfers.map((e) => [e!.args.from, e!.args.to, e!.args.value])).to.deep.equal([
      [payer.address, payTo, PRICE],
    ]);
    const factory = AgentTokenFactory__factory.createInterface();
    const factoryAddress = sandbox.deployments[84532].contracts.AgentTokenFactory;
    const created = receipt.logs
      .filter((l) => l.address === factoryAddress)
      .map((l) => factory.parseLog(l))
      .find((e) => e?.name === "AgentTokenCreated");
    expect(created, "the operation's event in the same transaction").to.not.equal(undefined);
    const paidCall = receipt.logs
      .filter((l) => l.address === relayer)
      .map((l) => PaidRelayDelegate__factory.createInterface().parseLog(l));
    expect(paidCall.map((e) => [e!.name, e!.args.payer, e!.args.target])).to.deep.equal([
      ["PaidCall", payer.address, factoryAddress],
    ]);

    const after = await balances();
    expect(before.payer - after.payer).to.equal(PRICE);
    expect(after.payTo - before.payTo).to.equal(PRICE);
    expect(await provider.getTransactionCount(payTo, "latest")).to.equal(settlementNonce); // the settlement key sent nothing
    expect(await provider.getTransactionCount(relayer, "latest")).to.equal(relayerNonce + 1); // one transaction for both
    const [payment] = await service.services.payments.forBatch(prepared.txId);
    expect(payment).to.include({ status: "settled", settleInOperation: true });
    const status = (await api.get("/get-transaction-status", { txId: prepared.txId })).body;
    expect(status.payments[0]).to.include({ status: "settled", settlementTransaction: settlement.transaction });
  });

  it("same chain: an operation that reverts on chain reverts its payment with it; nothing charged, the payment released", async () => {
    const provider = providerFor(sandbox.baseSepolia);
    const relayer = service.services.relayer.address(84532);
    const factoryAddress = sandbox.deployments[84532].contracts.AgentTokenFactory;
    const prepared = await relayedCreate("REVRT");
    const quote = quoteOf(await api.post("/send-transactions", { txId: prepared.txId })).accepts[0];
    const before = await balances();
    // Simulated, signed and sent while the factory works; it reverts when mined (its code swapped for `revert(0, 0)`
    // while the transaction waits in the pool, put back after).
    const code = await provider.getCode(factoryAddress);
    const base = sandbox.baseSepolia.provider;
    await base.request({ method: "evm_setAutomine", params: [false] });
    let sent;
    try {
      const sending = api.post(
        "/send-transactions",
        { txId: prepared.txId },
        { "X-PAYMENT": await payWithEthers(payer, quote) },
      );
      for (
        let i = 0;
        i < 200 && !(await service.services.payments.forBatch(prepared.txId)).some((p) => p.settleInOperation);
        i++
      )
        await new Promise((r) => setTimeout(r, 25));
      await new Promise((r) => setTimeout(r, 200)); // its broadcast follows the commit that bound the payment
      await base.request({ method: "hardhat_setCode", params: [factoryAddress, "0x60006000fd"] });
      await base.request({ method: "evm_mine", params: [] });
      sent = await sending;
    } finally {
      await base.request({ method: "hardhat_setCode", params: [factoryAddress, code] });
      await base.request({ method: "evm_setAutomine", params: [true] });
    }
    expect(sent.body.status, JSON.stringify(sent.body)).to.equal("rejected");
    expect(sent.body.payment).to.include({ status: "released", settlementTransaction: null });
    expect(sent.headers.get("payment-response")).to.equal(null);
    const [payment] = await service.services.payments.forBatch(prepared.txId);
    expect(payment).to.include({ status: "released", settleInOperation: true });
    const hash = sent.body.txHashes[0];
    const receipt = (await provider.getTransactionReceipt(hash))!;
    expect(receipt.status).to.equal(0); // mined and reverted: the operation and the payment together
    expect(receipt.to).to.equal(relayer);
    expect(await usdcBase().authorizationState(payer.address, payment.authorizationNonce)).to.equal(false);
    note("reverted relayed operation (payment in the same transaction)", before, await balances());
    expect(await balances()).to.deep.equal(before);
  });

  it("client-signed agentic calls pay half at prepare and half at send; a key replaces payment on both steps", async () => {
    const body = {
      method: "agentCreateToken",
      chainId: "84532",
      signerAddress: payer.address,
      name: "Half",
      symbol: "HALF",
      agentWallet: payer.address,
    };
    await service.services.signers.add(payer.address, "all-keys"); // rule 3 holds with or without a key
    const challenge = await api.post("/prepare-transactions", body, asClient());
    const quote = quoteOf(challenge).accepts[0];
    expect(quote).to.include({ amount: "5000" });
    expect(quote.extra.routeKey).to.equal("POST /prepare-transactions");
    const before = await balances();
    const prepared = await api.post("/prepare-transactions", body, {
      ...asClient(),
      "X-PAYMENT": await payWithEthers(payer, quote),
    });
    expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
    expect(decodePaymentResponse(prepared)).to.include({ success: true });
    expect(prepared.body.x402Requirements.amount).to.equal("5000");
    const signed = [await payer.signTransaction(prepared.body.transactions[0])];
    const sendQuote = quoteOf(
      await api.post("/send-transactions", { txId: prepared.body.txId, signedTransactions: signed }),
    ).accepts[0];
    expect(sendQuote.amount).to.equal("5000");
    const sent = await api.post(
      "/send-transactions",
      { txId: prepared.body.txId, signedTransactions: signed },
      { "X-PAYMENT": await payWithEthers(payer, sendQuote) },
    );
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(sent.body.status).to.equal("success");
    note("client-signed agentic call: 5000 at prepare + 5000 at send", before, await balances());
    expect(before.payer - (await balances()).payer).to.equal(PRICE);

    // A send that would be paid learns that its transaction belongs to another batch before it is asked to pay.
    const otherQuote = quoteOf(await api.post("/prepare-transactions", { ...body, symbol: "HALFB" }, asClient()))
      .accepts[0];
    const other = await api.post(
      "/prepare-transactions",
      { ...body, symbol: "HALFB" },
      { ...asClient(), "X-PAYMENT": await payWithEthers(payer, otherQuote) },
    );
    expect(other.status, JSON.stringify(other.body)).to.equal(200);
    const replay = await api.post("/send-transactions", { txId: other.body.txId, txHash: sent.body.txHashes[0] });
    expect(replay.status, JSON.stringify(replay.body)).to.equal(409);
    expect(replay.body.error.details.txId).to.equal(prepared.body.txId);

    const { key } = await service.services.apiKeys.create({ email: "agent@x402.test", plan: "Starter" });
    const keyed = api.withKey(key);
    const withKeyBefore = await balances();
    const kp = await keyed.post(
      "/prepare-transactions",
      { ...body, symbol: "KEYED" },
      { "X-PAYMENT": "ignored-when-a-key-is-present" },
    );
    expect(kp.status, JSON.stringify(kp.body)).to.equal(200);
    const ks = await keyed.post("/send-transactions", {
      txId: kp.body.txId,
      signedTransactions: [await payer.signTransaction(kp.body.transactions[0])],
    });
    expect(ks.status).to.equal(200);
    expect(await balances()).to.deep.equal(withKeyBefore);
  });
});
