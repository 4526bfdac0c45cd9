import { Writable } from "node:stream";
import { expect } from "chai";
import pino from "pino";
import { execute } from "../helpers/flow";
import { getSandbox, RELAYER_INDEX, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/** One sample of a Prometheus text exposition: the value of `name{labels}` (labels matched as given), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || !line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (.+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[3] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[4]);
  }
  return undefined;
}

/**
 * What an operator sees (issue: operations): GET /metrics in Prometheus format, structured logs with a request id per
 * request (the x-request-id the caller gets back), no secrets in either.
 */
describe("e2e: operations (metrics, request ids, logs)", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  const logLines: string[] = [];
  let apiKey: string;

  before(async () => {
    sandbox = await getSandbox();
    const sink = new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) });
    service = await startTestService(sandbox, { logger: pino({ level: "info" }, sink) });
    apiKey = (await service.services.apiKeys.create({ email: "ops@operations.test", plan: "Enterprise" })).key;
    await service.services.signers.add(sandbox.accounts[1].address, "all-keys");
  });
  after(async () => service?.stop());

  it("GET /metrics: requests and latencies per route template, batches by status, payments by state, relayer balance and nonce lag per chain, the database pool", async () => {
    const api = service.api.withKey(apiKey);
    await api.get("/get-network-info", { chainId: "aa36a7" });
    await api.get("/documents/" + "ab".repeat(32)); // 404 through a templated route
    await api.get("/no/such/route");
    await execute(api, sandbox.accounts[1], {
      method: "approve",
      chainId: "aa36a7",
      tokenSymbol: "USDC",
      spenderAddress: sandbox.accounts[2].address,
      amount: "1",
      tokenizerAddress: sandbox.accounts[1].address,
    });
    await api.post("/prepare-transactions", {
      method: "approve",
      chainId: "aa36a7",
      signerAddress: sandbox.accounts[1].address,
      tokenSymbol: "USDC",
      spenderAddress: sandbox.accounts[3].address,
      amount: "1",
      tokenizerAddress: sandbox.accounts[1].address,
    });

    const res = await fetch(`${service.url}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.match(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(
      sample(text, "tak_http_requests_total", { method: "GET", route: "/get-network-info", status: "200" }),
    ).to.be.at.least(1);
    expect(
      sample(text, "tak_http_requests_total", { method: "GET", route: "/documents/{sha256}", status: "404" }),
    ).to.equal(1);
    expect(sample(text, "tak_http_requests_total", { method: "GET", route: "(unmatched)", status: "404" })).to.equal(1);
    expect(
      sample(text, "tak_http_requests_total", { method: "POST", route: "/send-transactions", status: "200" }),
    ).to.equal(1);
    expect(
      sample(text, "tak_http_request_duration_seconds_count", {
        method: "POST",
        route: "/prepare-transactions",
        status: "200",
      }),
    ).to.equal(2);
    expect(
      sample(text, "tak_http_request_duration_seconds_bucket", { route: "/prepare-transactions", le: "+Inf" }),
    ).to.equal(2);
    expect(text).to.not.include("ab".repeat(32)); // route templates, never raw paths

    expect(sample(text, "tak_batches", { status: "success" })).to.equal(1);
    expect(sample(text, "tak_batches", { status: "prepared" })).to.equal(1);
    expect(sample(text, "tak_batches", { status: "rejected" })).to.equal(0);
    for (const state of ["reserved", "settling", "settled", "released"])
      expect(sample(text, "tak_payments", { state }), state).to.equal(0);
    const relayer = sandbox.accounts[RELAYER_INDEX].address;
    for (const chainId of ["11155111", "84532"]) {
      expect(sample(text, "tak_chain_up", { chain_id: chainId }), chainId).to.equal(1);
      expect(
        sample(text, "tak_relayer_balance_eth", { chain_id: chainId, address: relayer }),
        chainId,
      ).to.be.greaterThan(0);
      expect(sample(text, "tak_relayer_nonce_lag", { chain_id: chainId, address: relayer }), chainId).to.equal(0);
    }
    expect(sample(text, "tak_db_pool_connections", { state: "total" })).to.equal(1); // PGlite: one, in process
    expect(sample(text, "tak_info", { version: "2.0.0", environment: "sandbox", database: "pglite" })).to.equal(1);
    expect(sample(text, "tak_process_resident_memory_bytes")).to.be.greaterThan(0);
    expect(text).to.not.include(apiKey);
  });

  it("METRICS_TOKEN guards /metrics with a bearer token", async () => {
    const guarded = await startTestService(sandbox, { env: { METRICS_TOKEN: "m".repeat(32) } });
    try {
      const anonymous = await guarded.api.get("/metrics");
      expect(anonymous.status).to.equal(401);
      expect(anonymous.body.message).to.match(/Bearer <METRICS_TOKEN>/);
      expect((await guarded.api.get("/metrics", {}, { authorization: "Bearer wrong" })).status).to.equal(401);
      const res = await fetch(`${guarded.url}/metrics`, { headers: { authorization: `Bearer ${"m".repeat(32)}` } });
      expect(res.status).to.equal(200);
      expect(await res.text()).to.include("tak_http_requests_total");
    } finally {
      await guarded.stop();
    }
  });

  it("one request id per request: the caller's own when it is a plain token, else a fresh one; every log line of the request carries it", async () => {
    const mine = await fetch(`${service.url}/get-network-info?chainId=aa36a7`, {
      headers: { "x-request-id": "trace-123.abc:9" },
    });
    expect(mine.headers.get("x-request-id")).to.equal("trace-123.abc:9");
    const hostile = await fetch(`${service.url}/get-network-info?chainId=aa36a7`, {
      headers: { "x-request-id": 'x" injected=1 {' },
    });
    const fresh = hostile.headers.get("x-request-id")!;
    expect(fresh).to.match(/^[0-9a-f-]{36}$/);
    const long = await fetch(`${service.url}/health`, { headers: { "x-request-id": "a".repeat(101) } });
    expect(long.headers.get("x-request-id")).to.match(/^[0-9a-f-]{36}$/);
    const failed = await fetch(`${service.url}/get-token-info?tokenSymbol=NOPE`, {
      headers: { "x-api-key": apiKey, "x-request-id": "trace-fail-1" },
    });
    expect(failed.status).to.equal(400);
    expect(failed.headers.get("x-request-id")).to.equal("trace-fail-1");

    const lines = logLines.map((l) => JSON.parse(l) as Record<string, any>);
    const of = (id: string) => lines.filter((l) => l.requestId === id);
    expect(of("trace-123.abc:9")).to.have.length(1);
    expect(of("trace-123.abc:9")[0]).to.include({
      msg: "request",
      method: "GET",
      route: "/get-network-info",
      status: 200,
    });
    expect(of(fresh)).to.have.length(1);
    expect(of("trace-fail-1")[0]).to.include({ route: "/get-token-info", status: 400 });
    expect(logLines.join("")).to.not.include("injected=1");
    expect(logLines.join("")).to.not.include(apiKey);
    for (const line of lines.filter((l) => l.msg === "request"))
      expect(line.requestId, JSON.stringify(line)).to.be.a("string");
  });
});
