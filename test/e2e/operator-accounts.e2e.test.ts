// tier: browser
import fs from "node:fs";
import { expect } from "chai";
import { Wallet } from "ethers";
import { SIGN_IN_LIMITS } from "../../service/auth/sign-in-limits";
import { adminTokenPath } from "../../service/runtime-files";
import { launchChromium } from "../helpers/browser";
import { addOperator, ConsoleClient, seriousViolations, signInWithKeyboard } from "../helpers/console";
import { submitThroughLink } from "../helpers/kyc";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/**
 * Operator accounts a stolen session cannot keep (issue 50, item 5), through HTTP as the console's pages call it: the
 * current password to change it, the other sessions ended by a change, a password easy to guess refused, the idle
 * timeout, every sign-in, refusal, lockout and sign-out in the audit log with the e-mail and the client's address, the
 * cookie's Secure from the protocol as TRUST_PROXY lets a proxy say it, and the operator named on a KYC decision.
 */
describe("e2e: operator accounts", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  const password = "correct horse battery staple";

  /** The session's row, moved as time would move it (its token is the cookie's value). */
  const ageSession = (client: ConsoleClient, column: "last_seen_at" | "created_at", seconds: number) =>
    service.services.db.query(
      `UPDATE operator_sessions SET ${column} = now() - make_interval(secs => $2) WHERE token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')`,
      [client.setCookie!.split("=")[1], seconds],
    );
  const auditOf = async (action: string, actor?: string) =>
    (await service.services.auditLog.list({ limit: 200, action, ...(actor ? { actor } : {}) })) as {
      actor: string;
      action: string;
      target: string | null;
      after: any;
    }[];

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox, { env: { CONSOLE_SESSION_IDLE_TIMEOUT: "20m" } });
    await addOperator(service.services, "owner@accounts.test", "admin", password);
    await addOperator(service.services, "other@accounts.test", "viewer", password);
  });
  after(async () => {
    await service?.stop();
  });

  it("changing the password needs the current one; a wrong one is refused and counted; the change ends every other session", async () => {
    const here = new ConsoleClient(service.url);
    const elsewhere = new ConsoleClient(service.url);
    expect((await here.signIn({ email: "owner@accounts.test", password })).status).to.equal(200);
    expect((await elsewhere.signIn({ email: "owner@accounts.test", password })).status).to.equal(200);
    const newPassword = "umbrella quartz violin meadow";

    const without = await here.post("/console/api/password", { password: newPassword });
    expect(without.status).to.equal(400);
    expect(without.body.error.param).to.equal("currentPassword");
    const wrong = await here.post("/console/api/password", {
      password: newPassword,
      currentPassword: "not the password at all",
    });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.error).to.include({ param: "currentPassword" });
    const refused = (await auditOf("console.sign-in-failed", "owner@accounts.test")).find(
      (e) => e.after.via === "password change",
    );
    expect(refused?.after).to.include({ reason: "wrong current password", clientAddress: "127.0.0.1" });
    // Still the old password: nothing changed, both sessions live.
    expect((await elsewhere.get("/console/api/session")).status).to.equal(200);

    const changed = await here.post("/console/api/password", { password: newPassword, currentPassword: password });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    expect(changed.body).to.deep.include({ sessionsEnded: 1 });
    expect((await here.get("/console/api/session")).status, "the session that changed it stays").to.equal(200);
    const ended = await elsewhere.get("/console/api/session");
    expect(ended.status).to.equal(401);
    expect(ended.body.error.details).to.deep.equal({ reason: "revoked" });
    expect((await new ConsoleClient(service.url).signIn({ email: "owner@accounts.test", password })).status).to.equal(
      401,
    );
    expect(
      (await new ConsoleClient(service.url).signIn({ email: "owner@accounts.test", password: newPassword })).status,
    ).to.equal(200);
    const [entry] = await auditOf("operators.password", "owner@accounts.test");
    expect(entry.after).to.include({ hasPassword: true, otherSessionsEnded: 1 });
    expect(JSON.stringify(entry)).to.not.include(newPassword).and.not.include(password);
  });

  it("a password easy to guess is refused with the estimator's advice, also from the admin command", async () => {
    const client = new ConsoleClient(service.url);
    await client.signIn({ email: "other@accounts.test", password });
    for (const weak of ["aaaaaaaaaaaa", "password1234", "qwertyuiop12", "other@accounts.test"]) {
      const res = await client.post("/console/api/password", { password: weak, currentPassword: password });
      expect(res.status, weak).to.equal(400);
      expect(res.body.error.param, weak).to.equal("password");
      expect(res.body.error.message, weak).to.match(/^password is too easy to guess \(strength [0-2] of 4/);
    }
    const repeated = await client.post("/console/api/password", {
      password: "aaaaaaaaaaaa",
      currentPassword: password,
    });
    expect(repeated.body.error.message).to.include('Repeated characters like "aaa" are easy to guess');
    const weakAdd = await service.api.post(
      "/admin/command",
      { command: "operators.add", email: "weak@accounts.test", role: "viewer", password: "aaaaaaaaaaaa" },
      { "x-admin-token": adminToken(service) },
    );
    expect(weakAdd.status).to.equal(400);
    expect(weakAdd.body.error.message).to.include("too easy to guess");
    expect(await service.services.operators.byEmail("weak@accounts.test")).to.equal(undefined);
  });

  it("a session unused for CONSOLE_SESSION_IDLE_TIMEOUT ends (401 idle; the page says why at the sign-in); use keeps it alive", async () => {
    const idle = new ConsoleClient(service.url);
    await idle.signIn({ email: "other@accounts.test", password });
    await ageSession(idle, "last_seen_at", 19 * 60);
    expect((await idle.get("/console/api/overview")).status, "19 minutes without use: still live").to.equal(200);
    // That request was its use: the 20 minutes start again.
    const [seen] = await service.services.db.query<{ recent: boolean }>(
      "SELECT last_seen_at > now() - interval '1 minute' AS recent FROM operator_sessions WHERE token_hash = encode(sha256(convert_to($1, 'UTF8')), 'hex')",
      [idle.setCookie!.split("=")[1]],
    );
    expect(seen.recent).to.equal(true);
    await ageSession(idle, "last_seen_at", 21 * 60);
    const res = await idle.get("/console/api/overview");
    expect(res.status).to.equal(401);
    expect(res.body.error.details).to.deep.equal({ reason: "idle" });
    const page = await fetch(`${service.url}/console`, { redirect: "manual", headers: { cookie: idle.setCookie! } });
    expect(page.status).to.equal(303);
    expect(page.headers.get("location")).to.include("reason=idle");
    const signInPage = await (await fetch(`${service.url}${page.headers.get("location")}`)).text();
    expect(signInPage).to.include("Your session ended after a while without use");
  });

  it("every sign-in, refusal, lockout and sign-out is in the audit log with the e-mail and the client's address", async () => {
    await addOperator(service.services, "audited@accounts.test", "viewer", password);
    const from = (ip: string) => ({ headers: { "x-forwarded-for": ip } });
    const signIn = (body: Record<string, string>, ip: string) =>
      new ConsoleClient(service.url).request("POST", "/console/api/session", body, from(ip));
    expect((await signIn({ email: "audited@accounts.test", password }, "203.0.113.7")).status).to.equal(200);
    const client = new ConsoleClient(service.url);
    await client.signIn({ email: "audited@accounts.test", password });
    expect((await client.request("DELETE", "/console/api/session", undefined, from("203.0.113.8"))).status).to.equal(
      200,
    );
    expect((await signIn({ email: "nobody@accounts.test", password }, "203.0.113.9")).status).to.equal(401);
    for (let i = 0; i < SIGN_IN_LIMITS.refusedPasswords; i++)
      expect(
        (await signIn({ email: "audited@accounts.test", password: `guess ${i}` }, `198.51.100.${i + 1}`)).status,
      ).to.equal(401);
    const locked = await signIn({ email: "audited@accounts.test", password }, "198.51.100.99");
    expect(locked.status).to.equal(429);
    expect((await signIn({ token: "y".repeat(43) }, "203.0.113.10")).status).to.equal(401);

    const signIns = await auditOf("console.sign-in", "audited@accounts.test");
    expect(signIns.map((e) => e.after)).to.deep.include({ clientAddress: "203.0.113.7", via: "password" });
    expect((await auditOf("console.sign-out", "audited@accounts.test"))[0]).to.deep.include({
      target: "audited@accounts.test",
      after: { clientAddress: "203.0.113.8" },
    });
    const failures = await auditOf("console.sign-in-failed");
    expect(failures.find((e) => e.actor === "nobody@accounts.test")!.after).to.deep.equal({
      clientAddress: "203.0.113.9",
      via: "password",
      reason: "no such operator",
    });
    expect(
      failures.filter((e) => e.actor === "audited@accounts.test").map((e) => e.after.clientAddress),
    ).to.include.members(["198.51.100.1", "198.51.100.5"]);
    expect(failures.find((e) => e.after.via === "link")).to.deep.include({
      actor: "unknown",
      target: null,
      after: { clientAddress: "203.0.113.10", via: "link", reason: "unknown" },
    });
    const [lockout] = await auditOf("console.lockout", "audited@accounts.test");
    expect(lockout.after).to.include({ clientAddress: "198.51.100.5", via: "password" });
    expect(Date.parse(lockout.after.lockedUntil)).to.be.greaterThan(Date.now() + 14 * 60_000);
    expect(JSON.stringify(await auditOf("console.sign-in-failed"))).to.not.include("guess 0");
  });

  it("with TRUST_PROXY=false a client cannot claim HTTPS: X-Forwarded-Proto is not believed, the cookie is not Secure", async () => {
    const untrusting = await startTestService(sandbox, { env: { TRUST_PROXY: "false" } });
    try {
      await addOperator(untrusting.services, "proxy@accounts.test", "viewer", password);
      const res = await new ConsoleClient(untrusting.url).request(
        "POST",
        "/console/api/session",
        { email: "proxy@accounts.test", password },
        { headers: { "x-forwarded-proto": "https", "x-forwarded-for": "198.51.100.200" } },
      );
      expect(res.status).to.equal(200);
      expect(res.headers.get("set-cookie")).to.not.include("Secure");
      const [signedIn] = await untrusting.services.auditLog.list({ limit: 1, action: "console.sign-in" });
      expect(signedIn.after).to.deep.include({ clientAddress: "127.0.0.1" });
    } finally {
      await untrusting.stop();
    }
  });

  it("in the browser: the Account page asks for the current password; a weak one is refused with advice; a change keeps this session and ends the others", async () => {
    await addOperator(service.services, "browser@accounts.test", "viewer", password);
    const elsewhere = new ConsoleClient(service.url);
    await elsewhere.signIn({ email: "browser@accounts.test", password });
    const browser = await launchChromium();
    const errors: string[] = [];
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      page.on("pageerror", (error) => errors.push(error.message));
      await signInWithKeyboard(page, service.url, "browser@accounts.test", password);
      await page.getByRole("link", { name: "Account" }).click();
      await page.waitForURL(`${service.url}/console/account`);
      expect(await page.textContent("main")).to.include("20 minutes without use");
      expect(await seriousViolations(page)).to.deep.equal([]);
      await page.getByLabel("Current password").fill(password);
      await page.getByLabel(/^New password/).fill("aaaaaaaaaaaa");
      await page.getByRole("button", { name: "Save password" }).click();
      await page.locator("#notice.error").waitFor();
      expect(await page.textContent("#notice")).to.include("too easy to guess");
      await page.getByLabel(/^New password/).fill("juniper cobalt harvest lantern");
      await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: "Save password" }).click()]);
      await page.locator("#notice.success").waitFor();
      expect(await page.textContent("#notice")).to.include("your other sessions were ended");
      expect(page.url()).to.equal(`${service.url}/console/account`);
      expect((await elsewhere.get("/console/api/session")).body.error.details).to.deep.equal({ reason: "revoked" });
    } finally {
      await browser.close();
    }
    expect(errors, "page errors").to.deep.equal([]);
  });

  it("a KYC decision names the operator who made it in the console; tenants still see it reviewed by the operator", async () => {
    const { key } = await service.services.apiKeys.create({ email: "issuer@accounts.test", plan: "Starter" });
    const tenant = service.api.withKey(key);
    const invited = await tenant.post("/create-kyc-link", { email: "carol@investor.test" });
    const wallet = Wallet.createRandom();
    const submitted = await submitThroughLink(service.api, invited.body.url, wallet, {
      firstName: "Carol",
      lastName: "Cook",
      country: "FR",
    });
    expect(submitted.status).to.equal(200);
    await addOperator(service.services, "decider@accounts.test", "reviewer", password);
    const reviewer = new ConsoleClient(service.url);
    await reviewer.signIn({ email: "decider@accounts.test", password });
    const carol = (await reviewer.get("/console/api/kyc")).body.items.find(
      (i: { email: string }) => i.email === "carol@investor.test",
    );
    expect(carol.decidedBy).to.equal(null);
    const approved = await reviewer.post(`/console/api/kyc/${carol.id}/approve`);
    expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
    expect(approved.body).to.include({
      status: "approved",
      reviewedBy: "operator",
      decidedBy: "decider@accounts.test",
    });
    const listed = (await reviewer.get("/console/api/kyc?status=approved")).body.items.find(
      (i: { id: string }) => i.id === carol.id,
    );
    expect(listed.decidedBy).to.equal("decider@accounts.test");
    const page = await fetch(`${service.url}/console/kyc?status=approved`, {
      headers: { cookie: reviewer.setCookie! },
    });
    expect(await page.text()).to.include("by decider@accounts.test");
    // The decision's event (the tenant's webhooks and streams) names the provider, never the operator.
    const [event] = await service.services.db.query<{ data: any }>(
      "SELECT data FROM events WHERE type = 'kyc.approved' AND data->>'investorId' = $1",
      [carol.id],
    );
    expect(event.data).to.include({ reviewedBy: "operator" });
    expect(JSON.stringify(event.data)).to.not.include("decider@accounts.test");
  });
});

/** The admin token the test service keeps in its data directory (what `npm run admin` sends). */
function adminToken(service: TestService): string {
  return service.config.ADMIN_TOKEN ?? fs.readFileSync(adminTokenPath(service.config), "utf8").trim();
}
