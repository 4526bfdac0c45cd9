import { expect } from "chai";
import fc from "fast-check";
import { allRoutes } from "../../service/app";
import { METHODS } from "../../service/methods";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/**
 * Bounded fuzzing of every route (issue: hostile input): fast-check builds bodies and queries from each route's own
 * field names with hostile values (wrong types, huge and negative numbers, NUL characters, unpaired surrogates, odd
 * encodings, deep nesting, long strings, prototype keys) and sends them over real HTTP, with and without a key. The
 * only property: the service never answers 5xx. A failure prints the request that broke it.
 */
describe("fuzz: no 5xx on any route", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  const keys: string[] = [];
  let signer: string;
  let sent = 0;

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    signer = sandbox.accounts[1].address;
    await service.services.signers.add(signer, "all-keys");
    for (let i = 0; i < 8; i++)
      keys.push((await service.services.apiKeys.create({ email: `fuzz${i}@fuzz.test`, plan: "Enterprise" })).key);
  });
  after(async () => service?.stop());

  const NUL = "a\u0000b";
  const LONE = "x\uD800y";
  const hostileString = fc.oneof(
    fc.constantFrom(
      "",
      " ",
      NUL,
      LONE,
      "\uDC00",
      "%zz",
      "../../etc/passwd",
      "0x",
      "0x" + "f".repeat(64),
      "1e308",
      "-1",
      "NaN",
      "Infinity",
      "1".padEnd(101, "0"),
    ),
    fc.constantFrom(
      "max",
      "UNLIMITED",
      "aa36a7",
      "14a34",
      "0x14a34",
      "84532",
      "11155111",
      "31337",
      "zz",
      "0xZZ",
      "true",
      "false",
      "null",
      "{}",
      "[]",
    ),
    fc.constantFrom(
      "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
      "0x70997970C51812DC3A010C7D01B50E0D17DC79C8",
      "0x70997970c51812dc3A010C7d01b50e0d17dc79C8",
    ),
    fc.constantFrom(
      "0x0000000000000000000000000000000000000000",
      "investor@fuzz.test",
      "not-an-email",
      "https://example.com/x.png",
      "ipfs://x",
      "data:,x",
    ),
    fc.constantFrom(
      "0x23b872dd",
      "0x23b872dd" + "0".repeat(56),
      "0x" + "1".repeat(130),
      "1.5",
      "0.000000000000000000001",
      "12345678901234567890123",
    ),
    fc.string({ maxLength: 40 }),
    fc.string({ unit: "binary", maxLength: 20 }),
  );
  const hostileNumber = fc.oneof(
    fc.constantFrom(0, -1, 1, 1.5, 2 ** 53, 2 ** 53 + 2, 1e308, -1e308, Number.MAX_VALUE, 2 ** 64, 18, 19, 255, 256),
    fc.integer(),
    fc.double(),
  );
  const leaf = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null));
  const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      leaf,
      fc.array(tie("v"), { maxLength: 3 }),
      fc.dictionary(
        fc.constantFrom(
          "a",
          "amount",
          "__proto__",
          "constructor",
          "investorEmail",
          "investorAddress",
          "walletAddress",
          "privateKey",
          "x\u0000y",
        ),
        tie("v"),
        { maxKeys: 3 },
      ),
    ),
  })).v;

  /** A plausible value per field name: bodies start valid-looking, so hostile values reach the methods' own checks. */
  const plausible = (name: string): unknown => {
    if (/address|wallet|^to$|^from$|spender|principal|agent$|newOwner|operator|asset|target/i.test(name)) return signer;
    if (/email/i.test(name)) return "fuzz@fuzz.test";
    if (/amount|premint|cap|value|price|raise|investment/i.test(name)) return "1";
    if (/symbol/i.test(name)) return "FUZ";
    if (/decimals/i.test(name)) return "18";
    if (/chainId/.test(name)) return "84532";
    if (/date/i.test(name)) return new Date(Date.now() + 86_400_000).toISOString();
    if (/image|uri|url|documentation|sourceCode/i.test(name)) return "https://example.com/x";
    if (/services/.test(name)) return [{ name: "web", endpoint: "https://example.com" }];
    if (/identityRef|metadata$|feedbackHash|responseHash/i.test(name)) return "0x" + "1".repeat(64);
    if (/actions/.test(name)) return ["0x23b872dd"];
    if (/index|agentId|nonce|deadline|validUntil|validFrom|expiresAt/i.test(name)) return "1";
    if (/userTo|preMints|initialHolders/.test(name))
      return [{ investorEmail: "fuzz@fuzz.test", investorAddress: signer, amount: "1", whitelistStatus: true }];
    return "x";
  };

  /** The field names a route's schema knows (top level), so values land on real fields. */
  const fieldsOf = (schema: unknown): string[] => {
    const shape = (schema as { shape?: Record<string, unknown> })?.shape;
    return shape ? Object.keys(shape) : [];
  };

  it("answers every hostile request with a status below 500", async () => {
    const routes = allRoutes(service.services).filter((r) => !r.hidden && !r.path.startsWith("/admin"));
    const methodFields = new Map(METHODS.map((m) => [m.name, fieldsOf(m.body)]));
    const routeCase = fc.record({
      route: fc.constantFrom(...routes),
      method: fc.constantFrom(...METHODS.map((m) => m.name), "agentMintToken", "newTokenizedAgent", "nope", ""),
      fields: fc.dictionary(fc.string({ maxLength: 3 }), value, { maxKeys: 2 }),
      known: fc.array(fc.tuple(fc.nat(50), value), { maxLength: 3 }),
      withKey: fc.boolean(),
      pathParam: fc.constantFrom("%zz", "%", "x", "0".repeat(64), "00000000-0000-4000-8000-000000000000", "%E0%A4%A"),
      deep: fc.boolean(),
      plausibleFirst: fc.boolean(),
    });
    const failures: string[] = [];
    await fc
      .assert(
        fc.asyncProperty(routeCase, async (c) => {
          const route = c.route;
          const names = route.path.startsWith("/prepare-transactions")
            ? (methodFields.get(route.path.split("/")[2] ?? c.method) ?? methodFields.get(c.method) ?? [])
            : [...fieldsOf(route.query), ...fieldsOf(route.body ?? route.documentedBody)];
          const payload: Record<string, unknown> = { ...c.fields };
          if (c.plausibleFirst)
            for (const name of names)
              if (name !== "method" && name !== "executionMode") payload[name] = plausible(name);
          for (const [i, v] of c.known) if (names.length) payload[names[i % names.length]] = v;
          if (route.path === "/prepare-transactions") payload.method = c.method;
          if (c.withKey && payload.signerAddress === undefined && Math.random() < 0.5) payload.signerAddress = signer;
          if (c.deep) {
            let nested: Record<string, unknown> = { end: true };
            for (let i = 0; i < 60; i++) nested = { n: nested };
            payload.unknownDeep = nested;
          }
          const path = route.path.replace(/\{\w+\}/g, c.pathParam);
          const headers: Record<string, string> = {
            "content-type": "application/json",
            "x-forwarded-for": `10.99.${(sent >> 8) & 255}.${sent & 255}`,
          };
          if (c.withKey) headers["x-api-key"] = keys[sent % keys.length];
          sent++;
          const query =
            route.method === "get"
              ? "?" +
                new URLSearchParams(
                  Object.entries(payload).map(([k, v]): [string, string] => [
                    k,
                    typeof v === "string" ? v : JSON.stringify(v),
                  ]),
                ).toString()
              : "";
          const res = await fetch(service.url + path + query, {
            method: route.method.toUpperCase(),
            headers,
            body: route.method === "get" ? undefined : JSON.stringify(payload),
          });
          if (res.status >= 500) {
            const text = await res.text();
            failures.push(
              `${route.method.toUpperCase()} ${path} ${JSON.stringify(payload).slice(0, 400)} → ${res.status} ${text.slice(0, 300)}`,
            );
            return false;
          }
          // The event stream stays open: its answer started well (200, text/event-stream) is all there is to check.
          if ((res.headers.get("content-type") ?? "").startsWith("text/event-stream")) await res.body?.cancel();
          else await res.arrayBuffer();
          return true;
        }),
        {
          numRuns: Number(process.env.FUZZ_RUNS ?? 1200),
          seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined,
          endOnFailure: true,
        },
      )
      .catch((error) => {
        throw new Error(`${failures.join("\n")}\n${(error as Error).message.slice(0, 2000)}`);
      });
  });

  it("raw HTTP: charsets, content encodings, malformed JSON and URLs never give a 5xx", async () => {
    const post =
      (headers: Record<string, string>, body: string | Buffer, path = "/prepare-transactions") =>
      () =>
        fetch(service.url + path, { method: "POST", headers: { "x-forwarded-for": "10.98.0.1", ...headers }, body });
    const cases: [string, () => Promise<Response>, number][] = [
      ["latin-1 JSON", post({ "content-type": "application/json; charset=iso-8859-1" }, '{"method":"whitelist"}'), 415],
      [
        "windows-1252 JSON",
        post({ "content-type": "application/json; charset=windows-1252" }, '{"method":"whitelist"}'),
        415,
      ],
      [
        "gzip claimed, plain sent",
        post({ "content-type": "application/json", "content-encoding": "gzip" }, '{"method":"whitelist"}'),
        400,
      ],
      [
        "deflate claimed, plain sent",
        post({ "content-type": "application/json", "content-encoding": "deflate" }, '{"method":"whitelist"}'),
        400,
      ],
      [
        "br claimed, plain sent",
        post({ "content-type": "application/json", "content-encoding": "br" }, '{"method":"whitelist"}'),
        400,
      ],
      [
        "unknown encoding",
        post({ "content-type": "application/json", "content-encoding": "zstd-x" }, '{"method":"whitelist"}'),
        415,
      ],
      ["malformed JSON", post({ "content-type": "application/json" }, '{"method":'), 400],
      [
        "JSON with a raw NUL escape",
        post({ "content-type": "application/json" }, '{"method":"whitelist","tokenSymbol":"A\\u0000B"}'),
        400,
      ],
      [
        "JSON with a lone surrogate",
        post({ "content-type": "application/json" }, '{"method":"whitelist","x":"\\ud800"}'),
        400,
      ],
      [
        "5000-deep unknown key",
        post(
          { "content-type": "application/json" },
          '{"method":"whitelist","deep":' + "[".repeat(5000) + "]".repeat(5000) + "}",
        ),
        400,
      ],
      ["undecodable %-escape in a path parameter", () => fetch(service.url + "/documents/%zz"), 400],
      [
        "undecodable %-escape in the registration path",
        () => fetch(service.url + "/agents/%E0%A4%A/registration.json"),
        400,
      ],
      ["NUL in a query value", () => fetch(service.url + "/get-network-info?chainId=aa%00a7"), 400],
      ["NUL in a query key", () => fetch(service.url + "/get-network-info?chainId=aa36a7&x%00y=1"), 400],
    ];
    for (const [label, request, status] of cases) {
      const res = await request();
      const body = (await res.json().catch(() => ({}))) as { error?: { code?: string }; message?: string };
      expect(res.status, `${label}: ${JSON.stringify(body)}`).to.equal(status);
      expect(body.message, label).to.be.a("string");
    }
  });
});
