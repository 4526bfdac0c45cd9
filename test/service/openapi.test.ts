import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import pino from "pino";
import { ACCESS } from "../../service/auth/access-rules";
import { allRoutes, apiDocument, createApp } from "../../service/app";
import { successResponses, takesPayment } from "../../service/http/openapi";
import { routesRouter } from "../../service/http/route";
import { CONSOLE_PAGE_PATHS } from "../../service/routes/console-pages";
import { PUBLIC_METHODS } from "../../service/methods";
import type { Services } from "../../service/composition";
import { CLIENT_TYPES_FILE, clientTypesSource } from "../../scripts/lib/client-types";
import { toEip1193 } from "../../client/index";
import { checkDocumented, UndocumentedResponse } from "../helpers/documented";

/** ESM-only packages from this CommonJS test (TypeScript would turn a plain import() into require()). */
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- a real dynamic import(), which CommonJS output cannot express
const importEsm = new Function("specifier", "return import(specifier)") as (specifier: string) => Promise<any>;

/**
 * /openapi.json describes the whole API (issue: the API explains itself): every registered route with its response
 * schema, one request schema per prepare method, the error body, both credentials, the 402 and 429 with their
 * headers; it is a valid OpenAPI 3.1 document; and the typed client's generated types are those of this document.
 */
describe("OpenAPI document", function () {
  this.timeout(60_000);
  // Building the routes reads nothing from the services: a stand-in does (as for `npm run client:generate`).
  const services = { config: {} } as Services;
  const doc = apiDocument(services) as any;
  const routes = allRoutes(services);
  const operation = (route: { method: string; path: string }) => doc.paths[route.path]?.[route.method];

  it("lists every registered route (hidden ones excepted), each with a documented success answer", () => {
    const missing: string[] = [];
    for (const route of routes) {
      const label = `${route.method.toUpperCase()} ${route.path}`;
      if (!route.response) missing.push(`${label}: no response schema`);
      if (route.hidden) {
        expect(operation(route), `${label} is hidden`).to.equal(undefined);
        continue;
      }
      const op = operation(route);
      if (!op) {
        missing.push(`${label}: not in the document`);
        continue;
      }
      const success = Object.entries(op.responses).filter(([status]) => /^2\d\d$/.test(status));
      if (!success.length) missing.push(`${label}: no 2xx response`);
      for (const [status, response] of success as [string, any][]) {
        if (!response.content || !Object.values(response.content).every((c: any) => c.schema))
          missing.push(`${label}: ${status} has no schema`);
      }
      for (const doc of Object.values(successResponses(route)))
        if (doc && !doc.schema && !doc.content) missing.push(`${label}: a success answer without a body schema`);
    }
    expect(missing, missing.join("\n")).to.deep.equal([]);
    const documented = Object.values(doc.paths).reduce((n: number, ops: any) => n + Object.keys(ops).length, 0);
    expect(documented).to.equal(routes.filter((r) => !r.hidden).length);
  });

  it("the app mounts no route the document leaves out, but the operator's command and the reference page's assets", () => {
    const app = createApp({ config: {}, logger: pino({ level: "silent" }) } as unknown as Services, {
      adminToken: "t".repeat(32),
    }) as unknown as { router: Layer };
    type Layer = {
      stack?: Layer[];
      route?: { path: string; methods: Record<string, boolean> };
      handle?: Layer & { mountedRoutes?: string[] };
    };
    const mounted: string[] = [];
    const walk = (layers: Layer[]) => {
      for (const layer of layers) {
        if (layer.route)
          for (const method of Object.keys(layer.route.methods))
            mounted.push(`${method} ${layer.route.path.replace(/:(\w+)/g, "{$1}")}`);
        else if (layer.handle?.mountedRoutes)
          mounted.push(...layer.handle.mountedRoutes); // the fixed paths' table
        else if (layer.handle?.stack) walk(layer.handle.stack);
      }
    };
    walk(app.router.stack!);
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.keys(ops as object).map((m) => `${m} ${p}`),
    );
    const undocumented = mounted.filter((r) => !documented.includes(r));
    // The console's pages (HTML; their JSON endpoints are documented under the "console" tag) and assets.
    const consolePages = CONSOLE_PAGE_PATHS.map((p) => `get ${p}`);
    expect(undocumented.sort()).to.deep.equal(
      ["get /docs/assets/{file}", "get /rams/typed-data/{operation}", "post /admin/command", ...consolePages].sort(),
    );
    expect(mounted, "the fixed paths' table is walked").to.include("get /get-network-info");
    expect(mounted.length).to.be.greaterThan(documented.length);
  });

  it("two routes on the same method and path (whatever the letter case) are refused when the app is built", () => {
    const services = { config: {}, logger: pino({ level: "silent" }) } as unknown as Services;
    const health = allRoutes(services).find((r) => r.path === "/health")!;
    expect(() => routesRouter([health, { ...health, path: "/HEALTH" }], services)).to.throw(
      "two routes answer GET /health",
    );
    expect(() => routesRouter([health, { ...health, method: "post" }], services)).to.not.throw();
  });

  it("is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator) whose every $ref resolves", async () => {
    const { Validator } = await importEsm("@seriousme/openapi-schema-validator");
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)?.slice(0, 3000)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal("3.1");

    const unresolved: string[] = [];
    const walk = (value: unknown) => {
      if (Array.isArray(value)) return value.forEach(walk);
      if (value === null || typeof value !== "object") return;
      for (const [key, v] of Object.entries(value)) {
        if ((key === "$ref" || key === "mapping") && typeof v === "string") check(v);
        else if (key === "mapping" && v && typeof v === "object") Object.values(v).forEach((r) => check(r as string));
        else walk(v);
      }
    };
    const check = (ref: string) => {
      const target = ref
        .replace(/^#\//, "")
        .split("/")
        .reduce((node: any, part) => node?.[part], doc);
      if (target === undefined) unresolved.push(ref);
    };
    walk(doc);
    expect(unresolved).to.deep.equal([]);
    const ids = Object.values(doc.paths).flatMap((ops: any) => Object.values(ops).map((op: any) => op.operationId));
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it("POST /prepare-transactions: one request schema per method, discriminated by method (aliases included); per-method paths and facades reference the same bodies", () => {
    const body = operation({ method: "post", path: "/prepare-transactions" }).requestBody.content["application/json"]
      .schema;
    const variants = body.anyOf ?? body.oneOf;
    expect(variants).to.have.length(PUBLIC_METHODS.length);
    expect(body.discriminator.propertyName).to.equal("method");
    for (const method of PUBLIC_METHODS) {
      const name = method.name[0].toUpperCase() + method.name.slice(1);
      for (const value of [method.name, ...(method.aliases ?? [])])
        expect(body.discriminator.mapping[value], value).to.equal(`#/components/schemas/${name}Request`);
      const request = doc.components.schemas[`${name}Request`];
      expect(request.allOf[0].properties.method.enum).to.deep.equal([method.name, ...(method.aliases ?? [])]);
      expect(request.allOf[1]).to.deep.equal({ $ref: `#/components/schemas/${name}Body` });
      const byPath = operation({ method: "post", path: `/prepare-transactions/${method.name}` });
      expect(byPath.requestBody.content["application/json"].schema).to.deep.equal({
        $ref: `#/components/schemas/${name}Body`,
      });
      if (method.facadePath) {
        const facade = operation({ method: "post", path: method.facadePath });
        expect(facade.requestBody.content["application/json"].schema.$ref).to.equal(`#/components/schemas/${name}Body`);
        const answer = facade.responses["200"].content["application/json"].schema.$ref;
        expect(answer, method.facadePath).to.equal(
          method.facadeEnvelope === "data"
            ? "#/components/schemas/DataPrepareResponse"
            : "#/components/schemas/PrepareResponse",
        );
      }
    }
    expect(doc.components.schemas.AgentRegisterRequest.allOf[0].properties.method.enum).to.include("newTokenizedAgent");
  });

  it("the error body on every 4xx/5xx, 402 with PAYMENT-REQUIRED where x402 can pay, 429 with Retry-After on the prepare routes, both credentials", () => {
    expect(Object.keys(doc.components.securitySchemes)).to.include.members(["apiKey", "x402"]);
    expect(doc.components.securitySchemes.apiKey).to.include({ type: "apiKey", in: "header", name: "x-api-key" });
    expect(doc.components.securitySchemes.x402).to.include({ type: "apiKey", in: "header", name: "X-PAYMENT" });
    expect(doc.components.schemas.Error.required).to.deep.equal(["error", "message"]);
    const paymentRequired = doc.components.responses.PaymentRequired;
    expect(paymentRequired.headers["PAYMENT-REQUIRED"]).to.deep.include({ required: true });
    expect(paymentRequired.headers["PAYMENT-REQUIRED"].schema.contentSchema).to.deep.equal({
      $ref: "#/components/schemas/PaymentRequired",
    });
    expect(doc.components.responses.TooManyRequests.headers["Retry-After"].required).to.equal(true);
    for (const name of [
      "BadRequest",
      "Unauthorized",
      "PaymentRequired",
      "TooManyRequests",
      "ClientError",
      "ServerError",
    ]) {
      expect(doc.components.responses[name].content["application/json"].schema, name).to.deep.equal({
        $ref: "#/components/schemas/Error",
      });
    }
    const prepareRoutes = routes.filter(
      (r) =>
        r.path.startsWith("/prepare-transactions") ||
        r.path.startsWith("/x402/agent/") ||
        r.path.startsWith("/x402/token/") ||
        r.path.startsWith("/x402/rams/"),
    );
    expect(prepareRoutes.length).to.be.greaterThan(PUBLIC_METHODS.length);
    for (const route of routes.filter((r) => !r.hidden)) {
      const op = operation(route);
      const label = `${route.method.toUpperCase()} ${route.path}`;
      expect(op.responses["400"], label).to.deep.equal({ $ref: "#/components/responses/BadRequest" });
      expect(op.responses["4XX"], label).to.deep.equal({ $ref: "#/components/responses/ClientError" });
      expect(op.responses["5XX"], label).to.deep.equal({ $ref: "#/components/responses/ServerError" });
      expect(op.responses["402"] !== undefined, `${label} 402`).to.equal(takesPayment(route.access));
      if (prepareRoutes.includes(route))
        expect(op.responses["429"], `${label} 429`).to.deep.equal({ $ref: "#/components/responses/TooManyRequests" });
      const schemes = op.security.flatMap((s: object) => Object.keys(s));
      if (route.access.key === "required") expect(op.security, label).to.deep.equal([{ apiKey: [] }]);
      if (takesPayment(route.access)) expect(schemes, label).to.include.members(["apiKey", "x402"]);
      if (route.access === ACCESS.public && route.path !== "/metrics") expect(op.security, label).to.deep.equal([]);
    }
    // Paid routes: the key-only methods' own paths take no payment; the agentic ones do.
    expect(operation({ method: "post", path: "/prepare-transactions/mintToken" }).responses["402"]).to.equal(undefined);
    expect(operation({ method: "post", path: "/prepare-transactions/agentCreateToken" }).responses["402"]).to.not.equal(
      undefined,
    );
    for (const p of ["/send-transactions", "/get-agents", "/rams/mandate", "/faucet/bkn"])
      expect(
        operation({ method: p === "/send-transactions" || p === "/faucet/bkn" ? "post" : "get", path: p }).responses[
          "402"
        ],
        p,
      ).to.not.equal(undefined);
  });

  it("the responses named by the issue have their schemas: prepare, send summary (200 and 202), status, reads, RAMS data envelopes", () => {
    const json = (method: string, p: string, status = "200") =>
      operation({ method, path: p }).responses[status].content["application/json"].schema;
    expect(json("post", "/prepare-transactions")).to.deep.equal({ $ref: "#/components/schemas/PrepareResponse" });
    expect(json("post", "/send-transactions")).to.deep.equal({ $ref: "#/components/schemas/SendSummary" });
    expect(json("post", "/send-transactions", "202")).to.deep.equal({ $ref: "#/components/schemas/SendSummary" });
    expect(json("get", "/get-transaction-status")).to.deep.equal({ $ref: "#/components/schemas/TransactionStatus" });
    expect(json("get", "/get-sto-balance")).to.deep.equal({ $ref: "#/components/schemas/StoBalance" });
    expect(json("get", "/rams/mandate").properties.data).to.deep.equal({ $ref: "#/components/schemas/MandateRead" });
    expect(json("get", "/rams/typed-data/grant-mandate").properties.data).to.deep.equal({
      $ref: "#/components/schemas/RamsTypedData",
    });
    expect(doc.components.schemas.StoBalance.required).to.deep.equal([
      "uuid",
      "name",
      "companyName",
      "status",
      "tokenAmount",
      "hardCap",
      "softCap",
      "minInvestment",
      "maxInvestment",
      "startDate",
      "endDate",
      "tokenPrice",
      "tokenSymbol",
      "currentAmountRaised",
      "availableAmount",
    ]);
    expect(doc.components.schemas.UnsignedTransaction.required).to.include.members([
      "from",
      "to",
      "value",
      "nonce",
      "chainId",
      "data",
      "type",
      "maxPriorityFeePerGas",
      "maxFeePerGas",
      "gasLimit",
    ]);
  });

  it("client/schema.d.ts is the openapi-typescript output of this document (else: npm run client:generate)", async () => {
    const committed = fs.readFileSync(path.resolve(__dirname, "../..", CLIENT_TYPES_FILE), "utf8");
    const fresh = await clientTypesSource();
    if (committed !== fresh) {
      const a = committed.split("\n");
      const b = fresh.split("\n");
      const line = a.findIndex((l, i) => l !== b[i]);
      expect.fail(
        `${CLIENT_TYPES_FILE} is stale: run \`npm run client:generate\` and commit it (first difference at line ${line + 1}: ${JSON.stringify(a[line])} vs ${JSON.stringify(b[line])})`,
      );
    }
  });
});

describe("client: toEip1193", () => {
  it("numbers to 0x hex, gasLimit → gas, no nonce or fees, the chain to switch to", () => {
    const eip1193 = toEip1193({
      from: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      to: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      value: "0x00",
      nonce: 7,
      chainId: 11155111,
      data: "0xabcdef",
      type: 2,
      maxPriorityFeePerGas: "1000000",
      maxFeePerGas: "2000000000",
      gasLimit: "0x0189dd",
    });
    expect(eip1193).to.deep.equal({
      chainId: "0xaa36a7",
      transaction: {
        from: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        to: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
        data: "0xabcdef",
        value: "0x0",
        gas: "0x189dd",
      },
    });
  });
});

describe("checkDocumented (the tests' check of real answers against the document)", () => {
  const headers = (extra: Record<string, string> = {}) =>
    new Headers({ "content-type": "application/json; charset=utf-8", "x-request-id": "r1", ...extra });
  const allowance = {
    tokenSymbol: "ACME",
    tokenAddress: "0x" + "1".repeat(40),
    ownerAddress: "0x" + "2".repeat(40),
    spenderAddress: "0x" + "3".repeat(40),
    allowance: "1.5",
    allowanceRaw: "1500000",
  };
  const error = { error: { code: "BAD_REQUEST", message: "x" }, message: "x" };

  it("passes a documented answer; fails an undocumented field, a wrong type, a missing field, an error body of another shape", () => {
    checkDocumented({ method: "GET", path: "/get-allowance", status: 200, headers: headers(), body: allowance });
    checkDocumented({ method: "GET", path: "/get-allowance", status: 403, headers: headers(), body: error });
    expect(() =>
      checkDocumented({
        method: "GET",
        path: "/get-allowance",
        status: 200,
        headers: headers(),
        body: { ...allowance, extra: 1 },
      }),
    ).to.throw(UndocumentedResponse, /extra/);
    expect(() =>
      checkDocumented({
        method: "GET",
        path: "/get-allowance",
        status: 200,
        headers: headers(),
        body: { ...allowance, allowanceRaw: 5 },
      }),
    ).to.throw(UndocumentedResponse, /allowanceRaw/);
    const { allowance: _a, ...missing } = allowance;
    expect(() =>
      checkDocumented({ method: "GET", path: "/get-allowance", status: 200, headers: headers(), body: missing }),
    ).to.throw(UndocumentedResponse, /allowance/);
    expect(() =>
      checkDocumented({
        method: "GET",
        path: "/get-allowance",
        status: 400,
        headers: headers(),
        body: { message: "x" },
      }),
    ).to.throw(UndocumentedResponse, /error body/);
    expect(() =>
      checkDocumented({
        method: "GET",
        path: "/get-allowance",
        status: 200,
        headers: new Headers({ "content-type": "application/json" }),
        body: allowance,
      }),
    ).to.throw(/x-request-id/);
  });

  it("a 402 needs a decodable PAYMENT-REQUIRED quote and a route that takes payments; a 429 needs Retry-After; 202 only where documented", () => {
    const quote = Buffer.from(
      JSON.stringify({
        x402Version: 2,
        resource: { url: "u", description: "d", mimeType: "application/json" },
        accepts: [],
      }),
    ).toString("base64");
    checkDocumented({
      method: "GET",
      path: "/rams/mandate",
      status: 402,
      headers: headers({ "payment-required": quote }),
      body: error,
    });
    expect(() =>
      checkDocumented({ method: "GET", path: "/rams/mandate", status: 402, headers: headers(), body: error }),
    ).to.throw(/PAYMENT-REQUIRED/);
    expect(() =>
      checkDocumented({
        method: "GET",
        path: "/get-allowance",
        status: 402,
        headers: headers({ "payment-required": quote }),
        body: error,
      }),
    ).to.throw(/takes no payment/);
    expect(() =>
      checkDocumented({ method: "POST", path: "/prepare-transactions", status: 429, headers: headers(), body: error }),
    ).to.throw(/Retry-After/);
    checkDocumented({
      method: "POST",
      path: "/prepare-transactions",
      status: 429,
      headers: headers({ "retry-after": "60" }),
      body: error,
    });
    expect(() =>
      checkDocumented({ method: "GET", path: "/get-allowance", status: 202, headers: headers(), body: allowance }),
    ).to.throw(/202 is not documented/);
  });
});
