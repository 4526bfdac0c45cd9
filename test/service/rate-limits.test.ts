import { expect } from "chai";
import { PrepareRateLimiter } from "../../service/auth/rate-limits";
import { openDb, type Db } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/** POST /prepare-transactions limits (docs/wire-conventions.md, Access, credits and prices): 429, Retry-After: 60. */
describe("rate limits on POST /prepare-transactions", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;

  before(async () => {
    sandbox = await getSandbox();
  });
  afterEach(async () => service?.stop());

  const body = (signerAddress: string) => ({
    method: "whitelist",
    chainId: "aa36a7",
    signerAddress,
    tokenSymbol: "NONE",
    userToWhitelist: [],
  });

  it("without a key: 30 per IP in a burst, then 429 with Retry-After: 60", async () => {
    service = await startTestService(sandbox);
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      // a different wallet each time, so only the per-IP limit applies
      const res = await service.api.post(
        "/prepare-transactions",
        body(sandbox.accounts[i % 20].address.replace(/.$/, (i % 10).toString())),
      );
      statuses.push(res.status);
      if (res.status === 429) {
        expect(res.headers.get("retry-after")).to.equal("60");
        expect(res.body.error.code).to.equal("RATE_LIMITED");
      }
    }
    expect(statuses.slice(0, 30).every((s) => s === 401)).to.equal(true);
    expect(statuses[30]).to.equal(429);
  });

  it("without a key: 5 per minute per wallet", async () => {
    service = await startTestService(sandbox);
    const wallet = sandbox.accounts[3].address;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await service.api.post("/prepare-transactions", body(wallet))).status);
    expect(statuses).to.deep.equal([401, 401, 401, 401, 401, 429]);
    // another wallet from the same IP is still admitted
    expect((await service.api.post("/prepare-transactions", body(sandbox.accounts[4].address))).status).to.equal(401);
  });

  it("with a key: 120 in a burst, then 429; other keys are unaffected", async () => {
    service = await startTestService(sandbox);
    const { key } = await service.services.apiKeys.create({ email: "busy@limits.test", plan: "Enterprise" });
    const keyed = service.api.withKey(key);
    const statuses: number[] = [];
    for (let i = 0; i < 121; i++)
      statuses.push((await keyed.post("/prepare-transactions", body(sandbox.accounts[1].address))).status);
    expect(statuses.slice(0, 120).every((s) => s === 400)).to.equal(true); // admitted, then refused for its empty list
    expect(statuses[120]).to.equal(429);
    const other = service.api.withKey(
      (await service.services.apiKeys.create({ email: "calm@limits.test", plan: "Starter" })).key,
    );
    expect((await other.post("/prepare-transactions", body(sandbox.accounts[1].address))).status).to.equal(400);
  });

  describe("concurrency", () => {
    let db: Db;
    before(async () => {
      db = await openDb({});
      await migrate(db);
    });
    after(async () => db.close());
    const request = (ip: string) => ({ ip });

    it("20 prepares in flight per IP without a key; the 21st gets a 429 until one finishes", async () => {
      const limiter = new PrepareRateLimiter(db);
      const held: (() => Promise<void>)[] = [];
      for (let i = 0; i < 20; i++) held.push(await limiter.admit(request("10.0.0.1"), undefined, undefined));
      const refused = await limiter.admit(request("10.0.0.1"), undefined, undefined).then(
        () => undefined,
        (e) => e,
      );
      expect(refused?.status).to.equal(429);
      expect(refused?.details).to.deep.equal({ limit: "concurrent requests" });
      expect(refused?.headers).to.deep.equal({ "Retry-After": "60" });
      await held[0]();
      const admitted = await limiter.admit(request("10.0.0.1"), undefined, undefined);
      await Promise.all([admitted(), ...held.slice(1).map((release) => release())]);
      // a different IP was never affected
      await (
        await limiter.admit(request("10.0.0.9"), undefined, undefined)
      )();
    });
  });
});
