// tier: browser
import { expect } from "chai";
import { Wallet } from "ethers";
import { runAdminCommand } from "../../service/operator/commands";
import { SIGN_IN_LIMITS } from "../../service/auth/sign-in-limits";
import { launchChromium } from "../helpers/browser";
import { addOperator, ConsoleClient } from "../helpers/console";
import { submitThroughLink } from "../helpers/kyc";
import { WebhookReceiver } from "../helpers/webhook-receiver";
import { getSandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/**
 * The console's sign-in and its refusals, through HTTP as a browser makes them (issue 39, part 1): operators created by
 * the admin command, password and one-time link, the session cookie's flags, no session, wrong role, missing CSRF
 * token, an expired and a revoked session, rate-limited sign-ins, and the audit log of every change.
 */
describe("e2e: the operator console's sign-in and refusals", function () {
  this.timeout(120_000);
  let service: TestService;
  const password = "correct horse battery staple";

  before(async () => {
    service = await startTestService(await getSandbox());
    await addOperator(service.services, "admin@console.test", "admin", password);
    await addOperator(service.services, "viewer@console.test", "viewer", password);
  });
  after(async () => {
    await service?.stop();
  });

  it("a password signs in: the cookie is HttpOnly, SameSite=Strict, scoped to /console and expires; Secure over HTTPS", async () => {
    const admin = new ConsoleClient(service.url);
    const res = await admin.signIn({ email: "admin@console.test", password });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.operator).to.include({ email: "admin@console.test", role: "admin", hasPassword: true });
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).to.match(/^tak_console=[A-Za-z0-9_-]{43}; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    const maxAge = Number(/Max-Age=(\d+)/.exec(cookie)![1]);
    expect(maxAge).to.be.within(8 * 3600 - 5, 8 * 3600);
    expect((await admin.get("/console/api/session")).body.operator.email).to.equal("admin@console.test");
    // Secure follows the request's protocol as a trusted proxy (TRUST_PROXY: loopback here) names it, not the host:
    // HTTPS at the proxy, even for a host called localhost, is Secure; a public host name over plain HTTP is not.
    const signInVia = (headers: Record<string, string>) =>
      new ConsoleClient(service.url).request(
        "POST",
        "/console/api/session",
        { email: "admin@console.test", password },
        { headers },
      );
    const proxied = await signInVia({ "x-forwarded-host": "console.example.com", "x-forwarded-proto": "https" });
    expect(proxied.status).to.equal(200);
    expect(proxied.headers.get("set-cookie")).to.match(/; Secure$/);
    const httpsToLocalhost = await signInVia({ "x-forwarded-host": "localhost", "x-forwarded-proto": "https" });
    expect(httpsToLocalhost.headers.get("set-cookie")).to.match(/; Secure$/);
    const plainPublicHost = await signInVia({ "x-forwarded-host": "console.example.com" });
    expect(plainPublicHost.status).to.equal(200);
    expect(plainPublicHost.headers.get("set-cookie")).to.not.include("Secure");
    // Nothing usable at rest: the session is stored as a hash, the password as scrypt.
    const [stored] = await service.services.db.query<{ token_hash: string }>(
      "SELECT token_hash FROM operator_sessions LIMIT 1",
    );
    expect(stored.token_hash).to.match(/^[0-9a-f]{64}$/);
    const [account] = await service.services.db.query<{ password_hash: string }>(
      "SELECT password_hash FROM operators WHERE email = 'admin@console.test'",
    );
    expect(account.password_hash)
      .to.match(/^scrypt\$32768\$8\$1\$/)
      .and.not.include(password);
  });

  it("a wrong password and an unknown e-mail are refused alike (401 naming password); nobody is signed in", async () => {
    for (const email of ["admin@console.test", "nobody@console.test"]) {
      const res = await new ConsoleClient(service.url).signIn({ email, password: "not the password" });
      expect(res.status).to.equal(401);
      expect(res.body.error).to.include({
        code: "UNAUTHORIZED",
        param: "password",
        message: "Wrong e-mail or password",
      });
      expect(res.headers.get("set-cookie")).to.equal(null);
    }
    const missing = await new ConsoleClient(service.url).signIn({ email: "admin@console.test" } as never);
    expect(missing.status).to.equal(400);
    // Another site's page cannot sign a browser in, even with the right password.
    const foreign = await new ConsoleClient(service.url).request(
      "POST",
      "/console/api/session",
      { email: "admin@console.test", password },
      { headers: { origin: "https://evil.example" } },
    );
    expect(foreign.status).to.equal(403);
    expect(foreign.body.error.param).to.equal("origin");
  });

  it("a one-time link printed by the admin command signs in once; used or unknown links are refused", async () => {
    const added = await addOperator(service.services, "link@console.test", "reviewer");
    expect(added.signInLink!.url).to.match(new RegExp(`^${service.url}/console/sign-in\\?token=[A-Za-z0-9_-]{43}$`));
    const token = new URL(added.signInLink!.url).searchParams.get("token")!;
    const [row] = await service.services.db.query<{ token_hash: string }>(
      "SELECT token_hash FROM operator_sign_in_links ORDER BY created_at DESC LIMIT 1",
    );
    expect(row.token_hash).to.not.include(token);
    const client = new ConsoleClient(service.url);
    const first = await client.signIn({ token });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.operator).to.include({ email: "link@console.test", role: "reviewer", hasPassword: false });
    const again = await new ConsoleClient(service.url).signIn({ token });
    expect(again.status).to.equal(401);
    expect(again.body.error.details).to.include({ reason: "used" });
    const unknown = await new ConsoleClient(service.url).signIn({ token: "x".repeat(43) });
    expect(unknown.body.error.details).to.include({ reason: "unknown" });
    // Signed in by link, the operator sets a password and signs in with it next time.
    const set = await client.post("/console/api/password", { password: "short" });
    expect(set.status).to.equal(400);
    expect(set.body.error.param).to.equal("password");
    expect((await client.post("/console/api/password", { password: "a long enough passphrase" })).status).to.equal(200);
    expect(
      (
        await new ConsoleClient(service.url).signIn({
          email: "link@console.test",
          password: "a long enough passphrase",
        })
      ).status,
    ).to.equal(200);
  });

  it("no session: the JSON API answers 401, a page sends the browser to sign in and back", async () => {
    const anonymous = new ConsoleClient(service.url);
    const res = await anonymous.get("/console/api/overview");
    expect(res.status).to.equal(401);
    expect(res.body.error.details).to.deep.equal({ reason: "no_session" });
    const change = await anonymous.post("/console/api/keys", { email: "x@y.z", plan: "Starter" });
    expect(change.status).to.equal(401);
    const page = await fetch(`${service.url}/console/transactions?q=abc`, { redirect: "manual" });
    expect(page.status).to.equal(303);
    expect(page.headers.get("location")).to.equal(
      `/console/sign-in?next=${encodeURIComponent("/console/transactions?q=abc")}`,
    );
  });

  it("wrong role: a viewer reads but may not change (403 naming the role); a reviewer decides KYC but may not create keys", async () => {
    const viewer = new ConsoleClient(service.url);
    await viewer.signIn({ email: "viewer@console.test", password });
    expect((await viewer.get("/console/api/keys")).status).to.equal(200);
    const refused = await viewer.post("/console/api/keys", { email: "tenant@console.test", plan: "Starter" });
    expect(refused.status).to.equal(403);
    expect(refused.body.error.details).to.deep.equal({ role: "viewer", needed: "admin" });
    const approve = await viewer.post("/console/api/kyc/00000000-0000-4000-8000-000000000000/approve");
    expect(approve.status).to.equal(403);
    expect(approve.body.error.details).to.include({ needed: "reviewer" });
    expect(await service.services.apiKeys.list()).to.have.length(0);
  });

  it("missing or wrong CSRF token, or another site's Origin: every change is refused (403), nothing changes", async () => {
    const admin = new ConsoleClient(service.url);
    await admin.signIn({ email: "admin@console.test", password });
    const without = await admin.post(
      "/console/api/keys",
      { email: "tenant@console.test", plan: "Starter" },
      { csrf: false },
    );
    expect(without.status).to.equal(403);
    expect(without.body.error.param).to.equal("x-csrf-token");
    const wrong = await admin.post(
      "/console/api/keys",
      { email: "tenant@console.test", plan: "Starter" },
      { csrf: false, headers: { "x-csrf-token": "A".repeat(43) } },
    );
    expect(wrong.status).to.equal(403);
    const foreign = await admin.post(
      "/console/api/keys",
      { email: "tenant@console.test", plan: "Starter" },
      { headers: { origin: "https://evil.example" } },
    );
    expect(foreign.status).to.equal(403);
    expect(foreign.body.error.param).to.equal("origin");
    expect(await service.services.apiKeys.list()).to.have.length(0);
    const made = await admin.post(
      "/console/api/keys",
      { email: "tenant@console.test", plan: "Starter" },
      { headers: { origin: service.url } },
    );
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    expect(made.body.apiKey).to.match(/^tak_/);
  });

  it("an expired session and a signed-out one are refused (401 saying which); the page says why at the sign-in", async () => {
    const expiring = new ConsoleClient(service.url);
    await expiring.signIn({ email: "viewer@console.test", password });
    // The session's end comes (its row moved into the past, as CONSOLE_SESSION_TTL would after hours).
    await service.services.db.query(
      "UPDATE operator_sessions SET expires_at = now() - interval '1 second' WHERE token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')",
      [expiring.setCookie!.split("=")[1]],
    );
    const expired = await expiring.get("/console/api/overview");
    expect(expired.status).to.equal(401);
    expect(expired.body.error.details).to.deep.equal({ reason: "expired" });
    const page = await fetch(`${service.url}/console`, {
      redirect: "manual",
      headers: { cookie: expiring.setCookie! },
    });
    expect(page.status).to.equal(303);
    expect(page.headers.get("location")).to.include("reason=expired");

    const leaving = new ConsoleClient(service.url);
    await leaving.signIn({ email: "viewer@console.test", password });
    const out = await leaving.request("DELETE", "/console/api/session");
    expect(out.status).to.equal(200);
    expect(out.headers.get("set-cookie")).to.match(
      /^tak_console=; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=0/,
    );
    expect((await leaving.get("/console/api/overview")).body.error.details).to.deep.equal({ reason: "revoked" });
  });

  it("removing an operator ends its sessions at once; the admin command lists the audit log of every change", async () => {
    await addOperator(service.services, "leaver@console.test", "admin", password);
    const leaver = new ConsoleClient(service.url);
    await leaver.signIn({ email: "leaver@console.test", password });
    expect((await leaver.get("/console/api/overview")).status).to.equal(200);
    const consoleLinks = { baseUrl: service.url, linkTtlMs: 3_600_000 };
    await runAdminCommand(
      service.services,
      { command: "operators.remove", email: "leaver@console.test" },
      { operations: [], console: consoleLinks },
    );
    expect((await leaver.get("/console/api/overview")).status).to.equal(401);
    const audit = (await runAdminCommand(
      service.services,
      { command: "audit.list", limit: 20 },
      { operations: [], console: consoleLinks },
    )) as { actor: string; action: string; target: string; after: any }[];
    expect(audit.map((e) => `${e.actor} ${e.action} ${e.target}`)).to.include.members([
      "admin tool operators.remove leaver@console.test",
      "admin@console.test keys.create tenant@console.test",
      "link@console.test operators.password link@console.test",
    ]);
    const created = audit.find((e) => e.action === "keys.create")!;
    expect(JSON.stringify(created)).to.not.match(/tak_[0-9a-f]{16}_/); // the key itself is never kept
    const addedByLink = audit.find((e) => e.action === "operators.add" && e.target === "link@console.test")!;
    expect(JSON.stringify(addedByLink)).to.not.include("token=");
  });

  it("in the browser, a one-time link is used by its button, not by opening it; then it signs nobody in", async () => {
    const added = await addOperator(service.services, "browser-link@console.test", "viewer");
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext()).newPage();
      await page.goto(added.signInLink!.url);
      const [link] = await service.services.db.query<{ used_at: Date | null }>(
        "SELECT used_at FROM operator_sign_in_links ORDER BY created_at DESC LIMIT 1",
      );
      expect(link.used_at, "opening the page uses nothing").to.equal(null);
      await Promise.all([
        page.waitForURL(`${service.url}/console`),
        page.getByRole("button", { name: "Sign in with this link" }).click(),
      ]);
      expect(await page.textContent("header")).to.include("browser-link@console.test (viewer)");
      const again = await (await browser.newContext()).newPage();
      await again.goto(added.signInLink!.url);
      await again.getByRole("button", { name: "Sign in with this link" }).click();
      await again.locator("#notice.error").waitFor();
      expect(await again.textContent("#notice")).to.include("was used already");
      expect(again.url()).to.include("/console/sign-in");
    } finally {
      await browser.close();
    }
  });

  it("a reviewer rejects a submission with its reason: refused without one (400 naming it); the tenant's webhook and the investor's page hear it", async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const { key } = await service.services.apiKeys.create({ email: "issuer@console.test", plan: "Starter" });
      const tenant = service.api.withKey(key);
      expect((await tenant.post("/webhooks", { url: receiver.url, eventTypes: ["kyc.rejected"] })).status).to.equal(
        201,
      );
      const invited = await tenant.post("/create-kyc-link", { email: "bob@investor.test" });
      const wallet = Wallet.createRandom();
      expect(
        (
          await submitThroughLink(service.api, invited.body.url, wallet, {
            firstName: "Bob",
            lastName: "Builder",
            country: "DE",
          })
        ).status,
      ).to.equal(200);
      await addOperator(service.services, "reviewer@console.test", "reviewer", password);
      const reviewer = new ConsoleClient(service.url);
      await reviewer.signIn({ email: "reviewer@console.test", password });
      const queue = await reviewer.get("/console/api/kyc");
      const bob = queue.body.items.find((i: { email: string }) => i.email === "bob@investor.test");
      expect(bob).to.include({ status: "submitted", walletAddress: wallet.address, firstName: "Bob" });
      const without = await reviewer.post(`/console/api/kyc/${bob.id}/reject`, { reason: "" });
      expect(without.status).to.equal(400);
      expect(without.body.error.param).to.equal("reason");
      const rejected = await reviewer.post(`/console/api/kyc/${bob.id}/reject`, { reason: "the passport has expired" });
      expect(rejected.status, JSON.stringify(rejected.body)).to.equal(200);
      expect(rejected.body).to.include({ status: "rejected", reason: "the passport has expired" });
      expect((await reviewer.post("/console/api/keys", { email: "x@console.test", plan: "Starter" })).status).to.equal(
        403,
      );
      await receiver.waitFor("kyc.rejected", (all) => all.some((r) => r.event?.type === "kyc.rejected"));
      expect(receiver.received.find((r) => r.event?.type === "kyc.rejected")!.event.data).to.include({
        investorId: bob.id,
        status: "rejected",
      });
      const investorPage = await fetch(invited.body.url);
      expect(investorPage.status).to.equal(200);
      const text = await investorPage.text();
      expect(text).to.include("Your onboarding was not approved").and.include("the passport has expired");
    } finally {
      await receiver.close();
    }
  });

  it(`sign-ins are rate-limited: after ${SIGN_IN_LIMITS.refusedPasswords} refused passwords for one e-mail, 429 with Retry-After, even with the right one`, async () => {
    const target = "viewer@console.test";
    for (let i = 0; i < SIGN_IN_LIMITS.refusedPasswords; i++) {
      const res = await new ConsoleClient(service.url).request(
        "POST",
        "/console/api/session",
        { email: target, password: `guess ${i}` },
        { headers: { "x-forwarded-for": `10.9.0.${i + 1}` } },
      );
      expect(res.status).to.equal(401);
    }
    const locked = await new ConsoleClient(service.url).request(
      "POST",
      "/console/api/session",
      { email: target, password },
      { headers: { "x-forwarded-for": "10.9.1.1" } },
    );
    expect(locked.status).to.equal(429);
    expect(Number(locked.headers.get("retry-after"))).to.be.greaterThan(0);
    // Another operator is not locked out by it.
    expect((await new ConsoleClient(service.url).signIn({ email: "admin@console.test", password })).status).to.equal(
      200,
    );
  });
});
