import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import { cliError, cliJson, runAdminCli, type CliResult } from "../helpers/admin-cli";
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

  it("package.json runs it with ts-node --transpile-only", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
    expect(pkg.scripts.admin).to.equal("ts-node --transpile-only scripts/admin.ts");
  });

  describe("without a running service: opens the embedded database in DATA_DIR", () => {
    let dataDir: string;
    let keyId: string;
    let apiKey: string;
    const signer = Wallet.createRandom().address;

    before(() => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-admin-"));
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
      const added = json(await admin(dataDir, "credits", "add", "--key-id", keyId, "--method", "mintToken", "--amount", "5"));
      expect(added).to.deep.equal({ keyId, method: "mintToken", balance: 15 });
      const [listed] = json(await admin(dataDir, "keys", "list"));
      expect(listed.credits.mintToken).to.equal(15);
      expect(listed.credits.whitelist).to.equal(10);
    });

    it("credits add refuses an unknown method, a bad amount and an unknown key (exit 1, JSON error)", async () => {
      const method = await admin(dataDir, "credits", "add", "--key-id", keyId, "--method", "nope", "--amount", "5");
      expect(method.code).to.equal(1);
      expect(errorOf(method)).to.include("--method");
      const amount = await admin(dataDir, "credits", "add", "--key-id", keyId, "--method", "mintToken", "--amount", "-3");
      expect(amount.code).to.equal(1);
      expect(errorOf(amount)).to.include("--amount");
      const key = await admin(dataDir, "credits", "add", "--key-id", "0000000000000000", "--method", "mintToken", "--amount", "5");
      expect(key.code).to.equal(1);
      expect(errorOf(key)).to.include("0000000000000000");
    });

    it("signers add / list / remove", async () => {
      expect(json(await admin(dataDir, "signers", "add", signer.toLowerCase()))).to.deep.equal({ address: signer, whitelisted: true });
      expect(json(await admin(dataDir, "signers", "list"))).to.deep.equal([signer]);
      expect(json(await admin(dataDir, "signers", "remove", signer))).to.deep.equal({ address: signer, whitelisted: false });
      expect(json(await admin(dataDir, "signers", "list"))).to.deep.equal([]);
      const again = await admin(dataDir, "signers", "remove", signer);
      expect(again.code).to.equal(1);
      expect(errorOf(again)).to.include("not a whitelisted signer");
      const bad = await admin(dataDir, "signers", "add", "0x1234");
      expect(bad.code).to.equal(1);
      expect(errorOf(bad)).to.include("address");
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

    it("a bad plan or e-mail → exit code 1 and a JSON error on stderr", async () => {
      const plan = await admin(dataDir, "keys", "create", "--email", "a@b.co", "--plan", "Gold");
      expect(plan.code).to.equal(1);
      expect(plan.stdout).to.equal("");
      expect(errorOf(plan)).to.include("--plan");
      const email = await admin(dataDir, "keys", "create", "--email", "nobody", "--plan", "Starter");
      expect(email.code).to.equal(1);
      expect(errorOf(email)).to.include("--email");
      expect(json(await admin(dataDir, "keys", "list"))).to.have.length(1);
    });

    it("an unknown command → exit code 2 with the usage", async () => {
      for (const args of [["frobnicate"], ["keys", "delete"], []]) {
        const result = await admin(dataDir, ...args);
        expect(result.code, args.join(" ")).to.equal(2);
        expect(errorOf(result)).to.include("usage:");
      }
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
      const created = json(await admin(dataDir, "keys", "create", "--email", "ops@example.com", "--plan", "Professional"));
      expect(created.plan).to.equal("Professional");
      expect(created.credits.mintToken).to.equal(100);
      // The service runs on an in-memory database: only a command that went through it can have created this key.
      const verified = await service.services.apiKeys.verify(created.apiKey);
      expect(verified?.id).to.equal(created.id);
      expect(fs.existsSync(path.join(dataDir, "sandbox", "pglite"))).to.equal(false);

      const read = await service.api.withKey(created.apiKey).get("/get-token-info");
      expect(read.status, JSON.stringify(read.body)).to.equal(200);
      expect(read.body.tokenSymbols).to.deep.equal([]);

      const added = json(await admin(dataDir, "credits", "add", "--key-id", created.id, "--method", "whitelist", "--amount", "7"));
      expect(added.balance).to.equal(107);
      expect((await service.services.credits.balances(created.id)).whitelist).to.equal(107);

      const signer = Wallet.createRandom().address;
      json(await admin(dataDir, "signers", "add", signer));
      expect(await service.services.signers.isAllowed(signer)).to.equal(true);

      json(await admin(dataDir, "keys", "revoke", created.id));
      expect(await service.services.apiKeys.verify(created.apiKey)).to.equal(undefined);
    });

    it("errors of a routed command keep exit code 1 and a JSON error", async () => {
      const bad = await admin(dataDir, "keys", "create", "--email", "a@b.co", "--plan", "Gold");
      expect(bad.code).to.equal(1);
      expect(errorOf(bad)).to.include("--plan");
    });

    it("POST /admin/command without or with a wrong x-admin-token → 401", async () => {
      const token = fs.readFileSync(path.join(dataDir, "sandbox", "admin-token"), "utf8").trim();
      const command = { command: "keys.list" };
      const none = await service.api.post("/admin/command", command);
      expect(none.status).to.equal(401);
      expect(none.body.error.code).to.equal("UNAUTHORIZED");
      const wrong = await service.api.post("/admin/command", command, { "x-admin-token": token.slice(0, -1) + (token.endsWith("A") ? "B" : "A") });
      expect(wrong.status).to.equal(401);
      const short = await service.api.post("/admin/command", command, { "x-admin-token": "x" });
      expect(short.status).to.equal(401);
      const right = await service.api.post("/admin/command", command, { "x-admin-token": token });
      expect(right.status).to.equal(200);
      expect(right.body.result).to.be.an("array");
    });
  });
});
