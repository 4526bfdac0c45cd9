import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { builtinModules } from "node:module";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import { openDb } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { copyPgliteTemplate, pgliteTemplateDir } from "../../service/store/pglite-template";
import { startServiceProcess, stopGracefully } from "../helpers/child-service";
import { execute } from "../helpers/flow";
import { setUpOperator } from "../helpers/operator";
import { stopStartedProcesses } from "../helpers/processes";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { testEnv } from "../helpers/service";
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
    const migrations = fs.readdirSync(path.join(ROOT, "service", "store", "migrations")).filter((f) => f.endsWith(".sql"));
    expect(fs.readdirSync(path.join(dist, "service", "store", "migrations")).sort()).to.deep.equal(migrations.sort());
    // A new embedded database starts as a copy of the template, which holds every migration already.
    const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tak-template-copy-")), "pglite");
    expect(copyPgliteTemplate(copy, path.join(dist, "service", "store", path.basename(pgliteTemplateDir())))).to.equal(true);
    const db = await openDb({ dataDir: copy });
    try {
      expect(await migrate(db)).to.deep.equal([]);
    } finally {
      await db.close();
      fs.rmSync(path.dirname(copy), { recursive: true, force: true });
    }
    expect(fs.existsSync(path.join(dist, "typechain-types", "factories", "contracts", "tokenization", "TokenFactory__factory.js"))).to.equal(true);

    const { dependencies } = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const loaded = new Map<string, string>();
    for (const file of fs.readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js"))) {
      for (const name of requiredPackages(fs.readFileSync(path.join(dist, file), "utf8"))) loaded.set(name, file);
    }
    const undeclared = [...loaded].filter(([name]) => !(name in dependencies)).map(([name, file]) => `${name} (dist/${file})`);
    expect(undeclared, "packages dist/ loads that are not production dependencies").to.deep.equal([]);
    expect([...loaded.keys()]).to.include.members(["ethers", "express", "viem", "@electric-sql/pglite", "pg"]);
  });

  it("installed with `npm ci --omit=dev`, it serves the API against a deployment: reads, a signed write confirmed, an x402-paid call", async () => {
    installDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-production-"));
    for (const file of ["package.json", "package-lock.json"]) fs.copyFileSync(path.join(ROOT, file), path.join(installDir, file));
    execFileSync(npm, ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: installDir, stdio: ["ignore", "pipe", "pipe"], timeout: 480_000 });
    fs.cpSync(path.join(ROOT, "dist"), path.join(installDir, "dist"), { recursive: true });
    // (typescript itself is there: viem names it as a peer dependency, which npm installs.)
    for (const devOnly of ["ts-node", "hardhat", "typechain", "mocha", "playwright-core"]) expect(fs.existsSync(path.join(installDir, "node_modules", devOnly)), devOnly).to.equal(false);

    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-production-data-"));
    const issuer = sandbox.accounts[1];
    const key = await setUpOperator(dataDir, "ops@production-build.test", issuer.address);
    const service = await startServiceProcess(testEnv(sandbox, dataDir), { entry: "dist/service/main.js", cwd: installDir });
    expect(service.output()).to.include('"service listening"');

    expect((await service.api.get("/ready")).status).to.equal(200);
    expect((await service.api.get("/get-network-info", { chainId: "aa36a7" })).body.factoryAddress).to.equal(sandbox.deployments[11155111].contracts.TokenFactory);
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
    const quote = quoteOf(await service.api.post("/faucet/bkn", { recipientAddress: Wallet.createRandom().address }, { "Idempotency-Key": randomUUID() })).accepts[0];
    const paid = await service.api.post("/faucet/bkn", { recipientAddress: Wallet.createRandom().address }, { "Idempotency-Key": randomUUID(), "X-PAYMENT": await payWithEthers(sandbox.accounts[4], quote) });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(paid.body.status).to.equal("confirmed");

    expect(await stopGracefully(service.child)).to.equal(0);
  });
});
