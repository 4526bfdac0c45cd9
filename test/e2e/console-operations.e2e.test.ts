// tier: browser
import { expect } from "chai";
import { Wallet } from "ethers";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../helpers/browser";
import { addOperator, seriousViolations, screenshot, signInWithKeyboard } from "../helpers/console";
import { submitThroughLink } from "../helpers/kyc";
import { execute } from "../helpers/flow";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";
import { WebhookReceiver } from "../helpers/webhook-receiver";

/**
 * The console's keys, webhooks, KYC review, audit, account and sign-in pages in Chromium (issue 39, parts 1, 4, 5 and
 * 6), driving real actions: an operator creates an API key (its secret shown once) that the tenant then uses; a
 * delivery that failed at the tenant's receiver is replayed from its page and arrives; failed ones of a time range are
 * replayed; an endpoint is disabled; a KYC submission is approved with the keyboard alone, and the tenant's webhook
 * and the investor's own page show the decision; a viewer sees no action. Every page: no serious or critical axe-core
 * violation, and a screenshot.
 */
describe("e2e (browser): the console's keys, webhooks, KYC review and audit log", function () {
  this.timeout(240_000);
  let service: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let receiver: WebhookReceiver;
  let tenant: ApiClient;
  let endpointId: string;
  let tenantKeyId: string;
  let sandbox: Sandbox;
  const password = "operations console password";
  const pageErrors: string[] = [];
  const investor = Wallet.createRandom();
  let investorUrl: string;

  before(async () => {
    receiver = await WebhookReceiver.start();
    sandbox = await getSandbox();
    service = await startTestService(sandbox, { env: { WEBHOOK_RETRY_SCHEDULE: "200ms" } });
    await addOperator(service.services, "ops@console.test", "admin", password);
    await addOperator(service.services, "watch@console.test", "viewer", password);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await signInWithKeyboard(page, service.url, "ops@console.test", password);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await service?.stop();
    await receiver?.close();
  });
  afterEach(() => expect(pageErrors, "page errors").to.deep.equal([]));

  async function confirmDialog(): Promise<void> {
    await page.locator("dialog#confirm").waitFor({ state: "visible" });
    await Promise.all([page.waitForEvent("load"), page.click("#confirm-ok")]);
    await page.locator("#notice.success").waitFor();
  }

  const deliveries = (status?: "failed" | "delivered") =>
    service.services.webhookAdmin.deliveries(endpointId, { limit: 50, status });
  async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    for (let i = 0; i < 150; i++) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${what}: not within 15 s`);
  }

  it("keys and money: an operator creates a key (shown once) that the tenant uses; credits, a signer and a price, each audited", async () => {
    await page.goto(`${service.url}/console/keys`);
    await page.fill("#key-email", "tenant@console.test");
    await page.selectOption("#key-plan", "Professional");
    await page.getByRole("button", { name: "Create key" }).click();
    const output = page.locator("#new-key");
    await output.waitFor({ state: "visible" });
    const key = (await output.textContent())!;
    expect(key).to.match(/^tak_[0-9a-f]{16}_/);
    expect(await page.textContent("#notice")).to.include("not shown again");
    // The tenant uses it at once: a webhook endpoint of its own (receiving everything of the key).
    tenant = service.api.withKey(key);
    const created = await tenant.post("/webhooks", { url: `${receiver.url}/tenant` });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    endpointId = created.body.id;
    const keyId = key.split("_")[1];
    tenantKeyId = keyId;

    await page.reload();
    expect(await page.textContent("main"))
      .to.include("tenant@console.test")
      .and.include(keyId);
    const signer = Wallet.createRandom().address;
    await page.fill(`#s-${keyId}`, signer);
    await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: "Whitelist signer" }).click()]);
    await page.selectOption(`#m-${keyId}`, "mintToken");
    await page.fill(`#n-${keyId}`, "0");
    await page.getByRole("button", { name: "Add credits" }).click();
    await page.locator("#notice.error").waitFor();
    expect(await page.textContent("#notice")).to.include("amount");
    const credits = (await service.services.credits.balances(keyId)).mintToken;
    await page.fill(`#n-${keyId}`, "25");
    await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: "Add credits" }).click()]);
    expect((await service.services.credits.balances(keyId)).mintToken).to.equal(credits + 25);
    expect((await service.services.signers.list({ keyId })).map((s) => s.address)).to.include(signer);
    await page.selectOption("#price-op", "agentCreateToken");
    await page.fill("#price-amount", "0.0123456");
    await page.getByRole("button", { name: "Set price" }).click();
    await page.click("#confirm-ok");
    await page.locator("#notice.error").waitFor();
    expect(await page.textContent("#notice")).to.include("at most 6 decimals");
    await page.fill("#price-amount", "0.02");
    await page.getByRole("button", { name: "Set price" }).click();
    await confirmDialog();
    expect(await page.getByRole("region", { name: "Prices per operation" }).textContent()).to.include("0.02 USDC");
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, "console-keys");
    const audit = await service.services.auditLog.list({ limit: 10, actor: "ops@console.test" });
    expect(audit.map((e) => e.action)).to.deep.equal([
      "prices.set",
      "credits.add",
      "signers.add",
      "keys.create",
      "console.sign-in", // the sign-in is audited too
    ]);
  });

  it("webhooks: a delivery that failed at the tenant's receiver is replayed from the console and the second attempt arrives", async () => {
    receiver.answer = () => ({ status: 500, body: "receiver down" });
    const invited = await tenant.post("/create-kyc-link", { email: "ada@investor.test" });
    expect(invited.status, JSON.stringify(invited.body)).to.equal(200);
    investorUrl = invited.body.url;
    const submitted = await submitThroughLink(service.api, investorUrl, investor, {
      firstName: "Ada",
      lastName: "Lovelace",
      country: "GB",
    });
    expect(submitted.status, JSON.stringify(submitted.body)).to.equal(200);
    const [failed] = await until(
      "the kyc.submitted delivery failed",
      () => deliveries("failed"),
      (d) => d.length === 1,
    );
    expect(failed.eventType).to.equal("kyc.submitted");
    expect(failed.attempts.map((a) => a.statusCode)).to.deep.equal([500, 500]);
    const firstArrival = receiver.received.filter((r) => r.event?.type === "kyc.submitted");
    expect(firstArrival).to.have.length(2);

    receiver.answer = () => ({ status: 200 });
    await page.goto(`${service.url}/console/webhooks`);
    // One name for its state, in the list as on its page.
    const listed = page.locator("tr", { hasText: endpointId });
    expect(await listed.locator(".badge").first().textContent()).to.equal("failing");
    await page.getByRole("link", { name: endpointId }).click();
    await page.waitForURL(`${service.url}/console/webhooks/${endpointId}`);
    expect(await page.locator("dl.facts .badge").first().textContent()).to.equal("failing");
    const row = page.locator("tr", { hasText: "kyc.submitted" }).first();
    expect(await row.textContent())
      .to.include("failed")
      .and.include("500");
    // Each attempt as a provider shows it: the request (the signature never), the receiver's answer.
    await row.locator("details.attempts summary").click();
    const attempts = row.locator("details.attempts");
    expect(await attempts.locator("summary").textContent()).to.equal("2 attempts: 500, 500");
    const shown = (await attempts.textContent())!;
    expect(shown)
      .to.include('"type":"kyc.submitted"')
      .and.include(`webhook-id: ${failed.eventId}`)
      .and.include("webhook-signature: v1,… (signed with the endpoint's secret: not shown)")
      .and.include("status 500")
      .and.include("receiver down");
    const sentSignature = firstArrival[0].headers["webhook-signature"];
    expect(await page.content()).to.not.include(sentSignature.slice(3, 30));
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, "console-webhook-attempts");
    // The event-type filter, stated in the URL.
    await page.selectOption("#f-type", "kyc.submitted");
    await Promise.all([page.waitForURL(/type=kyc.submitted/), page.getByRole("button", { name: "Filter" }).click()]);
    const typed = page.getByRole("region", { name: "Deliveries, newest first" }).locator("tbody tr");
    for (const text of await typed.allTextContents()) expect(text).to.include("kyc.submitted");
    await row.getByRole("button", { name: "Replay" }).click();
    await confirmDialog();
    await receiver.waitFor(
      "the replayed kyc.submitted",
      (all) => all.filter((r) => r.event?.type === "kyc.submitted").length === 3,
    );
    const replayed = receiver.received.filter((r) => r.event?.type === "kyc.submitted");
    expect(replayed[2].status).to.equal(200);
    expect(replayed[2].headers["webhook-id"]).to.equal(replayed[0].headers["webhook-id"]); // the same event again
    await until(
      "the replay delivered",
      () => deliveries("delivered"),
      (d) => d.length === 1,
    );
    await page.reload();
    // The replay links to its original, and the original to its replay.
    const [replay] = await deliveries("delivered");
    expect(replay.replayOf).to.equal(failed.id);
    const replayRow = page.locator("tr", { has: page.locator(`#delivery-${replay.id}`) });
    expect(await replayRow.textContent())
      .to.include(`replay of delivery ${failed.id}`)
      .and.include("delivered");
    expect(await replayRow.getByRole("link", { name: failed.id }).getAttribute("href")).to.equal(
      `/console/webhooks/${endpointId}#delivery-${failed.id}`,
    );
    const originalRow = page.locator("tr", { has: page.locator(`#delivery-${failed.id}`) });
    expect(await originalRow.textContent()).to.include(`replayed as ${replay.id}`);
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, "console-webhook");
  });

  it("KYC review: a submission approved with the keyboard alone; the tenant's webhook and the investor's page show it", async () => {
    await page.goto(`${service.url}/console/kyc`);
    const main = (await page.textContent("main"))!;
    expect(main)
      .to.include("Ada Lovelace")
      .and.include(investor.address)
      .and.include("wants you to sign in with your Ethereum account");
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, "console-kyc");
    await page.getByRole("button", { name: "Approve ada@investor.test" }).focus();
    await page.keyboard.press("Enter");
    await page.locator("dialog#confirm").waitFor({ state: "visible" });
    expect(await page.textContent("#confirm-text")).to.include(investor.address);
    await page.keyboard.press("Tab");
    await Promise.all([page.waitForEvent("load"), page.keyboard.press("Enter")]);
    await page.locator("#notice.success").waitFor();
    expect(await page.textContent("#notice")).to.include("ada@investor.test is approved");

    await receiver.waitFor("kyc.approved at the tenant's endpoint", (all) =>
      all.some((r) => r.event?.type === "kyc.approved" && r.status === 200),
    );
    const approved = receiver.received.find((r) => r.event?.type === "kyc.approved")!;
    // The event names the record and its state, never the investor's e-mail, names or wallet (issue 41).
    expect(approved.event.data).to.include({ status: "approved", reviewedBy: "operator" });
    expect(JSON.stringify(approved.event))
      .not.to.include(investor.address.slice(2))
      .and.not.to.include("ada@investor.test");
    const investorPage = await context.newPage();
    await investorPage.goto(investorUrl);
    expect(await investorPage.textContent("h1")).to.equal("Your onboarding is approved");
    expect(await investorPage.textContent("p.lead")).to.include(investor.address);
    await investorPage.close();
    const [entry] = await service.services.auditLog.list({ limit: 1, action: "kyc.approve" });
    // The audit names the inviting key and the record, not the investor's e-mail (KYC details stay sealed in the record).
    expect(entry).to.include({ actor: "ops@console.test" });
    expect(entry.target, "the inviting key's id").to.match(/^[0-9a-f]{16}$/);
    expect(entry.before).to.deep.equal([
      { investorId: approved.event.data.investorId, keyId: entry.target, status: "submitted" },
    ]);
    expect(JSON.stringify(entry)).not.to.include("ada@investor.test").and.not.to.include(investor.address.slice(2));
  });

  it("webhooks: the failed deliveries of a time range are replayed at once; disabling an endpoint stops its deliveries", async () => {
    receiver.answer = () => ({ status: 503 });
    const since = new Date(Date.now() - 1000).toISOString();
    for (const message of ["one", "two"])
      expect((await tenant.post(`/webhooks/${endpointId}/test`, { message })).status).to.be.oneOf([200, 202]);
    await until(
      "both test deliveries failed",
      () => deliveries("failed"),
      (d) => d.filter((x) => x.eventType === "webhook.test").length === 2,
    );
    receiver.answer = () => ({ status: 200 });
    const before = receiver.delivered().length;
    await page.goto(`${service.url}/console/webhooks/${endpointId}`);
    await page.fill("#from", since.slice(0, 19));
    await page.getByRole("button", { name: "Replay every failed delivery in this range" }).click();
    await confirmDialog();
    // Counted by type: a retry of an earlier test's delivery may land meanwhile, on its own schedule.
    const replayed = () =>
      receiver
        .delivered()
        .slice(before)
        .filter((r) => r.event?.type === "webhook.test");
    await receiver.waitFor("both replays", () => replayed().length === 2);
    expect(replayed().map((r) => r.event?.type)).to.deep.equal(["webhook.test", "webhook.test"]);

    await page.fill("#reason", "receiver answers with errors all day");
    await page.getByRole("button", { name: "Disable" }).click();
    await confirmDialog();
    expect(await page.textContent("main")).to.include(
      "disabled by the operator ops@console.test: receiver answers with errors all day",
    );
    const listed = await tenant.get("/webhooks");
    expect(listed.body.webhooks[0].disabledAt).to.be.a("string");
    expect((await service.services.auditLog.list({ limit: 3, target: endpointId })).map((e) => e.action)).to.deep.equal(
      ["webhook.disable", "webhook.replay-failed", "webhook.replay"],
    );
  });

  it("webhooks: a disabled endpoint is enabled again from the console; deliveries caught by a disable are paused, not owed, and go once it is enabled", async () => {
    expect((await service.services.webhookAdmin.endpoint(endpointId))!.state).to.equal("disabled");
    await page.goto(`${service.url}/console/webhooks/${endpointId}`);
    expect(await page.getByRole("button", { name: "Disable" }).count()).to.equal(0);
    await page.getByRole("button", { name: "Enable" }).click();
    await confirmDialog();
    expect(await page.locator("dl.facts .badge").first().textContent()).to.equal("active");
    expect((await tenant.get("/webhooks")).body.webhooks[0].disabledAt).to.equal(null);
    const [enabled] = await service.services.auditLog.list({ limit: 1, target: endpointId });
    expect(enabled).to.include({ actor: "ops@console.test", action: "webhook.enable" });
    expect(enabled.before).to.include({ state: "disabled" });

    // A delivery whose attempt fails while the endpoint is being disabled stays owed to a disabled endpoint: paused.
    receiver.answer = () => ({ status: 503, delayMs: 1500 });
    const before = receiver.received.length;
    const caughtTest = await tenant.post(`/webhooks/${endpointId}/test`, {});
    expect(caughtTest.status).to.equal(202);
    const caughtEvent: string = caughtTest.body.eventId;
    await until(
      "its attempt under way",
      () => service.services.webhookAdmin.deliveries(endpointId, { limit: 1 }),
      ([d]) => d?.status === "delivering",
    );
    expect(
      await service.services.webhookAdmin.disable(endpointId, "disabled by the operator ops@console.test"),
    ).to.equal(true);
    await receiver.waitFor("the failed attempt", (all) => all.length > before);
    const [caught] = await until(
      "the delivery pending again",
      () => service.services.webhookAdmin.deliveries(endpointId, { limit: 1 }),
      ([d]) => d?.status === "pending",
    );
    await page.goto(`${service.url}/console/webhooks/${endpointId}?status=pending`);
    const paused = page.locator("tr", { has: page.locator(`#delivery-${caught.id}`) });
    expect(await paused.textContent())
      .to.include("paused")
      .and.include("the endpoint is disabled");
    await page.goto(`${service.url}/console`);
    expect(await page.locator("#signal-webhooks").textContent()).to.include("1 more wait at disabled endpoints");
    expect(await page.locator("#signal-webhooks .signal-value").textContent()).to.equal("0"); // none owed to enabled ones

    receiver.answer = () => ({ status: 200 });
    await page.goto(`${service.url}/console/webhooks/${endpointId}`);
    await page.getByRole("button", { name: "Enable" }).click();
    await confirmDialog();
    await receiver.waitFor("the paused delivery, once enabled", () =>
      receiver.delivered().some((r) => r.headers["webhook-id"] === caughtEvent),
    );
    expect(await seriousViolations(page)).to.deep.equal([]);
  });

  it("webhooks: a delivery held behind an earlier one of its batch says so", async () => {
    const wallet = sandbox.accounts[7];
    await service.services.signers.add(wallet.address, { keyId: tenantKeyId });
    // The receiver holds the batch's first event a while: the batch's next events wait for it, in order.
    receiver.answer = (event) => ({ status: 200, delayMs: event?.type === "transaction.broadcast" ? 6000 : 0 });
    const { prepared } = await execute(tenant, wallet, {
      method: "agentRegister",
      chainId: "14a34",
      ownerEmail: "owner@console.test",
      name: "Held agent",
      description: "An agent whose events wait in order",
      image: "https://example.com/agent.png",
      services: [{ name: "A2A", endpoint: "https://agent.example.com/card.json", version: "0.3.0" }],
      tags: ["qa"],
      x402Support: "true",
    });
    const held = await until(
      "a delivery held behind the broadcast",
      () => service.services.webhookAdmin.deliveries(endpointId, { limit: 10 }),
      (d) => d.some((x) => x.txId === prepared.txId && x.heldBehind !== null),
    );
    const first = held.find((x) => x.txId === prepared.txId && x.eventType === "transaction.broadcast")!;
    await page.goto(`${service.url}/console/webhooks/${endpointId}`);
    const waiting = page.locator("tr", { hasText: "batch.completed" }).first();
    expect(await waiting.textContent()).to.include(`held behind delivery ${first.id}`);
    expect(await seriousViolations(page)).to.deep.equal([]);
    receiver.answer = () => ({ status: 200 });
    await until(
      "the batch's events delivered in order",
      () => service.services.webhookAdmin.deliveries(endpointId, { limit: 10 }),
      (d) => d.filter((x) => x.txId === prepared.txId).every((x) => x.status === "delivered"),
    );
  });

  it("a viewer reads every page but sees no action; the audit log, account and sign-in pages, and the skip link", async () => {
    const watcher = await context.browser()!.newContext({ viewport: { width: 1280, height: 900 } });
    const viewerPage = await watcher.newPage();
    await signInWithKeyboard(viewerPage, service.url, "watch@console.test", password);
    for (const path of ["/console/keys", `/console/webhooks/${endpointId}`, "/console/kyc?status=approved"]) {
      await viewerPage.goto(`${service.url}${path}`);
      expect(await viewerPage.locator("main form[data-action]").count(), path).to.equal(0);
    }
    await watcher.close();

    await page.goto(`${service.url}/console/audit`);
    const audit = (await page.textContent("main"))!;
    expect(audit)
      .to.include("keys.create")
      .and.include("webhook.replay")
      .and.include("kyc.approve")
      .and.include("admin tool");
    // Each entry as what changed: the credits added read as their balance before, struck, and after.
    const credits = page.locator("tr", { hasText: "credits.add" }).first();
    const [was, is] = await Promise.all([
      credits.locator("ul.diff del").first().textContent(),
      credits.locator("ul.diff ins").first().textContent(),
    ]);
    expect(Number(is) - Number(was)).to.equal(25);
    await page.goto(`${service.url}/console/audit?action=credits.add`);
    expect(await page.locator(".pager .count").textContent()).to.equal("1–1 of 1");
    await page.goto(`${service.url}/console/audit`);
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, "console-audit");
    // The skip link is the first stop of the keyboard and moves it to the page's content.
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement && document.activeElement.textContent")).to.equal(
      "Skip to content",
    );
    await page.keyboard.press("Enter");
    expect(await page.evaluate("document.activeElement && document.activeElement.id")).to.equal("main");

    await page.goto(`${service.url}/console/account`);
    expect(await seriousViolations(page)).to.deep.equal([]);
    const fresh = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const signIn = await fresh.newPage();
    await signIn.goto(`${service.url}/console/sign-in`);
    expect(await seriousViolations(signIn)).to.deep.equal([]);
    await screenshot(signIn, "console-sign-in");
    await fresh.close();
  });
});
