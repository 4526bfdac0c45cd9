// tier: release
import { execFile, execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { builtinModules } from "node:module";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Wallet } from "ethers";
import { openDb } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { copyPgliteTemplate, pgliteTemplateDir } from "../../service/store/pglite-template";
import { startServiceProcess, stopGracefully } from "../helpers/child-service";
import { execute } from "../helpers/flow";
import { stopStartedProcesses } from "../helpers/processes";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { ApiClient, testEnv } from "../helpers/service";
import { payWithEthers, quoteOf } from "../helpers/x402";

const ROOT = path.resolve(__dirname, "../..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** The packages a compiled file loads (`require("x")`, `require("@s/x/sub")` → x, @s/x), Node's built-ins left out. */
function requiredPackages(js: string): string[] {
  const names = new Set<string>();
  for (const match of js.matchAll(/\brequire(?:\.resolve)?\("([^"./][^"]*)"\)/g)) {
    const specifier = match[1].replace(/^node:/, "");
    if (builtinModules.includes(specifier.split("/")[0]) || builtinModules.includes(specifier)) continue;
    const parts = specifier.split("/");
    names.add(specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]);
  }
  return [...names];
}

/** Runs a command in `cwd` with exactly `env` (plus PATH and HOME); resolves with its exit code and output, never rejects. */
function runIn(
  cwd: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  timeout = 120_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env }, timeout },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/**
 * `npm run build`, then what an operator does on a server: `npm ci --omit=dev` from the lockfile into an empty
 * directory, dist/ beside it, `npm run serve` (node dist/service/main.js) against a deployment. Nothing of the
 * development dependencies (ts-node, hardhat, typechain) can be reached from there.
 */
describe("the production build: npm run build, npm ci --omit=dev, npm run serve", function () {
  this.timeout(600_000);
  let sandbox: Sandbox;
  let installDir: string;

  before(async () => {
    sandbox = await getSandbox();
    execFileSync(npm, ["run", "--silent", "build"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], timeout: 480_000 });
  });
  after(async () => {
    await stopStartedProcesses();
    if (installDir) fs.rmSync(installDir, { recursive: true, force: true });
  });

  it("dist/ holds the service, its migrations, the embedded database's template and the contract bindings it imports; every package it loads is a production dependency", async () => {
    const dist = path.join(ROOT, "dist");
    expect(fs.existsSync(path.join(dist, "service", "main.js"))).to.equal(true);
    const migrations = fs
      .readdirSync(path.join(ROOT, "service", "store", "migrations"))
      .filter((f) => f.endsWith(".sql"));
    expect(fs.readdirSync(path.join(dist, "service", "store", "migrations")).sort()).to.deep.equal(migrations.sort());
    // A new embedded database starts as a copy of the template, which holds every migration already.
    const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tak-template-copy-")), "pglite");
    expect(copyPgliteTemplate(copy, path.join(dist, "service", "store", path.basename(pgliteTemplateDir())))).to.equal(
      true,
    );
    const db = await openDb({ dataDir: copy });
    try {
      expect(await migrate(db)).to.deep.equal([]);
    } finally {
      await db.close();
      fs.rmSync(path.dirname(copy), { recursive: true, force: true });
    }
    expect(
      fs.existsSync(
        path.join(dist, "typechain-types", "factories", "contracts", "tokenization", "TokenFactory__factory.js"),
      ),
    ).to.equal(true);

    // An optional dependency is installed with `npm ci --omit=dev` as well (where it builds): pkcs11js, the HSM binding.
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const dependencies = { ...manifest.dependencies, ...manifest.optionalDependencies };
    const loaded = new Map<string, string>();
    for (const file of fs.readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js"))) {
      for (const name of requiredPackages(fs.readFileSync(path.join(dist, file), "utf8"))) loaded.set(name, file);
    }
    const undeclared = [...loaded]
      .filter(([name]) => !(name in dependencies))
      .map(([name, file]) => `${name} (dist/${file})`);
    expect(undeclared, "packages dist/ loads that are not production dependencies").to.deep.equal([]);
    expect([...loaded.keys()]).to.include.members(["ethers", "express", "viem", "@electric-sql/pglite", "pg"]);
  });

  it("installed with `npm ci --omit=dev`, it serves the API against a deployment: reads, a signed write confirmed, an x402-paid call, the MCP stdio server", async () => {
    installDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-production-"));
    for (const file of ["package.json", "package-lock.json"])
      fs.copyFileSync(path.join(ROOT, file), path.join(installDir, file));
    execFileSync(npm, ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: installDir,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 480_000,
    });
    for (const dir of ["dist", "bin"]) fs.cpSync(path.join(ROOT, dir), path.join(installDir, dir), { recursive: true });
    // (typescript itself is there: viem names it as a peer dependency, which npm installs.)
    for (const devOnly of ["ts-node", "hardhat", "typechain", "mocha", "playwright-core"])
      expect(fs.existsSync(path.join(installDir, "node_modules", devOnly)), devOnly).to.equal(false);

    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-production-data-"));
    const issuer = sandbox.accounts[1];
    // The secrets as files, as the deploy guide's step 7 gives them; the rest of the configuration as the tests' own.
    const secrets = fs.mkdtempSync(path.join(os.tmpdir(), "tak-production-secrets-"));
    const secret = (name: string, value: string) => {
      fs.writeFileSync(path.join(secrets, name), value + "\n", { mode: 0o600 });
      return path.join(secrets, name);
    };
    const { DATA_ENCRYPTION_KEY, RELAYER_PRIVATE_KEY, X402_SETTLEMENT_PRIVATE_KEY, ...configured } = testEnv(
      sandbox,
      dataDir,
    );
    const adminToken = "production-build-admin-token-0123456789";
    const env: Record<string, string> = {
      ...configured,
      ADMIN_TOKEN_FILE: secret("admin-token", adminToken),
      DATA_ENCRYPTION_KEY_FILE: secret("data-encryption-key", DATA_ENCRYPTION_KEY),
      RELAYER_PRIVATE_KEY_FILE: secret("relayer-key", RELAYER_PRIVATE_KEY),
      X402_SETTLEMENT_PRIVATE_KEY_FILE: secret("settlement-key", X402_SETTLEMENT_PRIVATE_KEY),
    };
    const npmIn = (args: string[], extra: Record<string, string> = {}) =>
      runIn(installDir, npm, ["run", "--silent", ...args], { ...env, ...extra });

    // The operator tools run from the production install (the build's, no ts-node there): the schema first, then the key.
    const migrated = await npmIn(["migrate"]);
    expect(migrated.code, migrated.stderr).to.equal(0);
    expect(JSON.parse(migrated.stdout).database).to.equal("pglite");
    const help = await npmIn(["admin", "--", "--help"]);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.match(/^usage: npm run admin -- <command>/);
    const created = await npmIn([
      "admin",
      "--",
      "keys",
      "create",
      "--email",
      "ops@production-build.test",
      "--plan",
      "Enterprise",
    ]);
    expect(created.code, created.stderr).to.equal(0);
    const key = JSON.parse(created.stdout).apiKey as string;
    expect(
      (
        await npmIn([
          "admin",
          "--",
          "signers",
          "add",
          issuer.address,
          "--key-id",
          JSON.parse(created.stdout).id as string,
        ])
      ).code,
    ).to.equal(0);

    // Refused starts: each missing secret named; a misspelt variable with the closest name.
    const entry = [path.join("dist", "service", "main.js")];
    const without = await runIn(installDir, process.execPath, entry, {
      ...env,
      ADMIN_TOKEN_FILE: "",
      DATA_ENCRYPTION_KEY_FILE: "",
    });
    expect(without.code).to.equal(1);
    expect(without.stderr).to.match(
      /^Invalid configuration: ADMIN_TOKEN: required outside the local sandbox .*; DATA_ENCRYPTION_KEY: required outside the local sandbox/,
    );
    const typo = await runIn(installDir, process.execPath, entry, { ...env, RPC_URL_SEPOLIA: "https://rpc.example" });
    expect(typo.code).to.equal(1);
    expect(typo.stderr.trim()).to.equal(
      "Invalid configuration: RPC_URL_SEPOLIA is not a variable of this service (did you mean RPC_URL_11155111?)",
    );

    const service = await startServiceProcess(env, { entry: "dist/service/main.js", cwd: installDir });
    expect(service.output()).to.include('"service listening"');
    // Secrets never reach the log.
    for (const value of [
      adminToken,
      DATA_ENCRYPTION_KEY,
      RELAYER_PRIVATE_KEY.slice(2),
      X402_SETTLEMENT_PRIVATE_KEY.slice(2),
    ])
      expect(service.output()).to.not.include(value);

    // The production posture whatever ENVIRONMENT (sandbox networks here): no webhook to this machine or a private
    // network, http refused; /metrics off without METRICS_TOKEN; the admin route needs the token.
    const keyed = service.api.withKey(key);
    for (const url of [
      "https://127.0.0.1/hook",
      "https://[::1]/hook",
      "https://localhost/hook",
      "https://2130706433/hook",
      "https://10.0.0.8/hook",
      "https://192.168.1.1/hook",
      "http://example.com/hook",
    ]) {
      const refused = await keyed.post("/webhooks", { url });
      expect(refused.status, `${url}: ${JSON.stringify(refused.body)}`).to.equal(400);
      expect(refused.body.message, url).to.match(/public addresses only|https URL/);
    }
    expect((await service.api.get("/metrics")).status).to.equal(404);
    expect((await service.api.post("/admin/command", { command: "keys.list" })).status).to.equal(401);
    expect(
      (await service.api.post("/admin/command", { command: "keys.list" }, { "x-admin-token": adminToken })).status,
    ).to.equal(200);

    expect((await service.api.get("/ready")).status).to.equal(200);
    expect((await service.api.get("/get-network-info", { chainId: "aa36a7" })).body.factoryAddress).to.equal(
      sandbox.deployments[11155111].contracts.TokenFactory,
    );
    const symbol = `P${Math.random().toString(36).slice(2, 6).toUpperCase()}`;
    const { sent } = await execute(service.api.withKey(key), issuer, {
      method: "newTokenization",
      chainId: "aa36a7",
      tokenizerEmail: "issuer@production-build.test",
      name: "Production build",
      tokenSymbol: symbol,
    });
    expect(sent.status).to.equal("success");

    // The faucet paid with x402: the in-process facilitator verifies and settles (viem, @x402/evm).
    const quote = quoteOf(
      await service.api.post(
        "/faucet/bkn",
        { recipientAddress: Wallet.createRandom().address },
        { "Idempotency-Key": randomUUID() },
      ),
    ).accepts[0];
    const paid = await service.api.post(
      "/faucet/bkn",
      { recipientAddress: Wallet.createRandom().address },
      { "Idempotency-Key": randomUUID(), "X-PAYMENT": await payWithEthers(sandbox.accounts[4], quote) },
    );
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(paid.body.status).to.equal("confirmed");

    // The MCP stdio server of the install (node bin/run.js mcp: the build's, no ts-node), talking to the service.
    const stdio = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(installDir, "bin", "run.js"), "mcp"],
      cwd: installDir,
      env: { TAK_BASE_URL: service.url, TAK_API_KEY: key, TAK_TOOLSETS: "default,tokens" },
      stderr: "pipe",
    });
    const mcp = new Client({ name: "production-build", version: "1.0.0" });
    await mcp.connect(stdio);
    try {
      expect((await mcp.listTools()).tools.map((t) => t.name)).to.include.members([
        "configure",
        "create_tokenization",
        "agent_register",
        "wait_for_transaction",
      ]);
      const network = await mcp.callTool({ name: "get_network_info", arguments: { chainId: "aa36a7" } });
      expect((network.structuredContent as { factoryAddress?: string }).factoryAddress).to.equal(
        sandbox.deployments[11155111].contracts.TokenFactory,
      );
      expect((await mcp.callTool({ name: "get_config", arguments: {} })).structuredContent).to.include({
        hasApiKey: true,
        hasPrivateKey: false,
      });
    } finally {
      await mcp.close();
    }

    expect(await stopGracefully(service.child)).to.equal(0);

    // With METRICS_TOKEN (from a file), /metrics needs it.
    const metricsToken = "production-build-metrics-token";
    const metered = await startServiceProcess(
      { ...env, METRICS_TOKEN_FILE: secret("metrics-token", metricsToken) },
      { entry: "dist/service/main.js", cwd: installDir },
    );
    const metrics = new ApiClient(metered.url);
    expect((await metrics.get("/metrics")).status).to.equal(401);
    expect((await metrics.get("/metrics", undefined, { authorization: `Bearer ${metricsToken}` })).status).to.equal(
      200,
    );
    expect(await stopGracefully(metered.child)).to.equal(0);

    // A schema older than the build's is refused, naming the step; the admin tool does the same.
    const older = fs.mkdtempSync(path.join(os.tmpdir(), "tak-production-older-"));
    const db = await openDb({ dataDir: path.join(older, "sandbox", "pglite") });
    const files = fs
      .readdirSync(path.join(ROOT, "service", "store", "migrations"))
      .filter((f) => f.endsWith(".sql"))
      .sort();
    await migrate(db, { before: files.at(-1) });
    await db.close();
    const refusedOld = await runIn(installDir, process.execPath, entry, { ...env, DATA_DIR: older });
    expect(refusedOld.code).to.equal(1);
    expect(refusedOld.stderr.trim()).to.equal(
      `The database's schema is older than this service: 1 migration(s) not applied (${files.at(-1)}). Run \`npm run migrate\` with the same configuration, then start again.`,
    );
    const adminOld = await npmIn(["admin", "--", "keys", "list"], { DATA_DIR: older });
    expect(adminOld.code).to.equal(1);
    expect(adminOld.stderr).to.include("older than this admin tool");
    fs.rmSync(older, { recursive: true, force: true });
    fs.rmSync(secrets, { recursive: true, force: true });
  });
});
