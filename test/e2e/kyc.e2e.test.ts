import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet, type HDNodeWallet } from "ethers";
import { SecurityToken__factory } from "../../typechain-types";
import { runAdminCommand } from "../../service/operator/commands";
import { INVITATION_CREDIT_METHOD } from "../../service/model/plans";
import { linkTokenHash } from "../../service/store/kyc-links";
import { runAdminCli } from "../helpers/admin-cli";
import { execute } from "../helpers/flow";
import { requestMessage, submitThroughLink, tokenOf } from "../helpers/kyc";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startSmtpServer, type TestSmtpServer } from "../helpers/smtp";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";

/** `npm run admin -- <args>` against the running service's data directory (it routes through POST /admin/command). */
const adminCli = (dataDir: string, ...args: string[]) => runAdminCli(dataDir, args);

const expectError = (res: ApiResponse, status: number, message?: string | RegExp) => {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  if (typeof message === "string") expect(res.body.message, JSON.stringify(res.body)).to.equal(message);
  else if (message) expect(res.body.message, JSON.stringify(res.body)).to.match(message);
  expect(res.body.error.message).to.equal(res.body.message);
};

describe("e2e: investor onboarding (KYC link → the investor's page → signed submission → operator review → mint by e-mail)", function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let smtp: TestSmtpServer;
  let service: TestService;
  let dataDir: string;
  let api: ApiClient;
  let keyId: string;
  let issuer: Wallet;
  const chainId = "aa36a7";
  const run = Math.random()
    .toString(36)
    .slice(2, 4)
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, "Q");
  const symbol = `KY${run}`;
  const tokenizerEmail = `issuer-${run.toLowerCase()}@kyc.test`;
  const wallets: Record<string, HDNodeWallet> = {};
  const walletOf = (name: string) => (wallets[name] ??= Wallet.createRandom());
  const emailOf = (name: string) => `${name}-${run.toLowerCase()}@kyc.test`;
  const invite = (name: string, extra: Record<string, unknown> = {}) =>
    api.post("/create-kyc-link", { email: emailOf(name), ...extra });
  const details = (firstName: string) => ({ firstName, lastName: "Investor", country: "DE" });

  const count = async (table: string) =>
    Number((await service.services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0].n);
  const invitationCredits = async () => (await service.services.credits.balances(keyId))[INVITATION_CREDIT_METHOD];
  /** What a refusal must leave untouched. */
  const snapshot = async () => ({
    investors: await count("kyc_investors"),
    links: await count("kyc_links"),
    usedLinks: Number(
      (
        await service.services.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM kyc_links WHERE used_at IS NOT NULL",
        )
      )[0].n,
    ),
    events: await count("kyc_events"),
    credits: await invitationCredits(),
  });
  const mintBody = (userToMint: Record<string, unknown>[]) => ({
    method: "mintToken",
    chainId,
    signerAddress: issuer.address,
    tokenSymbol: symbol,
    userToMint,
  });
  const token = () => SecurityToken__factory.connect(tokenAddress, providerFor(sandbox.sepolia));
  let tokenAddress: string;
  const page = (url: string, accept = "text/html") => fetch(url, { headers: { accept } });

  before(async () => {
    sandbox = await getSandbox();
    smtp = await startSmtpServer();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-kyc-"));
    service = await startTestService(sandbox, {
      dataDir,
      env: { SMTP_URL: smtp.url, SMTP_FROM: "Onboarding <onboarding@kyc.test>" },
    });
    issuer = sandbox.accounts[1];
    const { key, record } = await service.services.apiKeys.create({ email: "ops@kyc.test", plan: "Professional" });
    keyId = record.id;
    api = service.api.withKey(key);
    await service.services.signers.add(issuer.address, "all-keys");
    await execute(api, issuer, {
      method: "newTokenization",
      chainId,
      tokenizerEmail,
      name: "KYC Fund",
      tokenSymbol: symbol,
    });
    tokenAddress = (await api.get("/get-tokenizer-info", { tokenSymbol: symbol })).body.tokenAddress;
  });

  after(async () => {
    await service?.stop();
    await smtp?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  describe("POST /create-kyc-link", () => {
    it("invites a new investor: userCreated, a single-use link under the base URL, the invitation e-mailed through SMTP with its message id recorded, one invitation credit spent", async () => {
      const before = await invitationCredits();
      const res = await invite("alice");
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({
        email: emailOf("alice"),
        needKyc: true,
        userCreated: true,
        invitationSent: true,
        kycStatus: "invited",
      });
      expect(res.body.url).to.match(
        new RegExp(`^${service.url.replace(/[.]/g, "\\.")}/kyc\\?token=[A-Za-z0-9_-]{43}$`),
      );
      const expiresIn = Date.parse(res.body.expiresAt) - Date.now();
      expect(expiresIn).to.be.within(7 * 24 * 3600_000 - 60_000, 7 * 24 * 3600_000);
      expect(await invitationCredits()).to.equal(before - 1);

      const mail = await smtp.waitFor(emailOf("alice"));
      expect(mail.from).to.equal("onboarding@kyc.test");
      expect(mail.subject).to.equal("Complete your investor onboarding");
      expect(mail.decoded).to.include(res.body.url);
      const [link] = await service.services.db.query<{ invitation_message_id: string; invitation_sent_at: Date }>(
        "SELECT invitation_message_id, invitation_sent_at FROM kyc_links WHERE token_hash = $1",
        [linkTokenHash(tokenOf(res.body.url))],
      );
      expect(link.invitation_message_id).to.equal(mail.messageId);
      expect(link.invitation_sent_at).to.not.equal(null);
    });

    it("refuses a body that is not exactly { email, needKyc? } with a 400 naming the field, and writes nothing", async () => {
      const before = await snapshot();
      expectError(
        await api.post("/create-kyc-link", { email: emailOf("x1"), foo: 1 }),
        400,
        /^foo: not a field of this body/,
      );
      expectError(
        await api.post("/create-kyc-link", { email: emailOf("x1"), needKyc: "true" }),
        400,
        "needKyc must be true or false (a JSON boolean)",
      );
      expectError(
        await api.post("/create-kyc-link", { email: emailOf("x1"), needKyc: 1 }),
        400,
        /^needKyc must be true or false/,
      );
      expectError(
        await api.post("/create-kyc-link", { email: "not-an-email" }),
        400,
        "email must be an e-mail address",
      );
      expectError(await api.post("/create-kyc-link", { needKyc: true }), 400, "email is required");
      expectError(await api.post("/create-kyc-link", [emailOf("x1")]), 400);
      expect(await snapshot()).to.deep.equal(before);
    });

    it("needs an API key: 401 without one, also with an x402 payment header, and for an invalid key", async () => {
      const anonymous = service.api;
      const before = await snapshot();
      expectError(
        await anonymous.post("/create-kyc-link", { email: emailOf("x2") }),
        401,
        "API key is required for this endpoint",
      );
      const payment = Buffer.from(JSON.stringify({ x402Version: 2, payload: {} })).toString("base64");
      expectError(
        await anonymous.post("/create-kyc-link", { email: emailOf("x2") }, { "X-PAYMENT": payment }),
        401,
        "API key is required for this endpoint",
      );
      expectError(
        await anonymous.post("/create-kyc-link", { email: emailOf("x2") }, { "payment-signature": payment }),
        401,
        "API key is required for this endpoint",
      );
      expectError(
        await anonymous
          .withKey(`tak_0000000000000000_${"A".repeat(43)}`)
          .post("/create-kyc-link", { email: emailOf("x2") }),
        401,
        "Invalid API key",
      );
      expect(await snapshot()).to.deep.equal(before);
    });

    it("calling again for a pending investor returns a fresh link and voids the old one (410 page and 410 submission)", async () => {
      const first = await invite("bob");
      const second = await invite("bob");
      expect(second.status).to.equal(200);
      expect(second.body).to.include({ userCreated: false, needKyc: true, kycStatus: "invited", invitationSent: true });
      expect(second.body.url).to.not.equal(first.body.url);

      const old = await page(first.body.url);
      expect(old.status).to.equal(410);
      expect(old.headers.get("content-type")).to.match(/^text\/html/);
      expect(await old.text()).to.include("This link is no longer valid");
      const oldJson = await page(first.body.url, "application/json");
      expect(oldJson.status).to.equal(410);
      expect(((await oldJson.json()) as any).error.code).to.equal("LINK_REPLACED");
      expectError(
        await submitThroughLink(service.api, first.body.url, walletOf("bob"), details("Bob")),
        410,
        /^This link is no longer valid/,
      );

      const fresh = await page(second.body.url);
      expect(fresh.status).to.equal(200);
      const info = await api.get("/get-investors", { tokenSymbol: symbol, kycStatus: "invited" });
      const bob = info.body.investors.find((i: any) => i.email === emailOf("bob"));
      expect(bob).to.include({ kycStatus: "invited", kycUrl: second.body.url, walletAddress: null });
    });

    it("needKyc false registers the investor without a link; an e-mail-only mint then needs a known wallet, and uses one recorded for the investor", async () => {
      const mailsBefore = smtp.messages.length;
      const res = await invite("carol", { needKyc: false });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({
        email: emailOf("carol"),
        needKyc: false,
        userCreated: true,
        invitationSent: false,
        url: null,
        kycStatus: "none",
      });
      const again = await invite("carol", { needKyc: false });
      expect(again.body).to.include({ userCreated: false, url: null });
      expect(smtp.messages.length).to.equal(mailsBefore);

      expectError(
        await api.post("/prepare-transactions", mintBody([{ investorEmail: emailOf("carol"), amount: "5" }])),
        400,
        new RegExp(`^userToMint\\.0\\.investorEmail ${emailOf("carol")}: no wallet known`),
      );
      const carol = walletOf("carol");
      await execute(api, issuer, {
        method: "whitelist",
        chainId,
        tokenSymbol: symbol,
        userToWhitelist: [{ investorAddress: carol.address, investorEmail: emailOf("carol"), whitelistStatus: true }],
      });
      const minted = await execute(api, issuer, mintBody([{ investorEmail: emailOf("carol"), amount: "5" }]));
      expect(minted.prepared.transactions).to.have.length(1); // already whitelisted: the mint only
      expect(await token().balanceOf(carol.address)).to.equal(5n * 10n ** 18n);
      const info = await api.get("/get-investor-info", { tokenSymbol: symbol, email: emailOf("carol") });
      expect(info.body).to.include({
        kycStatus: "none",
        kycUrl: null,
        walletAddress: carol.address,
        tokenBalance: "5",
      });
    });
  });

  describe("the investor's page and its submission", () => {
    it("serves the page of a live link (HTML, no external resources, strict CSP) and its state as JSON", async () => {
      const { body } = await invite("dora");
      const res = await page(body.url);
      expect(res.status).to.equal(200);
      expect(res.headers.get("content-type")).to.match(/^text\/html/);
      expect(res.headers.get("content-security-policy")).to.match(/default-src 'none'; script-src 'nonce-[^']+'/);
      expect(res.headers.get("referrer-policy")).to.equal("no-referrer");
      expect(res.headers.get("cache-control")).to.equal("no-store");
      const html = await res.text();
      expect(html)
        .to.include("Investor onboarding")
        .and.include(emailOf("dora"))
        .and.include('id="firstName"')
        .and.include('value="GB"');
      expect(html).to.not.match(/(src|href)="https?:/);
      const json = await page(body.url, "application/json");
      expect(json.status).to.equal(200);
      expect(await json.json()).to.deep.equal({
        email: emailOf("dora"),
        kycStatus: "invited",
        expiresAt: body.expiresAt,
      });
    });

    it("unknown and malformed links: a clear 404 page, or a JSON 404", async () => {
      const unknown = `${service.url}/kyc?token=${"A".repeat(43)}`;
      for (const url of [unknown, `${service.url}/kyc?token=short`, `${service.url}/kyc`]) {
        const res = await page(url);
        expect(res.status, url).to.equal(404);
        expect(await res.text()).to.include("This link is not valid");
      }
      const json = await page(unknown, "application/json");
      expect(json.status).to.equal(404);
      expect(((await json.json()) as any).error.code).to.equal("NOT_FOUND");
      expectError(
        await submitThroughLink(service.api, unknown, walletOf("dora"), details("Dora")),
        404,
        /^This link is not valid/,
      );
    });

    it("refuses a bad submission with a 4xx naming the field, and writes nothing", async () => {
      const dave = await invite("dave");
      const erin = await invite("erin");
      const daveToken = tokenOf(dave.body.url);
      const w = walletOf("dave");
      const other = Wallet.createRandom();
      const good = details("Dave");
      const before = await snapshot();
      const signAndSubmit = async (message: string, signer: HDNodeWallet, body: Record<string, unknown> = {}) =>
        service.api.post("/kyc/submit", {
          token: daveToken,
          ...good,
          walletAddress: w.address,
          message,
          signature: await signer.signMessage(message),
          ...body,
        });
      const issued = (await requestMessage(service.api, daveToken, w, good)).body.message as string;
      expect(issued)
        .to.include(`Nonce: `)
        .and.include(`wants you to sign in with your Ethereum account:\n${w.address}`);

      // a signature over another link's nonce
      const erinMessage = (await requestMessage(service.api, tokenOf(erin.body.url), w, good)).body.message as string;
      expectError(
        await signAndSubmit(erinMessage, w),
        400,
        "message nonce is not this link's nonce: it was signed for another link",
      );
      // a signature by another wallet than the claimed one
      expectError(
        await signAndSubmit(issued, other),
        400,
        `signature was made by ${other.address}, not by walletAddress ${w.address}`,
      );
      // a message for another wallet than walletAddress
      const forOther = (await requestMessage(service.api, daveToken, other, good)).body.message as string;
      expectError(
        await signAndSubmit(forOther, other),
        400,
        `message is for wallet ${other.address}, not for walletAddress ${w.address}`,
      );
      // an expired message
      const past = (ms: number) => new Date(Date.now() - ms).toISOString();
      const expired = issued
        .replace(/Issued At: .*/, `Issued At: ${past(20 * 60_000)}`)
        .replace(/Expiration Time: .*/, `Expiration Time: ${past(10 * 60_000)}`);
      expectError(await signAndSubmit(expired, w), 400, /^message expired at/);
      // details other than the signed ones
      expectError(
        await signAndSubmit(issued, w, { firstName: "Eve" }),
        400,
        "the signed message does not carry the submitted firstName",
      );
      expectError(
        await signAndSubmit(issued, w, { country: "FR" }),
        400,
        "the signed message does not carry the submitted country",
      );
      // a message for another site
      expectError(
        await signAndSubmit(issued.replace(/^\S+ wants/, "evil.example wants"), w),
        400,
        /^message was issued for evil\.example/,
      );
      // not a message of this service
      expectError(await signAndSubmit("hello", w), 400, /^message is not a sign-in message/);
      // bad fields
      expectError(
        await signAndSubmit(issued, w, { country: "XX" }),
        400,
        "country must be an ISO 3166-1 alpha-2 country code such as DE or US",
      );
      expectError(await signAndSubmit(issued, w, { country: "DEU" }), 400, /^country must be an ISO 3166-1 alpha-2/);
      expectError(await signAndSubmit(issued, w, { firstName: "" }), 400, "firstName is required");
      expectError(await signAndSubmit(issued, w, { lastName: "<script>" }), 400, /^lastName must be letters/);
      expectError(
        await signAndSubmit(issued, w, { walletAddress: "0x12" }),
        400,
        /^walletAddress must be a 0x-prefixed/,
      );
      expectError(await signAndSubmit(issued, w, { signature: "0x1234" }), 400, /^signature must be a 65-byte/);
      expectError(await signAndSubmit(issued, w, { extra: true }), 400);
      expectError(
        await requestMessage(service.api, daveToken, w, { ...good, country: "XX" }),
        400,
        /^country must be an ISO 3166-1/,
      );
      expectError(
        await service.api.post("/kyc/message", {
          token: daveToken,
          ...good,
          walletAddress: w.address,
          chainId: "11155111",
        }),
        400,
        /^chainId/,
      );

      expect(await snapshot()).to.deep.equal(before);
      const record = await service.services.kyc.findInScope([keyId], keyId, emailOf("dave"));
      expect(record).to.include({ status: "invited", walletAddress: null, firstName: null });
      expect((await page(dave.body.url)).status).to.equal(200);

      // the link still works for a correct submission; lower-case country codes are accepted
      const ok = await submitThroughLink(service.api, dave.body.url, w, { ...good, country: "de" });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(ok.body).to.include({ status: "submitted", walletAddress: w.address, country: "DE" });
    });
  });

  describe("the operator's review and what it unlocks", () => {
    it("happy path: submission → pending (mint refused) → `npm run admin -- kyc approve` → get-investor-info shows it → mintToken with investorEmail only mints to the verified wallet", async () => {
      const alice = walletOf("alice");
      const url = (await api.get("/get-investor-info", { tokenSymbol: symbol, email: emailOf("alice") })).body
        .kycUrl as string;
      expect(url).to.match(/\/kyc\?token=/);
      const submitted = await submitThroughLink(service.api, url, alice, {
        firstName: "Alice",
        lastName: "Liddell",
        country: "GB",
      });
      expect(submitted.status, JSON.stringify(submitted.body)).to.equal(200);
      expect(submitted.body).to.deep.include({
        status: "submitted",
        email: emailOf("alice"),
        firstName: "Alice",
        lastName: "Liddell",
        country: "GB",
        walletAddress: alice.address,
      });

      // the link was single-use: its page now says the details are under review, a new submission is refused
      const used = await page(url);
      expect(used.status).to.equal(200);
      expect(await used.text())
        .to.include("Your details are being reviewed")
        .and.not.include("<form");
      expectError(
        await submitThroughLink(service.api, url, alice, details("Alice")),
        410,
        /^This link has already been used/,
      );

      const pending = await api.get("/get-investor-info", { tokenSymbol: symbol, email: emailOf("alice") });
      expect(pending.body).to.include({
        kycStatus: "submitted",
        kycUrl: null,
        walletAddress: alice.address,
        firstName: "Alice",
        whitelisted: false,
        tokenBalance: "0",
      });
      expectError(
        await api.post("/prepare-transactions", mintBody([{ investorEmail: emailOf("alice"), amount: "10" }])),
        400,
        new RegExp(`^userToMint\\.0\\.investorEmail ${emailOf("alice")}: KYC pending \\(status submitted\\)`),
      );

      const listed = await adminCli(dataDir, "kyc", "list", "--status", "submitted");
      expect(listed.code, listed.stderr).to.equal(0);
      const entry = JSON.parse(listed.stdout).find((r: any) => r.email === emailOf("alice"));
      expect(entry).to.include({ status: "submitted", walletAddress: alice.address, country: "GB", keyId });
      expect(entry.signedMessage).to.include(alice.address);
      expect(listed.stdout).to.not.match(/token=|proof_signature/);

      const approved = await adminCli(dataDir, "kyc", "approve", emailOf("alice"));
      expect(approved.code, approved.stderr).to.equal(0);
      expect(JSON.parse(approved.stdout)).to.include({
        status: "approved",
        reviewedBy: "operator",
        walletAddress: alice.address,
      });

      const info = await api.get("/get-investor-info", { tokenSymbol: symbol, email: emailOf("alice") });
      expect(info.status).to.equal(200);
      expect(info.body).to.include({
        kycStatus: "approved",
        kycUrl: null,
        walletAddress: alice.address,
        firstName: "Alice",
        lastName: "Liddell",
      });
      expect(info.body.kyc).to.include({
        status: "approved",
        walletAddress: alice.address,
        country: "GB",
        reviewedBy: "operator",
      });

      const minted = await execute(api, issuer, mintBody([{ investorEmail: emailOf("alice"), amount: "10" }]));
      expect(minted.prepared.transactions).to.have.length(2); // whitelist, then mint
      expect(await token().balanceOf(alice.address)).to.equal(10n * 10n ** 18n);
      expect(await token().isWhitelisted(alice.address)).to.equal(true);
      const after = await api.get("/get-investor-info", { tokenSymbol: symbol, email: emailOf("alice") });
      expect(after.body).to.include({
        walletAddress: alice.address,
        tokenBalance: "10",
        whitelisted: true,
        kycStatus: "approved",
      });

      const investors = await api.get("/get-investors", { tokenSymbol: symbol, kycStatus: "approved" });
      expect(investors.status).to.equal(200);
      expect(investors.body.investors).to.have.length(1);
      expect(investors.body.investors[0]).to.deep.include({
        email: emailOf("alice"),
        kycStatus: "approved",
        kycWalletAddress: alice.address,
        walletAddress: alice.address,
      });

      // an approved investor is not invited again
      expectError(await invite("alice"), 409, /is already approved/);
    });

    it("a premint given only the investor's e-mail uses its approved wallet; an unknown e-mail is a 400", async () => {
      const premintSymbol = `KP${run}`;
      expectError(
        await api.post("/prepare-transactions", {
          method: "newTokenization",
          chainId,
          signerAddress: issuer.address,
          tokenizerEmail,
          name: "KYC Premint",
          tokenSymbol: premintSymbol,
          preMints: [{ amount: "3" }],
          initialHolders: [{ email: emailOf("nobody") }],
        }),
        400,
        new RegExp(`^initialHolders\\.0\\.email ${emailOf("nobody")}: no wallet known`),
      );
      expectError(
        await api.post("/prepare-transactions", {
          method: "newTokenization",
          chainId,
          signerAddress: issuer.address,
          tokenizerEmail,
          name: "KYC Premint",
          tokenSymbol: premintSymbol,
          preMints: [{ amount: "3", investorEmail: emailOf("erin") }],
        }),
        400,
        new RegExp(`^preMints\\.0\\.investorEmail ${emailOf("erin")}: KYC pending \\(status invited\\)`),
      );
      await execute(api, issuer, {
        method: "newTokenization",
        chainId,
        tokenizerEmail,
        name: "KYC Premint",
        tokenSymbol: premintSymbol,
        preMints: [{ amount: "3" }],
        initialHolders: [{ email: emailOf("alice") }],
      });
      const address = (await api.get("/get-tokenizer-info", { tokenSymbol: premintSymbol })).body.tokenAddress;
      expect(
        await SecurityToken__factory.connect(address, providerFor(sandbox.sepolia)).balanceOf(
          walletOf("alice").address,
        ),
      ).to.equal(3n * 10n ** 18n);
    });

    it("KYC pending (invited) and an unknown e-mail are 400s for mintToken and whitelist", async () => {
      expectError(
        await api.post("/prepare-transactions", mintBody([{ investorEmail: emailOf("erin"), amount: "1" }])),
        400,
        new RegExp(`^userToMint\\.0\\.investorEmail ${emailOf("erin")}: KYC pending \\(status invited\\)`),
      );
      expectError(
        await api.post("/prepare-transactions", mintBody([{ investorEmail: emailOf("zed"), amount: "1" }])),
        400,
        new RegExp(`^userToMint\\.0\\.investorEmail ${emailOf("zed")}: no wallet known for this investor`),
      );
      expectError(
        await api.post("/prepare-transactions", {
          method: "whitelist",
          chainId,
          signerAddress: issuer.address,
          tokenSymbol: symbol,
          userToWhitelist: [{ investorEmail: emailOf("erin") }],
        }),
        400,
        /KYC pending/,
      );
      expectError(
        await api.post("/prepare-transactions", mintBody([{ amount: "1" }])),
        400,
        "userToMint.0.investorAddress or userToMint.0.investorEmail is required",
      );
    });

    it("a rejection (the admin command function) blocks e-mail-only mints and whitelisting with 'KYC rejected'; removal from the whitelist still works", async () => {
      // dave submitted in the previous block
      const rejected = (await runAdminCommand(service.services, {
        command: "kyc.reject",
        email: emailOf("dave"),
        reason: "documents do not match",
      })) as any;
      expect(rejected).to.include({ status: "rejected", reason: "documents do not match", reviewedBy: "operator" });
      expectError(
        await api.post("/prepare-transactions", mintBody([{ investorEmail: emailOf("dave"), amount: "1" }])),
        400,
        `userToMint.0.investorEmail ${emailOf("dave")}: KYC rejected (documents do not match); its wallet is not used`,
      );
      expectError(
        await api.post("/prepare-transactions", {
          method: "whitelist",
          chainId,
          signerAddress: issuer.address,
          tokenSymbol: symbol,
          userToWhitelist: [{ investorEmail: emailOf("dave") }],
        }),
        400,
        /KYC rejected/,
      );
      const removal = await api.post("/prepare-transactions", {
        method: "whitelist",
        chainId,
        signerAddress: issuer.address,
        tokenSymbol: symbol,
        userToWhitelist: [{ investorEmail: emailOf("dave"), whitelistStatus: false }],
      });
      expect(removal.status, JSON.stringify(removal.body)).to.equal(200);
      const info = await api.get("/get-investor-info", { tokenSymbol: symbol, email: emailOf("dave") });
      expect(info.body).to.include({ kycStatus: "rejected", kycUrl: null, walletAddress: walletOf("dave").address });
      expect(info.body.kyc).to.include({ reason: "documents do not match" });

      // transitions the review refuses (409) or cannot apply (400/404), writing nothing
      const before = await snapshot();
      await expectAdminError({ command: "kyc.approve", email: emailOf("dave") }, 409, /only a submitted investor/);
      await expectAdminError({ command: "kyc.approve", email: emailOf("erin") }, 409, /is invited/);
      await expectAdminError({ command: "kyc.reject", email: emailOf("carol"), reason: "x" }, 409, /is none/);
      await expectAdminError(
        { command: "kyc.reject", email: emailOf("erin"), reason: " " },
        400,
        /--reason is required/,
      );
      await expectAdminError({ command: "kyc.approve", email: emailOf("nobody") }, 404, /No investor/);
      expect(await snapshot()).to.deep.equal(before);

      // a new attempt after a rejection: a fresh link, the old submission discarded
      const again = await invite("dave");
      expect(again.body).to.include({ userCreated: false, kycStatus: "invited" });
      expect(again.body.url).to.be.a("string");
      const history = await service.services.kyc.events(
        (await service.services.kyc.findInScope([keyId], keyId, emailOf("dave")))!.id,
      );
      expect(history.map((e) => e.event)).to.deep.equal([
        "created",
        "link",
        "submitted",
        "rejected",
        "reinvited",
        "link",
      ]);
    });

    it("the CLI refuses a rejection without --reason before anything is opened (exit 2, JSON error naming the flag)", async () => {
      const res = await adminCli(dataDir, "kyc", "reject", emailOf("erin"));
      expect(res.code).to.equal(2);
      expect(JSON.parse(res.stderr.trim().split("\n").pop()!).error).to.include("kyc reject: --reason is required");
    });

    async function expectAdminError(cmd: Parameters<typeof runAdminCommand>[1], status: number, message: RegExp) {
      try {
        await runAdminCommand(service.services, cmd);
      } catch (error) {
        expect((error as { status: number }).status, (error as Error).message).to.equal(status);
        expect((error as Error).message).to.match(message);
        return;
      }
      expect.fail(`${cmd.command} should have failed`);
    }
  });

  describe("scope, credits and the document", () => {
    it("another key that did not tokenize under this tokenizer e-mail neither sees nor shares the investors", async () => {
      const { key } = await service.services.apiKeys.create({ email: "stranger@kyc.test", plan: "Starter" });
      const stranger = service.api.withKey(key);
      expect((await stranger.get("/get-investors")).body).to.deep.include({ investors: [], total: 0 });
      expectError(await stranger.get("/get-investors", { tokenSymbol: symbol }), 403, "Unauthorized token symbol");
      const own = await stranger.post("/create-kyc-link", { email: emailOf("alice"), needKyc: false });
      expect(own.body).to.include({ userCreated: true, kycStatus: "none" });
      const mine = await api.get("/get-investors");
      expect(mine.body.investors.find((i: any) => i.email === emailOf("alice"))).to.include({ kycStatus: "approved" });
    });

    it("out of invitation credits → 403 Invitation credit limit exceeded, nothing written", async () => {
      const { key, record } = await service.services.apiKeys.create({ email: "small@kyc.test", plan: "Starter" });
      const small = service.api.withKey(key);
      for (let i = 0; i < 10; i++)
        expect(
          (await small.post("/create-kyc-link", { email: `n${i}-${run.toLowerCase()}@kyc.test`, needKyc: false }))
            .status,
        ).to.equal(200);
      expect((await service.services.credits.balances(record.id))[INVITATION_CREDIT_METHOD]).to.equal(0);
      const investors = await count("kyc_investors");
      const res = await small.post("/create-kyc-link", { email: `n10-${run.toLowerCase()}@kyc.test` });
      expectError(res, 403, "Invitation credit limit exceeded");
      expect(res.body.error.code).to.equal("OUT_OF_CREDITS");
      expect(await count("kyc_investors")).to.equal(investors);
    });

    it("/openapi.json documents the endpoint (exactly { email, needKyc? }), the page and get-investors", async () => {
      const doc = (await service.api.get("/openapi.json")).body;
      const create = doc.paths["/create-kyc-link"].post;
      expect(create.security).to.deep.equal([{ apiKey: [] }]);
      const schema = create.requestBody.content["application/json"].schema;
      expect(schema.additionalProperties).to.equal(false);
      expect(Object.keys(schema.properties)).to.deep.equal(["email", "needKyc"]);
      expect(schema.required).to.deep.equal(["email"]);
      expect(doc.paths["/kyc"].get.security).to.deep.equal([]);
      expect(doc.paths["/kyc/submit"].post.requestBody.content["application/json"].schema.required).to.include.members([
        "token",
        "message",
        "signature",
        "country",
      ]);
      expect(doc.paths["/get-investors"].get.parameters.map((p: any) => p.name)).to.include.members([
        "tokenSymbol",
        "kycStatus",
        "limit",
        "offset",
      ]);
    });
  });

  describe("without SMTP and with a short link lifetime", () => {
    let short: TestService;
    let shortApi: ApiClient;

    before(async () => {
      short = await startTestService(sandbox, { env: { KYC_LINK_TTL_HOURS: String(2 / 3600) } });
      const { key } = await short.services.apiKeys.create({ email: "short@kyc.test", plan: "Starter" });
      shortApi = short.api.withKey(key);
    });

    after(async () => short?.stop());

    it("invitationSent is false and the issuer gets the URL to deliver; the expired link answers 410 (page, JSON, submission) and writes nothing", async () => {
      const res = await shortApi.post("/create-kyc-link", { email: emailOf("frank") });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ invitationSent: false, userCreated: true, needKyc: true });
      expect(res.body.url).to.match(/\/kyc\?token=/);
      const issued = await requestMessage(short.api, tokenOf(res.body.url), walletOf("frank"), details("Frank"));
      expect(issued.status).to.equal(200);
      expect(Date.parse(issued.body.expirationTime)).to.be.at.most(Date.parse(res.body.expiresAt));

      await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(res.body.expiresAt) - Date.now()) + 100));
      const expired = await page(res.body.url);
      expect(expired.status).to.equal(410);
      expect(await expired.text()).to.include("This link has expired");
      const json = await page(res.body.url, "application/json");
      expect(((await json.json()) as any).error.code).to.equal("LINK_EXPIRED");
      const signature = await walletOf("frank").signMessage(issued.body.message);
      expectError(
        await short.api.post("/kyc/submit", {
          token: tokenOf(res.body.url),
          ...details("Frank"),
          walletAddress: walletOf("frank").address,
          message: issued.body.message,
          signature,
        }),
        410,
        /^This link has expired/,
      );
      const [record] = await short.services.kyc.list({ email: emailOf("frank") });
      expect(record).to.include({ status: "invited", walletAddress: null });
      const info = await shortApi.get("/get-investors");
      expect(info.body.investors[0]).to.include({ email: emailOf("frank"), kycStatus: "invited", kycUrl: null });
    });
  });
});
