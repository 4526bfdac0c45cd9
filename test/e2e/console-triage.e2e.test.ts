// tier: browser
import { expect } from "chai";
import { Wallet } from "ethers";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../helpers/browser";
import { addOperator, seriousViolations, screenshot, signInWithKeyboard } from "../helpers/console";
import { payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { createOwnSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/**
 * The console's triage (issue 50, items 1-3 and 7) in Chromium, on chains of the test's own: a relayed transaction
 * held out of its blocks by transactions that tip more (blocks too small for both: a congested network) is flagged on
 * the overview by itself (the page reads itself again), found from the flag's link, shown pending for its blocks and
 * time with its fee against the base fee, replaced with higher fees from its page, mined, and the flag clears by
 * itself. Lists take their filters from the URL and say a refused one; the navigation folds at 390 px.
 */
describe("e2e (browser): the console's triage — a stuck transaction, filters, a small screen", function () {
  this.timeout(300_000);
  let sandbox: Sandbox;
  let service: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const password = "operator console triage password";
  const pageErrors: string[] = [];
  const external: string[] = [];
  const EXPLORER = "https://explorer.example";

  before(async () => {
    sandbox = await createOwnSandbox();
    service = await startTestService(sandbox, {
      env: {
        SEND_WAIT_MS: "1500",
        // The service's own fee bump waits long here: the operator's is the one under test.
        RELAYER_BUMP_AFTER_BLOCKS: "1000",
        CONSOLE_STUCK_AFTER_BLOCKS: "3",
        EXPLORER_URL_84532: EXPLORER,
      },
    });
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
    const base = sandbox?.baseSepolia.provider;
    await base?.request({ method: "evm_setBlockGasLimit", params: ["0x3938700"] }).catch(() => undefined);
    await base?.request({ method: "evm_setAutomine", params: [true] }).catch(() => undefined);
    await context?.close();
    await browser?.close();
    await service?.stop();
    await sandbox?.close();
  });
  afterEach(() => {
    expect(pageErrors, "page errors").to.deep.equal([]);
    expect(external, "requests that left the service").to.deep.equal([]);
  });

  async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms = 30_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms (last: ${JSON.stringify(value)})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const signalState = (id: string) => page.locator(`#signal-${id}`).getAttribute("data-state");

  it("a stuck transaction is flagged on the overview by itself, found from the flag, replaced with higher fees, and the flag clears by itself", async () => {
    const base = sandbox.baseSepolia.provider;
    const provider = providerFor(sandbox.baseSepolia);
    const filler = new Wallet(sandbox.accounts[15].privateKey, provider); // none of the service's wallets
    await page.goto(`${service.url}/console`);
    expect(await signalState("stuck")).to.equal("ok");
    expect(await page.getAttribute("main", "data-live")).to.equal("/console/api/events");

    // The console's event stream, as the page reads it: a session's, every tenant's events, unnamed messages.
    expect((await fetch(`${service.url}/console/api/events`)).status).to.equal(401);
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
    const stream = new AbortController();
    const streamed = await fetch(`${service.url}/console/api/events`, { headers: { cookie }, signal: stream.signal });
    expect(streamed.headers.get("content-type")).to.match(/^text\/event-stream/);
    let heard = "";
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of streamed.body as unknown as AsyncIterable<Uint8Array>) heard += decoder.decode(chunk);
    })().catch(() => undefined);

    const txId = await prepareRelayedToken(service.api, "STUCK", sandbox.accounts[6].address);
    await base.request({ method: "evm_setAutomine", params: [false] });
    const sent = await payRelayedSend(service.api, txId, sandbox.accounts[3]);
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    const hash: string = sent.body.txHashes[0];
    const relayed = (await until(
      "its broadcast",
      () => provider.getTransaction(hash),
      (t) => t !== null,
    ))!;
    await until(
      "its broadcast recorded",
      async () => (await service.services.batches.get(txId))!.transactions[0].status,
      (s) => s === "broadcast",
    );
    // Blocks too small for it once a transaction that tips 5% more is in: each block takes the other one.
    await base.request({
      method: "evm_setBlockGasLimit",
      params: [`0x${(relayed.gasLimit + 20_999n).toString(16)}`],
    });
    const tip = relayed.maxPriorityFeePerGas!;
    let nonce = await provider.getTransactionCount(filler.address, "pending");
    const crowdOut = async () => {
      await filler.sendTransaction({
        nonce: nonce++,
        to: Wallet.createRandom().address,
        value: 1n,
        gasLimit: 21_000n,
        maxPriorityFeePerGas: (tip * 105n) / 100n,
        maxFeePerGas: relayed.maxFeePerGas! * 4n,
      });
      await base.request({ method: "evm_mine", params: [] });
    };
    for (let i = 0; i < 4; i++) await crowdOut();
    expect(await provider.getTransactionReceipt(hash)).to.equal(null);

    // The overview reads itself again (every 15 s, and at each event): the flag comes without a reload.
    await page.locator('#signal-stuck[data-state="bad"]').waitFor({ timeout: 30_000 });
    const flag = (await page.locator("#signal-stuck").textContent())!;
    expect(flag)
      .to.include("Failing")
      .and.include("Stuck transactions")
      .and.match(/oldest [4-9] blocks/);
    expect(await page.locator("#live-status").textContent()).to.match(/Updated \d\d:\d\d:\d\d UTC/);
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, "console-overview-stuck");

    await Promise.all([page.waitForURL(/\/console\/transactions\?stuck=1$/), page.locator("#signal-stuck a").click()]);
    expect(await page.locator("#f-stuck").isChecked()).to.equal(true);
    expect(await page.locator(".pager .count").textContent()).to.equal("1–1 of 1");
    await Promise.all([
      page.waitForURL(`${service.url}/console/transactions/${txId}`),
      page.getByRole("link", { name: `${txId.slice(0, 6)}…${txId.slice(-4)}` }).click(),
    ]);
    const tx = page.locator("section.transaction").first();
    expect(await tx.getAttribute("data-state")).to.equal("pending");
    const facts = (await tx.textContent())!;
    expect(facts)
      .to.match(/Pending for[\s\S]*[4-9] blocks \(since block \d+\), \d+ s/)
      .and.match(/the base fee now is [\d.]+ gwei \(its cap is [\d.]+× that\)/)
      .and.include(`Waiting to be mined: ${hash} is live`);
    expect(await tx.locator(`a.explorer[href="${EXPLORER}/tx/${hash}"]`).count()).to.equal(1);
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, "console-stuck-transaction");

    await page.getByRole("button", { name: "Replace with higher fees" }).click();
    await page.locator("dialog#confirm").waitFor({ state: "visible" });
    await Promise.all([page.waitForEvent("load"), page.click("#confirm-ok")]);
    await page.locator("#notice.success").waitFor();
    const replaced: string = (await service.api.get("/get-transaction-status", { txId })).body.txHash;
    expect(replaced).to.not.equal(hash);
    const now = (await page.locator("section.transaction").first().textContent())!;
    expect(now).to.include(`${replaced} is live`).and.include("1 earlier form replaced");
    expect(await page.locator("section.transaction").first().locator(`code[title="${hash}"]`).count()).to.equal(1);

    // The replacement tips more than the crowd: it takes the next block.
    await crowdOut();
    expect((await provider.getTransactionReceipt(replaced))?.status).to.equal(1);
    await base.request({ method: "evm_setBlockGasLimit", params: ["0x3938700"] });
    await base.request({ method: "evm_setAutomine", params: [true] });
    await until(
      "the batch ended",
      async () => (await service.api.get("/get-transaction-status", { txId })).body.status,
      (s) => s === "success",
    );
    // The batch's page reads itself again too: mined, its block (linked to the explorer), no action left.
    await page.locator('section.transaction[data-state="confirmed"]').waitFor({ timeout: 20_000 });
    const mined = (await page.locator("section.transaction").first().textContent())!;
    expect(mined).to.match(/Mined in block \d+/);
    expect(await page.getByRole("button", { name: "Replace with higher fees" }).count()).to.equal(0);

    await until(
      "the stream carried the batch's end",
      async () => heard,
      (h) => h.includes('"type":"batch.completed"'),
    );
    stream.abort();
    await reading;
    expect(heard).to.include(`"txId":"${txId}"`).and.include('"type":"transaction.broadcast"');
    expect(heard).to.not.match(/^event:/m); // one listener hears them all

    await page.goto(`${service.url}/console`);
    await until(
      "the flag cleared",
      () => signalState("stuck"),
      (s) => s === "ok",
    );
    const audit = await service.services.auditLog.list({ limit: 5, target: txId });
    expect(audit.map((e) => `${e.actor} ${e.action}`)).to.deep.equal(["ops@console.test transaction.replace"]);
  });

  it("lists take their filters from the URL: chain, method, status and time range; counts both ways; a refused filter is said, not an empty list", async () => {
    const before = new Date(Date.now() + 60_000).toISOString().slice(0, 19);
    await page.goto(
      `${service.url}/console/transactions?chain=84532&method=agentCreateToken&status=success&to=${before}`,
    );
    expect(await page.locator("#f-chain").inputValue()).to.equal("84532");
    expect(await page.locator("#f-method").inputValue()).to.equal("agentCreateToken");
    expect(await page.locator(".pager .count").textContent()).to.match(/^1–\d+ of \d+$/);
    const rows = page.getByRole("region", { name: "Batches, newest first" }).locator("tbody tr");
    expect(await rows.count()).to.be.greaterThan(0);
    for (const text of await rows.allTextContents()) expect(text).to.include("agentCreateToken").and.include("success");

    const refused = await page.goto(`${service.url}/console/transactions?status=stuck&method=agentCreateToken`);
    expect(refused!.status()).to.equal(400);
    expect(await page.locator("#filter-error").textContent()).to.include("status must be a batch status");
    expect(await page.locator("#f-status").getAttribute("aria-invalid")).to.equal("true");
    expect(await page.locator("#f-method").inputValue()).to.equal("agentCreateToken"); // what was sent, kept
    expect(await page.getByRole("region", { name: "Batches, newest first" }).count()).to.equal(0);
    expect(await seriousViolations(page)).to.deep.equal([]);

    const later = await page.goto(`${service.url}/console/payments?from=2026-12-02T10:00&to=2026-12-01T10:00`);
    expect(later!.status()).to.equal(400);
    expect(await page.locator("#filter-error").textContent()).to.include("to must be after from");
    const unserved = await page.goto(`${service.url}/console/transactions?chain=1`);
    expect(unserved!.status()).to.equal(400);
    expect(await page.locator("#filter-error").textContent()).to.include("chain must be a chain this service serves");
  });

  it("at 390 px the navigation folds behind its Menu button and every section is reachable with the keyboard", async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    phone.on("request", (request) => {
      if (!request.url().startsWith(service.url)) external.push(request.url());
    });
    await phone.addCookies(await context.cookies());
    const small = await phone.newPage();
    small.on("pageerror", (error) => pageErrors.push(error.message));
    await small.goto(`${service.url}/console`);
    const menu = small.getByRole("button", { name: "Menu" });
    expect(await menu.isVisible()).to.equal(true);
    expect(await small.getByRole("link", { name: "Payments" }).isVisible()).to.equal(false);
    expect(await small.evaluate("document.documentElement.scrollWidth")).to.be.at.most(390); // nothing sideways
    await menu.focus();
    await small.keyboard.press("Enter");
    expect(await menu.getAttribute("aria-expanded")).to.equal("true");
    const links = small.getByRole("navigation", { name: "Console sections" }).getByRole("link");
    expect(await links.count()).to.be.greaterThanOrEqual(8);
    for (const box of await Promise.all((await links.all()).map((l) => l.boundingBox())))
      expect(box!.height, "a target a thumb can hit").to.be.at.least(40);
    expect(await seriousViolations(small)).to.deep.equal([]);
    await screenshot(small, "console-small-screen");
    await small.keyboard.press("Tab"); // Overview
    await small.keyboard.press("Tab"); // Transactions
    await small.keyboard.press("Tab"); // Payments
    await Promise.all([small.waitForURL(`${service.url}/console/payments`), small.keyboard.press("Enter")]);
    expect(await small.getByRole("link", { name: "Payments" }).isVisible()).to.equal(false); // folded again
    await phone.close();
  });
});
