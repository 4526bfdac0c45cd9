// tier: browser
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { Wallet, parseEther, type JsonRpcProvider } from "ethers";
import { BKN__factory, USDC__factory } from "../../typechain-types";
import { launchChromium } from "../helpers/browser";
import { addOperator, ConsoleClient, screenshot, seriousViolations, signInWithKeyboard } from "../helpers/console";
import { distinctClient } from "../helpers/relayed";
import { StallableRpc } from "../helpers/stallable-rpc";
import { createOwnSandbox, providerFor, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";
import { payWithEthers, quoteOf } from "../helpers/x402";

/**
 * Refunds for failures of ours (issue 50, item 6), without a refund wallet: a faucet claim whose payment is settled first
 * on Base Sepolia, then the relayer has no ETH left on Sepolia for its transaction: the node refuses it, the batch ends
 * rejected, and the payment, settled, is owed back — the status, the events and the console say so; an operator pays
 * it and marks it with a transaction the service checks on chain. A failure of the payer's stays charged
 * (payment-integrity.e2e.test.ts). The refund wallet paying it by itself, once, with two instances on one database:
 * test/postgres/refunds.test.ts.
 */

const BLOCK_TIME = 1;
const PRICE = 10_000n; // 0.01 USDC: a faucet claim
const SEPOLIA = 11155111;
const BASE = 84532;

describe(`e2e: refunds owed after a failure of ours, paid by an operator (chains mining every ${BLOCK_TIME} s)`, function () {
  this.timeout(240_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let base: JsonRpcProvider;
  let sepolia: JsonRpcProvider;
  const password = "ledger compass thistle marble";

  const usdc = () => USDC__factory.connect(sandbox.deployments[BASE].contracts.USDC, base);
  const relayer = () => sandbox.accounts[RELAYER_INDEX].address;
  const until = async (what: string, check: () => Promise<boolean>, ms = 60_000) => {
    for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100)))
      if (await check()) return;
    throw new Error(`timed out waiting for ${what}`);
  };
  const statusOf = async (txId: string) => (await api.get("/get-transaction-status", { txId })).body;

  before(async () => {
    sandbox = await createOwnSandbox({ blockTime: BLOCK_TIME });
    service = await startTestService(sandbox, { env: { SEND_WAIT_MS: "30000" } });
    api = service.api;
    base = providerFor(sandbox.baseSepolia);
    sepolia = providerFor(sandbox.sepolia);
    await addOperator(service.services, "treasurer@refunds.test", "admin", password);
    await addOperator(service.services, "watcher@refunds.test", "viewer", password);
  });
  after(async () => {
    await service?.stop();
    base?.destroy();
    sepolia?.destroy();
    await sandbox?.close();
  });

  it("the relayer emptied of ETH after the payment settled: rejected, the payment owed back (status, events, console); an operator pays and marks it once", async () => {
    const funder = sandbox.accounts[3].connect(base);
    const payer = new Wallet(Wallet.createRandom().privateKey, base);
    await (await funder.sendTransaction({ to: payer.address, value: parseEther("1") })).wait();
    await (await USDC__factory.connect(await usdc().getAddress(), funder).transfer(payer.address, PRICE)).wait();
    const recipient = Wallet.createRandom().address;
    const quote = quoteOf(
      await api.post("/faucet/bkn", { recipientAddress: recipient }, { "Idempotency-Key": randomUUID() }),
    ).accepts[0];
    const relayerEth = await sepolia.getBalance(relayer());

    // The payment chain held still: the claim's settlement waits in its pool (the claim was checked and simulated
    // before it), the relayer loses its ETH on Sepolia, then the settlement is mined.
    await sandbox.baseSepolia.provider.request({ method: "evm_setIntervalMining", params: [0] });
    let claimed;
    try {
      claimed = api.post(
        "/faucet/bkn",
        { recipientAddress: recipient },
        {
          "Idempotency-Key": randomUUID(),
          "X-PAYMENT": await payWithEthers(payer, quote),
          ...distinctClient(),
        },
      );
      await until("the claim's settlement in the pool", async () => {
        const [row] = await service.services.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM payments WHERE payer = $1 AND settle_tx_hash IS NOT NULL",
          [payer.address.toLowerCase()],
        );
        return row.n === 1;
      });
      await sandbox.sepolia.provider.request({ method: "hardhat_setBalance", params: [relayer(), "0x0"] });
      await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
    } finally {
      await sandbox.baseSepolia.provider.request({ method: "evm_setIntervalMining", params: [BLOCK_TIME * 1000] });
    }
    const res = await claimed;
    expect([200, 202], JSON.stringify(res.body)).to.include(res.status);
    const txId: string = res.body.txId;
    await until("the claim to end", async () => (await statusOf(txId)).status === "rejected");
    const status = await statusOf(txId);
    expect(status.error).to.match(/insufficient funds|enough funds/i);
    const [payment] = status.payments;
    expect(payment).to.deep.include({ status: "settled", step: "faucet" });
    expect(payment.refund).to.deep.include({ status: "owed", amount: PRICE.toString(), transaction: null });
    expect(payment.refund.reason).to.equal(status.error);
    expect(await usdc().balanceOf(payer.address), "charged, for now").to.equal(0n);
    const events = await service.services.db.query<{ type: string; data: any }>(
      "SELECT type, data FROM events WHERE tx_id = $1 ORDER BY id",
      [txId],
    );
    expect(events.map((e) => e.type)).to.include.members([
      "payment.settled",
      "transaction.failed",
      "payment.refund_owed",
    ]);
    expect(events.find((e) => e.type === "payment.refund_owed")!.data.payment.refund.status).to.equal("owed");

    // The console lists it, with nobody to pay it automatically.
    const viewer = new ConsoleClient(service.url);
    await viewer.signIn({ email: "watcher@refunds.test", password });
    const listed = await viewer.get("/console/api/refunds?status=owed");
    expect(listed.status, JSON.stringify(listed.body)).to.equal(200);
    expect(listed.body.refundWallet).to.equal(null);
    const refund = listed.body.items.find((r: { txId: string }) => r.txId === txId);
    expect(refund).to.deep.include({ status: "owed", payer: payer.address.toLowerCase(), amount: PRICE.toString() });
    expect(listed.body.owed).to.deep.include({
      asset: (await usdc().getAddress()).toLowerCase(),
      amount: PRICE.toString(),
    });
    const page = await fetch(`${service.url}/console/refunds`, { headers: { cookie: viewer.setCookie! } });
    const html = await page.text();
    expect(html).to.include("No refund wallet is configured").and.include(txId.slice(0, 14));
    const mark = (client: ConsoleClient, transaction: string) =>
      client.post(`/console/api/refunds/${refund.paymentId}/mark-paid`, { transaction });
    expect((await mark(viewer, `0x${"ab".repeat(32)}`)).status, "a viewer may not").to.equal(403);

    // The treasurer pays it from a wallet of theirs; a transaction that pays something else is refused.
    const treasurer = new ConsoleClient(service.url);
    await treasurer.signIn({ email: "treasurer@refunds.test", password });
    const fromTreasury = USDC__factory.connect(await usdc().getAddress(), funder);
    const tooLittle = await (await fromTreasury.transfer(payer.address, PRICE - 1n)).wait();
    const wrong = await mark(treasurer, tooLittle!.hash);
    expect(wrong.status).to.equal(400);
    expect(wrong.body.error).to.include({ param: "transaction" });
    expect((await mark(treasurer, `0x${"cd".repeat(32)}`)).status, "not mined").to.equal(400);
    const paid = await (await fromTreasury.transfer(payer.address, PRICE)).wait();
    const marked = await mark(treasurer, paid!.hash);
    expect(marked.status, JSON.stringify(marked.body)).to.equal(200);
    expect(marked.body).to.deep.include({
      status: "refunded",
      transaction: paid!.hash.toLowerCase(),
      refundedBy: "treasurer@refunds.test",
    });
    const again = await mark(treasurer, paid!.hash);
    expect(again.status, "paid once").to.equal(409);

    const after = (await statusOf(txId)).payments[0];
    expect(after.refund).to.deep.include({ status: "refunded", transaction: paid!.hash.toLowerCase() });
    const [audited] = await service.services.auditLog.list({ limit: 1, action: "payments.refund-marked" });
    expect(audited).to.deep.include({ actor: "treasurer@refunds.test", target: refund.paymentId });
    const refundedEvent = await service.services.db.query<{ hash: string }>(
      "SELECT hash FROM events WHERE tx_id = $1 AND type = 'payment.refunded'",
      [txId],
    );
    expect(refundedEvent.map((e) => e.hash)).to.deep.equal([paid!.hash.toLowerCase()]);
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).to.match(/^tak_x402_refunds\{state="refunded"\} 1$/m);
    expect(metrics).to.match(/^tak_x402_refunds_total\{outcome="owed"\} 1$/m);
    expect(
      await BKN__factory.connect(sandbox.deployments[SEPOLIA].contracts.BKN, sepolia).balanceOf(recipient),
    ).to.equal(0n);
    // The relayer gets its ETH back for the other tests of this chain.
    await sandbox.sepolia.provider.request({
      method: "hardhat_setBalance",
      params: [relayer(), `0x${relayerEth.toString(16)}`],
    });
  });

  it("an operator cancels a paid claim's relayed transaction that waits to be mined: a failure of ours, the payment is owed back", async () => {
    const funder = sandbox.accounts[3].connect(base);
    const payer = new Wallet(Wallet.createRandom().privateKey, base);
    await (await funder.sendTransaction({ to: payer.address, value: parseEther("1") })).wait();
    await (await USDC__factory.connect(await usdc().getAddress(), funder).transfer(payer.address, PRICE)).wait();
    const recipient = Wallet.createRandom().address;
    const quote = quoteOf(
      await api.post("/faucet/bkn", { recipientAddress: recipient }, { "Idempotency-Key": randomUUID() }),
    ).accepts[0];
    const treasurer = new ConsoleClient(service.url);
    await treasurer.signIn({ email: "treasurer@refunds.test", password });
    // Sepolia held still: the relayer's transaction waits in its pool once the payment is settled on Base Sepolia.
    await sandbox.sepolia.provider.request({ method: "evm_setIntervalMining", params: [0] });
    let txId: string;
    try {
      const claimed = api.post(
        "/faucet/bkn",
        { recipientAddress: recipient },
        { "Idempotency-Key": randomUUID(), "X-PAYMENT": await payWithEthers(payer, quote), ...distinctClient() },
      );
      await until("the claim's transaction in Sepolia's pool", async () => {
        const [row] = await service.services.db.query<{ tx_id: string; tx_hash: string | null }>(
          "SELECT b.tx_id, t.tx_hash FROM payments p JOIN batch_transactions t ON t.tx_id = p.tx_id JOIN batches b ON b.tx_id = p.tx_id WHERE p.payer = $1",
          [payer.address.toLowerCase()],
        );
        txId = row?.tx_id;
        return !!row?.tx_hash && (await sepolia.getTransaction(row.tx_hash)) !== null;
      });
      expect((await service.services.payments.forBatch(txId!))[0].status).to.equal("settled");
      const cancelled = await treasurer.post(`/console/api/transactions/${txId!}/cancel`, { index: 0 });
      expect(cancelled.status, JSON.stringify(cancelled.body)).to.equal(200);
      await sandbox.sepolia.provider.request({ method: "evm_mine", params: [] });
      await claimed;
    } finally {
      await sandbox.sepolia.provider.request({ method: "evm_setIntervalMining", params: [BLOCK_TIME * 1000] });
    }
    await until("the claim to end", async () => (await statusOf(txId!)).status === "rejected");
    const status = await statusOf(txId!);
    expect(status.error).to.include("cancelled by the operator");
    expect(status.payments[0]).to.deep.include({ status: "settled" });
    expect(status.payments[0].refund).to.deep.include({ status: "owed", amount: PRICE.toString() });
    const listed = await treasurer.get("/console/api/refunds?status=owed");
    expect(listed.body.items.map((r: { txId: string }) => r.txId)).to.include(txId!);
  });

  it("in the browser: the Refunds page lists what is owed; an admin marks one paid with their transaction (confirmed first); the payment page shows it", async () => {
    const [owed] = await service.services.paymentRefunds.page({ limit: 1, status: "owed" });
    expect(owed, "the cancelled claim's refund").to.not.equal(undefined);
    const paid = await (
      await USDC__factory.connect(await usdc().getAddress(), sandbox.accounts[3].connect(base)).transfer(
        owed.payer,
        BigInt(owed.amount),
      )
    ).wait();
    const browser = await launchChromium();
    const errors: string[] = [];
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      page.on("pageerror", (error) => errors.push(error.message));
      await signInWithKeyboard(page, service.url, "treasurer@refunds.test", password);
      await page.getByRole("link", { name: "Refunds" }).click();
      await page.waitForURL(`${service.url}/console/refunds`);
      expect(await page.textContent("main"))
        .to.include("No refund wallet is configured")
        .and.include("Still owed");
      expect(await seriousViolations(page)).to.deep.equal([]);
      await screenshot(page, "console-refunds");
      await page.fill(`#tx-${owed.paymentId}`, paid!.hash);
      await page.getByRole("button", { name: "Mark paid" }).click();
      await page.locator("dialog#confirm").waitFor({ state: "visible" });
      expect(await page.textContent("#confirm-text")).to.include(owed.payer);
      await Promise.all([page.waitForEvent("load"), page.click("#confirm-ok")]);
      await page.locator("#notice.success").waitFor();
      expect(await page.textContent("#notice")).to.include("The refund is marked paid.");
      expect((await service.services.paymentRefunds.get(owed.paymentId))?.status).to.equal("refunded");
      await page.goto(`${service.url}/console/payments/${owed.paymentId}`);
      const detail = (await page.textContent("main"))!;
      expect(detail)
        .to.include("Owed back")
        .and.include(paid!.hash.toLowerCase())
        .and.include("treasurer@refunds.test");
      expect(await seriousViolations(page)).to.deep.equal([]);
    } finally {
      await browser.close();
    }
    expect(errors, "page errors").to.deep.equal([]);
  });

  it("a chain that stops answering after the payment settled, before anything was sent: abandoned after CHAIN_UNREACHABLE_GIVE_UP_MS, the payment owed back", async () => {
    const rpc = await StallableRpc.start(sandbox.sepolia.url);
    const stalling = await startTestService(sandbox, {
      env: {
        [`RPC_URL_${SEPOLIA}`]: rpc.url,
        RPC_TIMEOUT_MS: "300",
        RPC_RETRY_BUDGET_MS: "600",
        CHAIN_UNREACHABLE_GIVE_UP_MS: "3000",
        SEND_WAIT_MS: "1000",
      },
    });
    try {
      const funder = sandbox.accounts[3].connect(base);
      const payer = new Wallet(Wallet.createRandom().privateKey, base);
      await (await funder.sendTransaction({ to: payer.address, value: parseEther("1") })).wait();
      await (await USDC__factory.connect(await usdc().getAddress(), funder).transfer(payer.address, PRICE)).wait();
      const recipient = Wallet.createRandom().address;
      const quote = quoteOf(
        await stalling.api.post("/faucet/bkn", { recipientAddress: recipient }, { "Idempotency-Key": randomUUID() }),
      ).accepts[0];
      // Base Sepolia held: the settlement waits in its pool (the claim was simulated on Sepolia before it); Sepolia then
      // stops answering, and the settlement is mined.
      await sandbox.baseSepolia.provider.request({ method: "evm_setIntervalMining", params: [0] });
      let claimed;
      try {
        claimed = stalling.api.post(
          "/faucet/bkn",
          { recipientAddress: recipient },
          { "Idempotency-Key": randomUUID(), "X-PAYMENT": await payWithEthers(payer, quote), ...distinctClient() },
        );
        // Awaited below; should a wait in between fail, the test fails with that error, not with this one unhandled.
        claimed.catch(() => undefined);
        await until("the claim's settlement in the pool", async () => {
          const [row] = await stalling.services.db.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM payments WHERE payer = $1 AND settle_tx_hash IS NOT NULL",
            [payer.address.toLowerCase()],
          );
          return row.n === 1;
        });
        rpc.stall();
        await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
      } finally {
        await sandbox.baseSepolia.provider.request({ method: "evm_setIntervalMining", params: [BLOCK_TIME * 1000] });
      }
      await claimed; // its answer reads the chain too: a 503 while it does not answer
      const [{ tx_id: txId }] = await stalling.services.db.query<{ tx_id: string }>(
        "SELECT tx_id FROM payments WHERE payer = $1",
        [payer.address.toLowerCase()],
      );
      await until(
        "the claim abandoned",
        async () => (await stalling.services.batches.get(txId))?.status === "rejected",
      );
      // Back online, nothing of it is sent: the relayer's nonce on Sepolia does not move.
      const relayerNonce = await sepolia.getTransactionCount(relayer());
      rpc.resume();
      const ended = (await stalling.api.get("/get-transaction-status", { txId })).body;
      expect(ended.error).to.match(
        /^chain 11155111 did not answer for \d+ s before anything was sent; nothing was sent$/,
      );
      expect(ended.transactions[0]).to.include({ status: "rejected", hash: null });
      expect(ended.payments[0]).to.deep.include({ status: "settled" });
      expect(ended.payments[0].refund).to.deep.include({ status: "owed", amount: PRICE.toString() });
      await new Promise((r) => setTimeout(r, 3_000));
      expect(await sepolia.getTransactionCount(relayer())).to.equal(relayerNonce);
      expect(
        await BKN__factory.connect(sandbox.deployments[SEPOLIA].contracts.BKN, sepolia).balanceOf(recipient),
      ).to.equal(0n);
    } finally {
      rpc.resume();
      await stalling.stop();
      await rpc.close();
    }
  });
});
