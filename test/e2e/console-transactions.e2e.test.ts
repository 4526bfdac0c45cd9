// tier: browser
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { id, Wallet } from "ethers";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { USDC__factory } from "../../typechain-types";
import { launchChromium } from "../helpers/browser";
import { addOperator, seriousViolations, screenshot, signInWithKeyboard } from "../helpers/console";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { createOwnSandbox, providerFor, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";
import { payWithEthers, quoteOf } from "../helpers/x402";

/**
 * The console's transactions, payments and overview pages in Chromium (issue 39, parts 2, 3 and 7; issue 50, item 3),
 * on chains of the test's own whose mining it stops: an operator finds a pending relayed batch by its hash, sends it
 * again, replaces it with higher fees and cancels it (each behind the confirmation dialog, each in the audit log); the
 * page then says the cancellation is live and offers only what still makes sense; the batch ends rejected with its
 * payment released and the no-op's block shown. A relayed operation that reverts when mined shows its block and its
 * reason decoded with the contracts' errors. Then the payments of paid faucet claims settled together in one Multicall3
 * transaction, each showing the others; then the overview of it all. Every page: no serious or critical axe-core
 * violation, and a screenshot.
 */
describe("e2e (browser): the console's transactions, payments and overview", function () {
  this.timeout(240_000);
  let sandbox: Sandbox;
  let service: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const password = "operator console e2e password";
  const pageErrors: string[] = [];
  const external: string[] = [];
  const mining = (on: boolean) => sandbox.baseSepolia.provider.request({ method: "evm_setAutomine", params: [on] });

  before(async () => {
    sandbox = await createOwnSandbox();
    service = await startTestService(sandbox, { env: { SEND_WAIT_MS: "1500", X402_SETTLEMENT_BATCH_MS: "1500" } });
    await addOperator(service.services, "ops@console.test", "admin", password);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.on("request", (request) => {
      if (!request.url().startsWith(service.url)) external.push(request.url());
    });
    page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error" && !/status of 4\d\d/.test(message.text())) pageErrors.push(message.text());
    });
    await signInWithKeyboard(page, service.url, "ops@console.test", password);
  });
  after(async () => {
    await mining(true).catch(() => undefined);
    await context?.close();
    await browser?.close();
    await service?.stop();
    await sandbox?.close();
  });
  afterEach(() => {
    expect(pageErrors, "page errors").to.deep.equal([]);
    expect(external, "requests that left the service").to.deep.equal([]);
  });

  /** Clicks an action's button, confirms in the dialog with the keyboard, and waits for the page to come back. */
  async function actAndConfirm(button: string): Promise<void> {
    await page.getByRole("button", { name: button }).first().click();
    const dialog = page.locator("dialog#confirm");
    await dialog.waitFor({ state: "visible" });
    expect(await page.evaluate("document.activeElement && document.activeElement.id")).to.equal("confirm-cancel");
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement && document.activeElement.id")).to.equal("confirm-ok");
    await Promise.all([page.waitForEvent("load"), page.keyboard.press("Enter")]);
    await page.locator("#notice.success").waitFor();
  }

  it("transactions: a pending relayed batch found by its hash is sent again, replaced with higher fees and cancelled", async () => {
    const payer = sandbox.accounts[3];
    const provider = providerFor(sandbox.baseSepolia);
    const usdc = USDC__factory.connect(sandbox.deployments[84532].contracts.USDC, provider);
    const relayer = sandbox.accounts[RELAYER_INDEX].address;
    const txId = await prepareRelayedToken(service.api, "CNSL", sandbox.accounts[6].address);
    const before = {
      paid: await usdc.balanceOf(payer.address),
      nonce: await provider.getTransactionCount(relayer, "latest"),
    };
    await mining(false);
    const sent = await payRelayedSend(service.api, txId, payer);
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    const hash: string = sent.body.txHashes[0];

    // Found by its hash from the search box (keyboard: type, Enter): the batch's own page.
    await page.goto(`${service.url}/console/transactions`);
    await page.fill("#f-q", hash);
    await Promise.all([page.waitForURL(`${service.url}/console/transactions/${txId}`), page.press("#f-q", "Enter")]);
    expect(await page.textContent("main"))
      .to.include(hash)
      .and.include("agentCreateToken")
      .and.include("service-relayed");
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, "console-transaction");

    await actAndConfirm("Re-broadcast now");
    expect(await page.textContent("#notice")).to.include("sent again");
    await actAndConfirm("Replace with higher fees");
    const replaced = (await service.api.get("/get-transaction-status", { txId })).body;
    expect(replaced.txHash).to.not.equal(hash);
    expect(replaced.transactions[0].replacedHashes).to.deep.equal([hash]);
    expect(await page.textContent("main"))
      .to.include(replaced.txHash)
      .and.include("operator: transaction.replace");

    await actAndConfirm("Cancel");
    const cancelHash: string = (await service.api.get("/get-transaction-status", { txId })).body.txHash;
    expect(cancelHash).to.not.equal(replaced.txHash);
    // The page says what is live now and offers only what still makes sense for a cancellation.
    const cancelling = page.locator("section.transaction").first();
    expect(await cancelling.getAttribute("data-state")).to.equal("cancelling");
    expect(await cancelling.locator(".state-text").textContent()).to.include(
      `Being cancelled: the no-op ${cancelHash} at nonce`,
    );
    expect(await page.getByRole("button", { name: "Cancel", exact: true }).count()).to.equal(0);
    expect(await page.getByRole("button", { name: "Replace the cancellation with higher fees" }).count()).to.equal(1);
    expect(await page.getByRole("button", { name: "Re-broadcast the cancellation" }).count()).to.equal(1);
    const again = await fetch(`${service.url}/console/api/transactions/${txId}/cancel`, {
      method: "POST",
      headers: {
        cookie: (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; "),
        "content-type": "application/json",
        "x-csrf-token": (await page.getAttribute('meta[name="csrf-token"]', "content"))!,
        origin: service.url,
      },
      body: JSON.stringify({ index: 0 }),
    });
    expect(again.status).to.equal(409);
    expect(((await again.json()) as { message: string }).message).to.include("already being cancelled");
    await screenshot(page, "console-transaction-cancelling");
    await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
    await mining(true);
    let status: any;
    for (let i = 0; i < 100; i++) {
      status = (await service.api.get("/get-transaction-status", { txId })).body;
      if (status.status !== "pending" && status.payments?.[0]?.status === "released") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status.status).to.equal("rejected");
    expect(status.transactions[0].error).to.include("cancelled by the operator");
    expect(status.payments[0]).to.include({ status: "released" });
    // The no-op took the nonce, the operation never ran and nothing was charged.
    expect(await provider.getTransactionCount(relayer, "latest")).to.equal(before.nonce + 1);
    expect((await provider.getTransactionReceipt(cancelHash))?.status).to.equal(1);
    expect(await usdc.balanceOf(payer.address)).to.equal(before.paid);

    await page.reload();
    const main = (await page.textContent("main"))!;
    expect(main)
      .to.include("operator: transaction.cancel")
      .and.include("cancelled by the operator")
      .and.include("payment.released");
    const cancelled = page.locator("section.transaction").first();
    expect(await cancelled.getAttribute("data-state")).to.equal("cancelled");
    const block = (await provider.getTransactionReceipt(cancelHash))!.blockNumber;
    expect(await cancelled.locator(".state-text").textContent()).to.equal(
      `Cancelled: the no-op ${cancelHash} was mined in block ${block}; the operation never ran.`,
    );
    expect(await cancelled.locator(`code[title="${block}"]`).count(), "the block, not —").to.equal(1);
    expect(await page.locator("section.transaction form[data-action]").count()).to.equal(0); // nothing left to act on
    const audit = await service.services.auditLog.list({ limit: 10, target: txId });
    expect(audit.map((e) => `${e.actor} ${e.action}`)).to.deep.equal([
      "ops@console.test transaction.cancel",
      "ops@console.test transaction.replace",
      "ops@console.test transaction.rebroadcast",
    ]);
  });

  it("transactions: a relayed operation that reverted when mined shows its block and its reason, decoded with the contracts' errors", async () => {
    const provider = providerFor(sandbox.baseSepolia);
    const base = sandbox.baseSepolia.provider;
    const factory = sandbox.deployments[84532].contracts.AgentTokenFactory;
    const txId = await prepareRelayedToken(service.api, "RVRT", sandbox.accounts[6].address);
    // Simulated and signed while the factory works; mined while its code reverts with EmptyName() (one of the
    // factory's own errors), put back after. The console replays the call on the state its block left.
    const code = await provider.getCode(factory);
    await mining(false);
    let sent;
    try {
      const sending = payRelayedSend(service.api, txId, sandbox.accounts[4]);
      for (let i = 0; i < 200 && !(await service.services.batches.get(txId))?.transactions[0].txHash; i++)
        await new Promise((r) => setTimeout(r, 25));
      await new Promise((r) => setTimeout(r, 300));
      await base.request({
        method: "hardhat_setCode",
        params: [factory, `0x63${id("EmptyName()").slice(2, 10)}60e01b60005260046000fd`],
      });
      await base.request({ method: "evm_mine", params: [] });
      // One more block before the code is put back: the local chain writes a code change into the latest block's
      // state, and the reverted one's must stay as it was mined.
      await base.request({ method: "evm_mine", params: [] });
      sent = await sending;
    } finally {
      await base.request({ method: "hardhat_setCode", params: [factory, code] });
      await mining(true);
    }
    expect(sent.status).to.be.oneOf([200, 202]);
    let status: any;
    for (let i = 0; i < 100; i++) {
      status = (await service.api.get("/get-transaction-status", { txId })).body;
      if (status.status === "rejected") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status.status, JSON.stringify(status)).to.equal("rejected");
    const hash: string = status.txHash;
    const receipt = (await provider.getTransactionReceipt(hash))!;
    expect(receipt.status).to.equal(0);
    await page.goto(`${service.url}/console/transactions/${txId}`);
    const tx = page.locator("section.transaction").first();
    expect(await tx.getAttribute("data-state")).to.equal("reverted");
    expect(await tx.locator(".state-text").textContent()).to.equal(
      `Reverted in block ${receipt.blockNumber}: EmptyName().`,
    );
    expect(await tx.locator(`code[title="${receipt.blockNumber}"]`).count()).to.equal(1);
    expect(await tx.textContent()).to.match(/Revert reason\s*EmptyName\(\)/);
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, "console-transaction-reverted");
  });

  it("payments: paid faucet claims settled in one Multicall3 transaction each show the others; totals per day and operation", async () => {
    const payer = sandbox.accounts[5];
    const recipients = [1, 2, 3].map(() => Wallet.createRandom().address);
    const claim = (recipient: string, headers: Record<string, string> = {}) =>
      service.api.post("/faucet/bkn", { recipientAddress: recipient }, { "Idempotency-Key": randomUUID(), ...headers });
    const quote = quoteOf(await claim(recipients[0])).accepts[0];
    await mining(false);
    const claims = await Promise.all(
      recipients.map(async (r, i) =>
        claim(r, { "X-PAYMENT": await payWithEthers(payer, quote), "x-forwarded-for": `10.39.0.${i + 1}` }),
      ),
    );
    for (const c of claims) expect(c.status, JSON.stringify(c.body)).to.equal(202);
    let settling: any[] = [];
    for (let i = 0; i < 100 && !(settling.length === 3 && settling.every((p) => p.settlementTransaction)); i++) {
      await new Promise((r) => setTimeout(r, 100));
      settling = await Promise.all(
        claims.map(
          async (c) => (await service.api.get("/get-transaction-status", { txId: c.body.txId })).body.payments[0],
        ),
      );
    }
    await sandbox.baseSepolia.provider.request({ method: "evm_mine", params: [] });
    await mining(true);
    const shared = settling.map((p) => p.settlementTransaction as string).find((h, i, all) => all.indexOf(h) !== i)!;
    expect(shared, JSON.stringify(settling)).to.be.a("string");
    for (let i = 0; i < 100; i++) {
      const [row] = await service.services.paymentSearch.page({
        settlementTransaction: shared,
        status: "settled",
        limit: 5,
      });
      if (row) break;
      await new Promise((r) => setTimeout(r, 200));
    }

    await page.goto(`${service.url}/console/payments?status=settled`);
    expect(await page.textContent("main")).to.include("faucetBkn");
    expect(await page.locator(`code[title="${shared}"]`).count()).to.be.greaterThan(1); // shortened, whole in its title
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, "console-payments");
    const mates = await service.services.paymentSearch.page({ settlementTransaction: shared, limit: 5 });
    expect(mates.length).to.be.greaterThan(1);
    await page
      .getByRole("link", { name: `${mates[0].id.slice(0, 6)}…${mates[0].id.slice(-4)}` })
      .first()
      .click();
    await page.waitForURL(`${service.url}/console/payments/${mates[0].id}`);
    const mateTable = page.getByRole("region", { name: "Payments settled by the same transaction" });
    expect(await mateTable.locator("tbody tr").count()).to.equal(mates.length - 1);
    expect(await mateTable.textContent()).to.include(mates[1].id.slice(0, 6));
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, "console-payment");

    const totals = await page
      .getByRole("region", { name: "Totals per day and operation (settled payments)" })
      .textContent()
      .catch(() => null);
    expect(totals).to.equal(null); // the totals are on the list page
    await page.goto(`${service.url}/console/payments`);
    const sums = (await page
      .getByRole("region", { name: "Totals per day and operation (settled payments)" })
      .textContent())!;
    expect(sums).to.include("faucetBkn").and.include(new Date().toISOString().slice(0, 10));
  });

  it("overview: chains with their head and RPC URL in use, the relayer and settlement wallets, queues and charts from the service's own data", async () => {
    await page.goto(`${service.url}/console`);
    const main = (await page.textContent("main"))!;
    expect(main).to.include("Base Sepolia").and.include("Head block");
    // The relayer's address, shortened, on each chain it relays on.
    expect(await page.locator(`code[title="${sandbox.accounts[RELAYER_INDEX].address}"]`).count()).to.equal(2);
    expect(await page.getByRole("region", { name: "RPC URLs of chain 84532" }).textContent()).to.include("yes");
    const wallets = (await page.getByRole("region", { name: "The service's wallets" }).textContent())!;
    expect(wallets)
      .to.include("relayer")
      .and.include("settlement")
      .and.match(/\d+(\.\d{1,6})? ETH/);
    // The triage: each threshold as a state in words, its figure a link to the list it counts.
    for (const [signal, link] of [
      ["head-84532", "/console/transactions?chain=84532&status=sending"],
      ["stuck", "/console/transactions?stuck=1"],
      ["webhooks", "/console/webhooks?owed=1"],
      ["settlements", "/console/payments?status=settling"],
    ]) {
      expect(await page.locator(`#signal-${signal}`).getAttribute("data-state"), signal).to.equal("ok");
      expect(await page.locator(`#signal-${signal} a`).getAttribute("href")).to.equal(link);
    }
    expect(await page.locator('li.signal[id^="signal-wallet-relayer-84532-"] .badge').textContent()).to.include("OK");
    // The charts describe what happened: the batches of this test ended within the hour.
    const ops = (await page.locator("#hour-ops-desc").textContent())!;
    expect(ops)
      .to.match(/succeeded: [1-9]\d*/)
      .and.match(/rejected: [1-9]\d*/);
    expect(await page.locator("#hour-payments-desc").textContent()).to.match(/settled: [1-9]\d*/);
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, "console-overview");
    const json = await fetch(`${service.url}/console/api/overview`, {
      headers: { cookie: (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ") },
    });
    expect(json.status).to.equal(200);
    const body = (await json.json()) as any;
    expect(body.lastHour).to.have.length(60);
    expect(body.lastDay).to.have.length(48);
    const relayerWallet = body.wallets.find((w: any) => w.role === "relayer" && w.chainId === 84532);
    expect(relayerWallet.transactionsLeft).to.be.greaterThan(100);
    expect(relayerWallet.nextNonce).to.be.a("number");
    expect(BigInt(relayerWallet.spentPerDayWei), "the relayer spent gas on this test's batches").to.be.greaterThan(0n);
    expect(body.signals.map((s: any) => s.id)).to.include.members(["head-84532", "stuck", "webhooks", "settlements"]);
  });
});
