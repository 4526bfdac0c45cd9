import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import hre from "hardhat";
import { JsonRpcProvider, NonceManager } from "ethers";
import { deploySuite } from "../../scripts/lib/deploy-suite";
import { startLocalChain, type LocalChain } from "../../scripts/lib/local-chain";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { loadConfig } from "../../service/config";
import { startService, type RunningService } from "../../service/server";
import { openDb, type Db, type Queryable } from "../../service/store/db";
import { startTestService, testEnv, type ApiResponse, type TestService } from "../helpers/service";

/** A GET that carries a JSON body, as N8N sends it (fetch refuses bodies on GET). */
function getWithJsonBody(baseUrl: string, pathname: string, body: unknown): Promise<ApiResponse> {
  const url = new URL(pathname, baseUrl);
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "GET", headers: { "content-type": "application/json", "content-length": String(payload.length) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, headers: new Headers() });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/**
 * A local port whose every connection is dropped unanswered: a chain RPC that does not answer. Held by the test (a port
 * merely closed could be taken meanwhile by another process of the suite, which would answer).
 */
async function deadPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function expectErrorShape(body: any, status: number) {
  expect(body, JSON.stringify(body)).to.be.an("object");
  expect(body.error).to.be.an("object");
  expect(body.error.code).to.be.a("string").and.not.equal("");
  expect(body.error.message).to.be.a("string").and.not.equal("");
  expect(body.message).to.equal(body.error.message);
  const allowed = ["code", "message", "param", "details"];
  expect(
    Object.keys(body.error).every((k) => allowed.includes(k)),
    Object.keys(body.error).join(),
  ).to.equal(true);
  if ("details" in body.error) expect(body.error.details).to.be.an("object");
  if ("param" in body.error)
    expect(body.error.param)
      .to.be.a("string")
      .and.equal(body.error.details?.field ?? body.error.param);
  expect(Object.keys(body).sort(), `status ${status}`).to.deep.equal(["error", "message"]);
}

describe("network info, health and OpenAPI (HTTP)", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
  });

  after(async () => {
    await service?.stop();
    if (service) fs.rmSync(service.dataDir, { recursive: true, force: true });
  });

  const expectNetworkInfo = (response: ApiResponse, chainId: 11155111 | 84532) => {
    const deployment = sandbox.deployments[chainId];
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body).to.deep.include({
      factoryAddress: deployment.contracts.TokenFactory,
      BKNAddress: deployment.contracts.BKN,
      USDTAddress: deployment.contracts.USDT,
      USDCAddress: deployment.contracts.USDC,
      agentTokenFactoryAddress: deployment.contracts.AgentTokenFactory,
      identityRegistryAddress: deployment.contracts.IdentityRegistry,
      reputationRegistryAddress: deployment.contracts.ReputationRegistry,
      currencyName: deployment.currencyName,
      blockExplorerUrl: deployment.blockExplorerUrl,
    });
    expect(response.body.chainId).to.equal("0x" + chainId.toString(16));
    for (const field of [
      "currencyName",
      "blockExplorerUrl",
      "factoryAddress",
      "BKNAddress",
      "USDTAddress",
      "USDCAddress",
    ]) {
      expect(response.body[field], field).to.be.a("string").and.not.equal("");
    }
  };

  describe("GET /get-network-info", () => {
    it("answers Sepolia for aa36a7, 0xaa36a7, 0XAA36A7 and 11155111 with the sandbox deployment", async () => {
      for (const chainId of ["aa36a7", "AA36A7", "0xaa36a7", "0XAA36A7", "11155111"]) {
        const response = await service.api.get("/get-network-info", { chainId });
        expectNetworkInfo(response, 11155111);
      }
      const response = await service.api.get("/get-network-info", { chainId: "aa36a7" });
      expect(response.body).to.deep.include({
        currencyName: "SepoliaETH",
        blockExplorerUrl: "https://sepolia.etherscan.io",
      });
    });

    it("answers Base Sepolia for 14a34, 0x14a34 and 84532 with its own deployment", async () => {
      for (const chainId of ["14a34", "0x14a34", "84532"]) {
        expectNetworkInfo(await service.api.get("/get-network-info", { chainId }), 84532);
      }
      expect(sandbox.deployments[84532].contracts.TokenFactory).to.not.equal(undefined);
      const base = await service.api.get("/get-network-info", { chainId: "84532" });
      expect(base.body.blockExplorerUrl).to.equal("https://sepolia.basescan.org");
    });

    it("/get-api-network-info answers the same", async () => {
      for (const chainId of ["aa36a7", "0xaa36a7", "11155111", "14a34", "84532"]) {
        const a = await service.api.get("/get-network-info", { chainId });
        const b = await service.api.get("/get-api-network-info", { chainId });
        expect(b.status).to.equal(200);
        expect(b.body).to.deep.equal(a.body);
      }
      const missing = await service.api.get("/get-api-network-info");
      expect(missing.status).to.equal(400);
    });

    it("reads chainId from the JSON body of a GET (N8N); the query string wins over the body", async () => {
      expectNetworkInfo(await getWithJsonBody(service.url, "/get-network-info", { chainId: "aa36a7" }), 11155111);
      expectNetworkInfo(await getWithJsonBody(service.url, "/get-network-info", { chainId: 84532 }), 84532);
      expectNetworkInfo(await getWithJsonBody(service.url, "/get-api-network-info", { chainId: "14a34" }), 84532);
      expectNetworkInfo(
        await getWithJsonBody(service.url, "/get-network-info?chainId=14a34", { chainId: "aa36a7" }),
        84532,
      );
    });

    it("needs no API key (and ignores a wrong one)", async () => {
      expectNetworkInfo(await service.api.withKey(undefined).get("/get-network-info", { chainId: "aa36a7" }), 11155111);
      expectNetworkInfo(
        await service.api
          .withKey("tak_0000000000000000_" + "A".repeat(43))
          .get("/get-network-info", { chainId: "aa36a7" }),
        11155111,
      );
    });

    it("missing chainId → 400 naming chainId, in the error shape", async () => {
      for (const response of [
        await service.api.get("/get-network-info"),
        await service.api.get("/get-network-info", { chainId: "" }),
        await getWithJsonBody(service.url, "/get-network-info", {}),
      ]) {
        expect(response.status, JSON.stringify(response.body)).to.equal(400);
        expectErrorShape(response.body, 400);
        expect(response.body.message).to.include("chainId");
      }
    });

    it("unsupported chainId (zz, 999999, 0, -1, 7a69, 31337) → 400 naming chainId", async () => {
      for (const chainId of ["zz", "999999", "0", "-1", "7a69", "31337"]) {
        const response = await service.api.get("/get-network-info", { chainId });
        expect(response.status, `${chainId}: ${JSON.stringify(response.body)}`).to.equal(400);
        expectErrorShape(response.body, 400);
        expect(response.body.message).to.include("chainId");
      }
      const zz = await service.api.get("/get-network-info", { chainId: "zz" });
      expect(zz.body.message).to.include("zz");
      expect(zz.body.error.code).to.equal("BAD_REQUEST");
    });

    it("a known chain this deployment does not serve (1, 2105, 38, 89, 13882) → 400 naming the chain", async () => {
      const cases: [string, number, string][] = [
        ["1", 1, "Ethereum mainnet"],
        ["2105", 8453, "Base mainnet"],
        ["0x2105", 8453, "Base mainnet"],
        ["38", 56, "BNB Smart Chain"],
        ["89", 137, "Polygon mainnet"],
        ["13882", 80002, "Polygon Amoy"],
      ];
      for (const [chainId, decimal, name] of cases) {
        const response = await service.api.get("/get-network-info", { chainId });
        expect(response.status, chainId).to.equal(400);
        expectErrorShape(response.body, 400);
        expect(response.body.message, chainId).to.include(String(decimal));
        expect(response.body.message, chainId).to.include(name);
        expect(response.body.error.details.available).to.have.members([11155111, 84532]);
      }
    });
  });

  describe("GET /health (liveness) and GET /ready (readiness)", () => {
    it("/health is 200 with what the process knows, without asking the database or a chain", async () => {
      const queries: string[] = [];
      const query = service.services.db.query.bind(service.services.db);
      service.services.db.query = (sql: string, params?: unknown[]) => (queries.push(sql), query(sql, params));
      try {
        const response = await service.api.get("/health");
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
        expect(response.body).to.include({ status: "ok", environment: "sandbox" });
        expect(response.body.uptimeSeconds).to.be.a("number").and.at.least(0);
      } finally {
        service.services.db.query = query;
      }
      expect(queries, "queries made by /health").to.deep.equal([]);
    });

    it('from the moment its port opens: /health 200 "starting", every other route 503 with Retry-After, until the service is composed', async () => {
      // The database answers nothing until the test lets it: the start waits in its migrations meanwhile.
      const db = await openDb({});
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const gated: Db = Object.assign(Object.create(db) as Db, {
        query: async (sql: string, params?: unknown[]) => (await gate, db.query(sql, params)),
        transaction: async <T>(fn: (q: Queryable) => Promise<T>) => (await gate, db.transaction(fn)),
      });
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-starting-"));
      const config = loadConfig(testEnv(sandbox, dataDir), { profile: "local" });
      let url = "";
      let opened!: () => void;
      const listening = new Promise<void>((resolve) => (opened = resolve));
      const starting: Promise<RunningService> = startService(config, {
        db: gated,
        onListening: (u) => {
          url = u;
          opened();
        },
      });
      starting.catch(() => undefined); // awaited below, once the gate is open
      await listening;
      try {
        const health = await fetch(`${url}/health`);
        expect(health.status).to.equal(200);
        expect(await health.json()).to.include({ status: "starting", environment: "sandbox" });
        for (const [method, pathname] of [
          ["GET", "/ready"],
          ["GET", "/get-network-info?chainId=aa36a7"],
          ["POST", "/prepare-transactions"],
        ]) {
          const answer = await fetch(url + pathname, {
            method,
            headers: { "content-type": "application/json" },
            body: method === "POST" ? "{}" : undefined,
          });
          expect(answer.status, `${method} ${pathname}`).to.equal(503);
          expect(answer.headers.get("retry-after")).to.equal("1");
          const body = (await answer.json()) as { error: { code: string; details: { starting: boolean } } };
          expect(body.error.code).to.equal("UNAVAILABLE");
          expect(body.error.details.starting).to.equal(true);
        }
      } finally {
        release();
      }
      const running = await starting;
      try {
        expect(running.url).to.equal(url);
        expect(((await (await fetch(`${url}/health`)).json()) as { status: string }).status).to.equal("ok");
        expect((await fetch(`${url}/get-network-info?chainId=aa36a7`)).status).to.equal(200);
      } finally {
        await running.stop();
        await db.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });

    it("/ready is 200 with the database and every chain answering", async () => {
      const response = await service.api.get("/ready");
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      expect(response.body.status).to.equal("ready");
      expect(response.body.environment).to.equal("sandbox");
      expect(response.body.database).to.deep.equal({ ok: true, kind: "pglite" });
      const chains = response.body.chains as { chainId: number; ok: boolean; blockNumber: number }[];
      expect(chains.map((c) => c.chainId)).to.have.members([11155111, 84532]);
      for (const chain of chains) {
        expect(chain.ok).to.equal(true);
        expect(chain.blockNumber).to.be.a("number").and.greaterThan(0);
      }
    });

    describe("with a chain outside the network table that the operator configures (31337, as `npx hardhat node`)", () => {
      let custom: TestService;
      let chain: LocalChain;
      let deploymentsDir: string;

      before(async () => {
        deploymentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-deployments-31337-"));
        for (const file of fs.readdirSync(sandbox.deploymentsDir)) {
          if (file.endsWith(".json"))
            fs.copyFileSync(path.join(sandbox.deploymentsDir, file), path.join(deploymentsDir, file));
        }
        chain = await startLocalChain(hre, { chainId: 31337 });
        const provider = new JsonRpcProvider(chain.url, 31337, { staticNetwork: true, cacheTimeout: -1 });
        await deploySuite(new NonceManager(sandbox.accounts[0].connect(provider)), {
          deploymentsDir,
          paymentAssets: "local",
        });
        provider.destroy();
        custom = await startTestService(sandbox, {
          env: { DEPLOYMENTS_DIR: deploymentsDir, RPC_URL_31337: chain.url },
        });
      });

      after(async () => {
        await custom?.stop();
        await chain?.close();
        if (deploymentsDir) fs.rmSync(deploymentsDir, { recursive: true, force: true });
      });

      it("serves it from its RPC URL and deployment file: network info, health, and a prepare on it", async () => {
        const deployment = JSON.parse(fs.readFileSync(path.join(deploymentsDir, "31337.json"), "utf8"));
        for (const chainId of ["31337", "0x7a69", "7a69"]) {
          const info = await custom.api.get("/get-network-info", { chainId });
          expect(info.status, JSON.stringify(info.body)).to.equal(200);
          expect(info.body).to.include({ chainId: "0x7a69", factoryAddress: deployment.contracts.TokenFactory });
        }
        const ready = await custom.api.get("/ready");
        expect(ready.body.chains.map((c: { chainId: number }) => c.chainId)).to.include(31337);
        const { key } = await custom.services.apiKeys.create({ email: "local@custom-chain.test", plan: "Starter" });
        await custom.services.signers.add(sandbox.accounts[1].address, "all-keys");
        const prepared = await custom.api.withKey(key).post("/prepare-transactions", {
          method: "newTokenization",
          chainId: "31337",
          signerAddress: sandbox.accounts[1].address,
          tokenizerEmail: "local@custom-chain.test",
          name: "Local",
          tokenSymbol: "LOCAL",
        });
        expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
        expect(prepared.body.transactions[0]).to.include({ chainId: 31337, to: deployment.contracts.TokenFactory });
      });

      it("an unconfigured chain keeps its clear error", async () => {
        const res = await custom.api.get("/get-network-info", { chainId: "31338" });
        expect(res.status).to.equal(400);
        expect(res.body.message).to.match(/^Unsupported chainId: 31338\. chainId is a decimal number/);
      });
    });

    describe("with a configured chain whose RPC does not answer", () => {
      let broken: TestService;
      let deploymentsDir: string;
      let dead: Awaited<ReturnType<typeof deadPort>> | undefined;

      before(async () => {
        deploymentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-deployments-broken-"));
        for (const file of fs.readdirSync(sandbox.deploymentsDir)) {
          if (file.endsWith(".json"))
            fs.copyFileSync(path.join(sandbox.deploymentsDir, file), path.join(deploymentsDir, file));
        }
        const sepolia = JSON.parse(fs.readFileSync(path.join(sandbox.deploymentsDir, "11155111.json"), "utf8"));
        fs.writeFileSync(
          path.join(deploymentsDir, "80002.json"),
          JSON.stringify({ ...sepolia, chainId: 80002, chainName: "Polygon Amoy" }, null, 2),
        );
        dead = await deadPort();
        broken = await startTestService(sandbox, {
          env: { DEPLOYMENTS_DIR: deploymentsDir, RPC_URL_80002: `http://127.0.0.1:${dead.port}` },
        });
      });

      after(async () => {
        await broken?.stop();
        await dead?.close();
        if (broken) fs.rmSync(broken.dataDir, { recursive: true, force: true });
        if (deploymentsDir) fs.rmSync(deploymentsDir, { recursive: true, force: true });
      });

      it("serves the extra chain (network info) but /ready answers 503 naming it, while /health stays 200", async () => {
        const info = await broken.api.get("/get-network-info", { chainId: "13882" });
        expect(info.status, JSON.stringify(info.body)).to.equal(200);
        expect(info.body.factoryAddress).to.equal(sandbox.deployments[11155111].contracts.TokenFactory);

        expect((await broken.api.get("/health")).status).to.equal(200);
        const response = await broken.api.get("/ready");
        expect(response.status, JSON.stringify(response.body)).to.equal(503);
        expectErrorShape(response.body, 503);
        expect(response.body.error.code).to.equal("UNAVAILABLE");
        const details = response.body.error.details;
        expect(details.database.ok).to.equal(true);
        const byId = Object.fromEntries(
          (details.chains as { chainId: number; ok: boolean }[]).map((c) => [c.chainId, c]),
        );
        expect(byId[80002].ok).to.equal(false);
        expect(byId[11155111].ok).to.equal(true);
        expect(byId[84532].ok).to.equal(true);
      });
    });
  });

  describe("OpenAPI and errors", () => {
    it("GET /openapi.json is OpenAPI 3.1.0 with the public paths and without the operator endpoint", async () => {
      const response = await service.api.get("/openapi.json");
      expect(response.status).to.equal(200);
      expect(response.body.openapi).to.equal("3.1.0");
      const paths = Object.keys(response.body.paths);
      expect(paths).to.include.members([
        "/get-network-info",
        "/get-api-network-info",
        "/prepare-transactions",
        "/send-transactions",
        "/get-transaction-status",
        "/health",
        "/ready",
        "/openapi.json",
      ]);
      expect(paths.some((p) => p.startsWith("/admin"))).to.equal(false);
      expect(JSON.stringify(response.body)).to.not.include("/admin/command");
      const parameters = response.body.paths["/get-network-info"].get.parameters as {
        name: string;
        in: string;
        required: boolean;
      }[];
      expect(parameters.find((p) => p.name === "chainId")).to.deep.include({ in: "query", required: true });
      expect(response.body.paths["/get-network-info"].get.security).to.deep.equal([]);
    });

    it("an unknown path → 404 in the error shape", async () => {
      for (const [method, pathname] of [
        ["GET", "/no-such-endpoint"],
        ["POST", "/no-such-endpoint"],
        ["GET", "/admin/command"],
      ]) {
        const response = await service.api.request(method, pathname, method === "POST" ? {} : undefined);
        expect(response.status, pathname).to.equal(404);
        expectErrorShape(response.body, 404);
        expect(response.body.error.code).to.equal("NOT_FOUND");
        expect(response.body.message).to.include(pathname);
      }
    });

    it("paths match as express matches them: any letter case, one trailing slash, HEAD by the GET route; another method is a 405 with Allow", async () => {
      for (const pathname of ["/get-network-info/?chainId=aa36a7", "/GET-Network-Info?chainId=aa36a7"]) {
        const response = await fetch(service.url + pathname); // raw: the test client checks paths against the document
        expect(response.status, pathname).to.equal(200);
        expect(((await response.json()) as any).chainName).to.equal("Sepolia");
      }
      // A route with a path parameter is reached too (its own 404, not "No route").
      const document = await fetch(service.url + "/Documents/" + "ab".repeat(32) + "/");
      expect(document.status).to.equal(404);
      expect(((await document.json()) as any).message).to.equal(`No document ${"ab".repeat(32)}`);
      const head = await fetch(service.url + "/get-network-info?chainId=aa36a7", { method: "HEAD" });
      expect(head.status).to.equal(200);
      expect(head.headers.get("content-type")).to.match(/application\/json/);
      expect(await head.text()).to.equal("");
      for (const [method, pathname, allow] of [
        ["POST", "/get-network-info", "GET, HEAD, OPTIONS"],
        ["GET", "/prepare-transactions", "POST, OPTIONS"],
      ]) {
        const response = await service.api.request(method, pathname, method === "POST" ? {} : undefined);
        expect(response.status, `${method} ${pathname}`).to.equal(405);
        expect(response.body.error.code).to.equal("METHOD_NOT_ALLOWED");
        expect(response.headers.get("allow")).to.equal(allow);
      }
      // Not a path at all (two trailing slashes), or the operator's hidden command: 404, as for any unknown path.
      for (const [method, pathname] of [
        ["GET", "/get-network-info//"],
        ["GET", "/admin/command"],
      ]) {
        const response = await service.api.request(method, pathname);
        expect(response.status, `${method} ${pathname}`).to.equal(404);
        expect(response.body.error.code).to.equal("NOT_FOUND");
      }
    });

    it("a malformed JSON body on a POST → 400 in the error shape", async () => {
      for (const pathname of ["/prepare-transactions", "/send-transactions", "/admin/command"]) {
        const response = await fetch(service.url + pathname, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"method": "whitelist", ',
        });
        expect(response.status, pathname).to.equal(400);
        const body = (await response.json()) as any;
        expectErrorShape(body, 400);
        expect(body.error.code).to.equal("MALFORMED_JSON");
      }
    });

    it("every answer carries an x-request-id, echoing the client's", async () => {
      const response = await service.api.get("/get-network-info", { chainId: "aa36a7" }, { "x-request-id": "abc-123" });
      expect(response.headers.get("x-request-id")).to.equal("abc-123");
      const other = await service.api.get("/nowhere");
      expect(other.headers.get("x-request-id")).to.match(/^[0-9a-f-]{36}$/);
    });
  });
});
