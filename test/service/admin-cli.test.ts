// tier: e2e
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import { openDb } from "../../service/store/db";
import { migrate, migrationFiles } from "../../service/store/migrate";
import { cliError, cliJson, migrateWithCli, runAdminCli, type CliResult } from "../helpers/admin-cli";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

const ROOT = path.resolve(__dirname, "../..");

const admin = (dataDir: string, ...args: string[]) => runAdminCli(dataDir, args);
const json = cliJson;
const errorOf = (result: CliResult) => {
  const error = cliError(result);
  expect(error).to.be.a("string");
  return error;
};

describe("operator CLI (scripts/admin.ts)", function () {
  this.timeout(180_000);

  it("package.json runs it and the migrations through bin/run.js (the build on a server, the sources in a checkout)", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
    expect(pkg.scripts.admin).to.equal("node bin/run.js admin");
    expect(pkg.scripts.migrate).to.equal("node bin/run.js migrate");
  });

  it("--help and <command> --help print readable usage on stdout, exit 0; no command or an unknown one is exit 2 naming the commands", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-admin-help-"));
    try {
      const help = await admin(dataDir, "--help");
      expect(help.code).to.equal(0);
      expect(help.stderr).to.equal("");
      expect(help.stdout).to.match(/^usage: npm run admin -- <command>/);
      expect(help.stdout).to.include("\n  keys create --email E --plan Starter|Professional|Enterprise\n");
      expect(help.stdout).to.include("prices set --operation OP --amount USDC");
      const one = await admin(dataDir, "prices", "set", "--help");
      expect(one.code).to.equal(0);
      expect(one.stdout).to.match(/^usage: npm run admin -- prices set --operation OP --amount USDC\n/);
      expect(one.stdout).to.include("--operation OP (required)");
      for (const args of [["frobnicate"], ["keys", "delete"], []]) {
        const result = await admin(dataDir, ...args);
        expect(result.code, args.join(" ")).to.equal(2);
        expect(result.stdout).to.equal("");
        expect(errorOf(result)).to.include("commands: keys create, keys list");
      }
      expect(fs.readdirSync(dataDir), "nothing opened").to.deep.equal([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("every argument is checked before anything is opened, exit 2 with the valid values: operations from the price table, plans, methods, addresses, statuses, unknown flags", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-admin-args-"));
    try {
      const refused: [string[], string][] = [
        [["prices", "set", "--operation", "mintTokn", "--amount", "1"], "prices set: --operation must be one of "],
        [
          ["prices", "set", "--operation", "agentCreateToken", "--amount", "1.1234567"],
          "--amount must be a USDC amount with at most 6 decimals",
        ],
        [["prices", "set", "--operation", "mintToken", "--amount", "1"], "prices set: --operation must be one of "],
        [
          ["keys", "create", "--email", "a@b.co", "--plan", "Gold"],
          '--plan must be one of Starter, Professional, Enterprise, got "Gold"',
        ],
        [["keys", "create", "--email", "a@b.co"], "keys create: --plan is required"],
        [
          ["credits", "add", "--key-id", "0123456789abcdef", "--method", "nope", "--amount", "5"],
          "--method must be one of ",
        ],
        [
          ["credits", "add", "--key-id", "0123456789abcdef", "--method", "mintToken", "--amount", "-3"],
          "--amount must be a positive whole number",
        ],
        [["signers", "add", "0x1234"], "--address must be a 0x-prefixed 20-byte hex address"],
        [["kyc", "list", "--status", "done"], "--status must be one of none, invited, submitted, approved, rejected"],
        [["keys", "list", "--plan", "Starter"], "keys list: unknown flag --plan"],
        [["keys", "revoke", "not-an-id"], "--key-id must be a key id"],
      ];
      // Four at a time: each is a process of its own that refuses before it opens anything.
      const results: CliResult[] = [];
      for (let i = 0; i < refused.length; i += 4)
        results.push(...(await Promise.all(refused.slice(i, i + 4).map(([args]) => admin(dataDir, ...args)))));
      refused.forEach(([args, message], i) => {
        expect(results[i].code, args.join(" ")).to.equal(2);
        expect(errorOf(results[i]), args.join(" ")).to.include(message);
      });
      const operations = errorOf(await admin(dataDir, "prices", "set", "--operation", "x", "--amount", "1"));
      for (const name of ["agentCreateToken", "ramsExecute", "get-agent-info", "rams/mandate", "faucet"])
        expect(operations).to.include(name);
      expect(fs.readdirSync(dataDir)).to.deep.equal([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses a database whose schema is older or newer than it knows, saying which; npm run migrate brings it up", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-admin-schema-"));
    try {
      const files = migrationFiles();
      const db = await openDb({ dataDir: path.join(dataDir, "sandbox", "pglite") });
      await migrate(db, { before: files.at(-1) });
      await db.close();
      const older = await admin(dataDir, "keys", "list");
      expect(older.code).to.equal(1);
      expect(errorOf(older)).to.equal(
        `The database's schema is older than this admin tool: 1 migration(s) not applied (${files.at(-1)}). Run \`npm run migrate\` with the same configuration, then start again.`,
      );
      const migrated = cliJson(await runAdminCli(dataDir, [], {}, "migrate"));
      expect(migrated).to.deep.include({ applied: [files.at(-1)], schema: files.at(-1), database: "pglite" });
      expect(cliJson(await runAdminCli(dataDir, [], {}, "migrate")).applied).to.deep.equal([]);
      expect(json(await admin(dataDir, "keys", "list"))).to.deep.equal([]);

      const again = await openDb({ dataDir: path.join(dataDir, "sandbox", "pglite") });
      await again.query("INSERT INTO schema_migrations (version) VALUES ('999_from_the_future.sql')");
      await again.close();
      const newer = await admin(dataDir, "keys", "list");
      expect(errorOf(newer)).to.match(
        /^The database's schema is newer than this admin tool knows: it has 999_from_the_future\.sql, migrated by a newer version/,
      );
      const refused = await runAdminCli(dataDir, [], {}, "migrate");
      expect(refused.code).to.equal(1);
      expect(errorOf(refused)).to.include("newer than this version");
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describe("without a running service: opens the embedded database in DATA_DIR", () => {
    let dataDir: string;
    let keyId: string;
    let apiKey: string;
    const signer = Wallet.createRandom().address;

    before(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-admin-"));
      await migrateWithCli(dataDir);
    });

    after(() => {
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("keys create prints the key once, its id, plan and credits", async () => {
      const created = json(await admin(dataDir, "keys", "create", "--email", "a@b.co", "--plan", "Starter"));
      expect(created.apiKey).to.match(/^tak_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
      expect(created.id).to.equal(created.apiKey.slice(4, 20));
      expect(created).to.deep.include({ email: "a@b.co", plan: "Starter", revokedAt: null });
      expect(created.credits.mintToken).to.equal(10);
      expect(created.credits.newTokenization).to.equal(10);
      expect(created.credits.faucet).to.equal(10);
      keyId = created.id;
      apiKey = created.apiKey;
      expect(fs.existsSync(path.join(dataDir, "sandbox", "pglite"))).to.equal(true);
    });

    it("keys list lists it, without the clear key", async () => {
      const result = await admin(dataDir, "keys", "list");
      const list = json(result);
      expect(list).to.be.an("array").with.length(1);
      expect(list[0]).to.deep.include({ id: keyId, email: "a@b.co", plan: "Starter", revokedAt: null });
      expect(list[0]).to.not.have.property("apiKey");
      expect(result.stdout).to.not.include(apiKey);
      expect(result.stdout).to.not.include(apiKey.slice(21));
    });

    it("credits add tops up one method", async () => {
      const added = json(
        await admin(dataDir, "credits", "add", "--key-id", keyId, "--method", "mintToken", "--amount", "5"),
      );
      expect(added).to.deep.equal({ keyId, method: "mintToken", balance: 15 });
      const [listed] = json(await admin(dataDir, "keys", "list"));
      expect(listed.credits.mintToken).to.equal(15);
      expect(listed.credits.whitelist).to.equal(10);
    });

    it("credits add refuses an unknown key (exit 1, JSON error)", async () => {
      const key = await admin(
        dataDir,
        "credits",
        "add",
        "--key-id",
        "0000000000000000",
        "--method",
        "mintToken",
        "--amount",
        "5",
      );
      expect(key.code).to.equal(1);
      expect(errorOf(key)).to.include("0000000000000000");
    });

    it("signers add / list / remove, per key (--key-id) or for every key (--all-keys): one of the two, never both", async () => {
      expect(json(await admin(dataDir, "signers", "add", signer.toLowerCase(), "--key-id", keyId))).to.deep.equal({
        address: signer,
        keyId,
        whitelisted: true,
      });
      expect(json(await admin(dataDir, "signers", "list"))).to.deep.equal([{ address: signer, keyId }]);
      expect(json(await admin(dataDir, "signers", "add", signer, "--all-keys"))).to.deep.equal({
        address: signer,
        allKeys: true,
        whitelisted: true,
      });
      expect(json(await admin(dataDir, "signers", "list", "--key-id", keyId))).to.deep.equal([
        { address: signer, keyId },
        { address: signer, allKeys: true },
      ]);
      expect(json(await admin(dataDir, "signers", "remove", signer, "--all-keys"))).to.deep.equal({
        address: signer,
        allKeys: true,
        whitelisted: false,
      });
      expect(json(await admin(dataDir, "signers", "remove", signer, "--key-id", keyId))).to.deep.equal({
        address: signer,
        keyId,
        whitelisted: false,
      });
      expect(json(await admin(dataDir, "signers", "list"))).to.deep.equal([]);
      const again = await admin(dataDir, "signers", "remove", signer, "--key-id", keyId);
      expect(again.code).to.equal(1);
      expect(errorOf(again)).to.include("not a whitelisted signer");
      for (const args of [
        ["signers", "add", signer],
        ["signers", "add", signer, "--key-id", keyId, "--all-keys"],
      ]) {
        const refused = await admin(dataDir, ...args);
        expect(refused.code, args.join(" ")).to.equal(2);
        expect(refused.stderr).to.match(/--key-id.*--all-keys/);
      }
      const unknownKey = await admin(dataDir, "signers", "add", signer, "--key-id", "0000000000000000");
      expect(unknownKey.code).to.equal(1);
      expect(errorOf(unknownKey)).to.include("0000000000000000");
    });

    it("keys revoke marks the key revoked", async () => {
      const revoked = json(await admin(dataDir, "keys", "revoke", keyId));
      expect(revoked.id).to.equal(keyId);
      expect(revoked.revokedAt).to.be.a("string");
      const [listed] = json(await admin(dataDir, "keys", "list"));
      expect(listed.revokedAt).to.equal(revoked.revokedAt);
      const unknown = await admin(dataDir, "keys", "revoke", "--key-id", "0000000000000000");
      expect(unknown.code).to.equal(1);
      expect(errorOf(unknown)).to.include("0000000000000000");
    });

    it("prices set takes an operation of the price table and lists it", async () => {
      expect(
        json(await admin(dataDir, "prices", "set", "--operation", "agentCreateToken", "--amount", "0.25")),
      ).to.deep.equal({ operation: "agentCreateToken", amount: "0.25", amountRaw: "250000" });
      expect(json(await admin(dataDir, "prices", "list")).overrides).to.deep.include({
        operation: "agentCreateToken",
        amount: "0.25",
      });
    });

    it("operators add (a one-time link, or a password from a file) / list / link / remove, and the audit log of it all", async () => {
      const added = json(await admin(dataDir, "operators", "add", "--email", "Ops@Example.com", "--role", "admin"));
      expect(added).to.deep.include({ email: "ops@example.com", role: "admin", hasPassword: false });
      expect(added.signInLink.url).to.match(/^http:\/\/127\.0\.0\.1:3000\/console\/sign-in\?token=[A-Za-z0-9_-]{43}$/);
      const passwordFile = path.join(dataDir, "reviewer-password");
      fs.writeFileSync(passwordFile, "a reviewer's long password\n", { mode: 0o600 });
      const reviewer = json(
        await admin(
          dataDir,
          "operators",
          "add",
          "--email",
          "rev@example.com",
          "--role",
          "reviewer",
          "--password-file",
          passwordFile,
        ),
      );
      expect(reviewer).to.deep.include({ role: "reviewer", hasPassword: true });
      expect(reviewer).to.not.have.property("signInLink");
      expect(json(await admin(dataDir, "operators", "list")).map((o: { email: string }) => o.email)).to.deep.equal([
        "ops@example.com",
        "rev@example.com",
      ]);
      const link = json(await admin(dataDir, "operators", "link", "ops@example.com"));
      expect(link.signInLink.url).to.not.equal(added.signInLink.url);
      const twice = await admin(dataDir, "operators", "add", "--email", "ops@example.com", "--role", "viewer");
      expect(twice.code).to.equal(1);
      expect(errorOf(twice)).to.include("exists already");
      const badRole = await admin(dataDir, "operators", "add", "--email", "x@example.com", "--role", "root");
      expect(badRole.code).to.equal(2);
      expect(badRole.stderr).to.include("--role must be one of viewer, reviewer, admin");
      fs.writeFileSync(passwordFile, "short\n");
      const short = await admin(dataDir, "operators", "password", "rev@example.com", "--password-file", passwordFile);
      expect(short.code).to.equal(1);
      expect(errorOf(short)).to.include("at least 12 characters");
      expect(json(await admin(dataDir, "operators", "remove", "rev@example.com"))).to.deep.include({
        email: "rev@example.com",
        removed: true,
      });

      const audit = json(await admin(dataDir, "audit", "list", "--limit", "5"));
      expect(
        audit.map((e: { actor: string; action: string; target: string }) => `${e.actor} ${e.action} ${e.target}`),
      ).to.deep.equal([
        "admin tool operators.remove rev@example.com",
        "admin tool operators.link ops@example.com",
        "admin tool operators.add rev@example.com",
        "admin tool operators.add Ops@Example.com",
        "admin tool prices.set agentCreateToken",
      ]);
      const printed = JSON.stringify(audit);
      expect(printed)
        .to.not.include(link.signInLink.url.split("token=")[1])
        .and.not.include("reviewer's long password");
      expect(audit[4]).to.deep.include({
        before: null,
        after: { operation: "agentCreateToken", amount: "0.25", amountRaw: "250000" },
      });
    });
  });

  describe("while a service runs on the embedded database: routes through POST /admin/command", () => {
    let sandbox: Sandbox;
    let service: TestService;
    let dataDir: string;

    before(async () => {
      sandbox = await getSandbox();
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-admin-live-"));
      service = await startTestService(sandbox, { dataDir });
    });

    after(async () => {
      await service?.stop();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("the service leaves service.json (pid, url) and the admin token in <DATA_DIR>/sandbox", () => {
      const runtime = JSON.parse(fs.readFileSync(path.join(dataDir, "sandbox", "service.json"), "utf8"));
      expect(runtime).to.include({ pid: process.pid, url: service.url });
      const token = fs.readFileSync(path.join(dataDir, "sandbox", "admin-token"), "utf8").trim();
      expect(token.length).to.be.greaterThanOrEqual(24);
      if (process.platform !== "win32") {
        expect(fs.statSync(path.join(dataDir, "sandbox", "admin-token")).mode & 0o077).to.equal(0);
      }
    });

    it("keys create through the CLI lands in the service's database: the running service accepts the key", async () => {
      const created = json(
        await admin(dataDir, "keys", "create", "--email", "ops@example.com", "--plan", "Professional"),
      );
      expect(created.plan).to.equal("Professional");
      expect(created.credits.mintToken).to.equal(100);
      // The service runs on an in-memory database: only a command that went through it can have created this key.
      const verified = await service.services.apiKeys.verify(created.apiKey);
      expect(verified?.id).to.equal(created.id);
      expect(fs.existsSync(path.join(dataDir, "sandbox", "pglite"))).to.equal(false);

      const read = await service.api.withKey(created.apiKey).get("/get-token-info");
      expect(read.status, JSON.stringify(read.body)).to.equal(200);
      expect(read.body.tokenSymbols).to.deep.equal([]);

      const added = json(
        await admin(dataDir, "credits", "add", "--key-id", created.id, "--method", "whitelist", "--amount", "7"),
      );
      expect(added.balance).to.equal(107);
      expect((await service.services.credits.balances(created.id)).whitelist).to.equal(107);

      const signer = Wallet.createRandom().address;
      json(await admin(dataDir, "signers", "add", signer, "--key-id", created.id));
      expect(await service.services.signers.isAllowed(signer, created.id)).to.equal(true);
      expect(await service.services.signers.isAllowed(signer, undefined)).to.equal(false);

      json(await admin(dataDir, "keys", "revoke", created.id));
      expect(await service.services.apiKeys.verify(created.apiKey)).to.equal(undefined);
    });

    it("operators add --password-file and operators password work through the running service; the password ends the operator's sessions", async () => {
      const passwordFile = path.join(dataDir, "ops-password");
      fs.writeFileSync(passwordFile, "lantern orbit pickle saffron\n", { mode: 0o600 });
      const added = json(
        await admin(
          dataDir,
          "operators",
          "add",
          "--email",
          "live@example.com",
          "--role",
          "admin",
          "--password-file",
          passwordFile,
        ),
      );
      expect(added).to.deep.include({ email: "live@example.com", role: "admin", hasPassword: true });
      const signIn = (password: string) =>
        service.api.post("/console/api/session", { email: "live@example.com", password });
      const first = await signIn("lantern orbit pickle saffron");
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const cookie = first.headers.get("set-cookie")!.split(";")[0];

      fs.writeFileSync(passwordFile, "aaaaaaaaaaaa\n");
      const weak = await admin(dataDir, "operators", "password", "live@example.com", "--password-file", passwordFile);
      expect(weak.code).to.equal(1);
      expect(errorOf(weak)).to.include("too easy to guess");
      fs.writeFileSync(passwordFile, "harbor tundra velvet ostrich\n");
      const changed = json(
        await admin(dataDir, "operators", "password", "live@example.com", "--password-file", passwordFile),
      );
      expect(changed).to.deep.include({ email: "live@example.com", hasPassword: true, sessionsRevoked: 1 });
      const ended = await service.api.get("/console/api/session", {}, { cookie });
      expect(ended.status).to.equal(401);
      expect((await signIn("lantern orbit pickle saffron")).status).to.equal(401);
      expect((await signIn("harbor tundra velvet ostrich")).status).to.equal(200);
      const [audited] = await service.services.auditLog.list({ limit: 1, action: "operators.password" });
      expect(audited).to.deep.include({ actor: "admin tool", target: "live@example.com" });
      expect(JSON.stringify(audited)).to.not.include("harbor tundra");
    });

    it("POST /admin/command takes an operator's password only for the commands that set one; a wallet's key is refused as anywhere", async () => {
      const token = fs.readFileSync(path.join(dataDir, "sandbox", "admin-token"), "utf8").trim();
      const send = (body: Record<string, unknown>) =>
        service.api.post("/admin/command", body, { "x-admin-token": token });
      const key = Wallet.createRandom().privateKey;
      for (const body of [
        { command: "operators.add", email: "k@example.com", role: "viewer", privateKey: key },
        {
          command: "operators.add",
          email: "k@example.com",
          role: "viewer",
          password: "x",
          nested: { mnemonic: "a b c" },
        },
        { command: "keys.create", email: "k@example.com", plan: "Starter", password: "quiet ember lattice" },
      ]) {
        const refused = await send(body);
        expect(refused.status, JSON.stringify(body)).to.equal(400);
        expect(refused.body.error.message).to.include("never send a private key or seed phrase");
      }
      expect(await service.services.operators.byEmail("k@example.com")).to.equal(undefined);
      expect(await service.services.apiKeys.list()).to.satisfy((keys: { email: string }[]) =>
        keys.every((k) => k.email !== "k@example.com"),
      );
    });

    it("errors of a routed command keep exit code 1 and a JSON error", async () => {
      const bad = await admin(dataDir, "keys", "revoke", "0000000000000000");
      expect(bad.code).to.equal(1);
      expect(errorOf(bad)).to.include("No key with id 0000000000000000");
    });

    it("POST /admin/command without or with a wrong x-admin-token → 401", async () => {
      const token = fs.readFileSync(path.join(dataDir, "sandbox", "admin-token"), "utf8").trim();
      const command = { command: "keys.list" };
      const none = await service.api.post("/admin/command", command);
      expect(none.status).to.equal(401);
      expect(none.body.error.code).to.equal("UNAUTHORIZED");
      const wrong = await service.api.post("/admin/command", command, {
        "x-admin-token": token.slice(0, -1) + (token.endsWith("A") ? "B" : "A"),
      });
      expect(wrong.status).to.equal(401);
      const short = await service.api.post("/admin/command", command, { "x-admin-token": "x" });
      expect(short.status).to.equal(401);
      const right = await service.api.post("/admin/command", command, { "x-admin-token": token });
      expect(right.status).to.equal(200);
      expect(right.body.result).to.be.an("array");
    });
  });
});
