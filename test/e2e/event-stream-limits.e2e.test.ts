import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Wallet } from "ethers";
import { emitEvent } from "../../service/store/outbox";
import type { Db } from "../../service/store/db";
import { EventStreamClient } from "../helpers/event-stream";
import { distinctClient } from "../helpers/relayed";
import { getSandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/**
 * Issue 41, item 4: streams without limits. Before the fix a key, or anyone with the txId of a free relayed prepare,
 * could open as many GET /events streams as it liked, and every event woke every stream, each running its own query.
 * Now streams are capped per key and per client address (EVENT_STREAMS_PER_KEY, EVENT_STREAMS_PER_CLIENT: the next is a
 * 429 with Retry-After), a keyless stream needs the streamToken its batch's prepare answered, and one read of the
 * outbox per new event serves every stream (events/feed.ts).
 */
describe("e2e: event streams cannot be exhausted (500 streams, keyless proof, one read per event)", function () {
  this.timeout(240_000);
  let service: TestService;
  const opened: EventStreamClient[] = [];
  const PER_KEY = 20;
  const PER_CLIENT = 20;

  const newKey = async (name: string) => {
    const { key, record } = await service.services.apiKeys.create({
      email: `${name}@streams.test`,
      plan: "Enterprise",
    });
    return { key, id: record.id };
  };
  /** Opens `n` streams with `headersOf(i)`, a few dozen at a time; answers the statuses. */
  const openMany = async (
    n: number,
    headersOf: (i: number) => Record<string, string>,
    query: Record<string, string> = {},
  ) => {
    const statuses: number[] = [];
    const refused: EventStreamClient[] = [];
    for (let start = 0; start < n; start += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, n - start) }, (_, i) =>
          EventStreamClient.open(service.url, query, headersOf(start + i)),
        ),
      );
      for (const s of batch) {
        statuses.push(s.status);
        if (s.status === 200) opened.push(s);
        else refused.push(s);
      }
    }
    return { statuses, refused };
  };
  const closeAll = async () => {
    for (const s of opened.splice(0)) s.close();
    // The service sees the connections go.
    const deadline = Date.now() + 10_000;
    while (service.services.eventStreams.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(service.services.eventStreams.size).to.equal(0);
  };

  before(async () => {
    service = await startTestService(await getSandbox(), {
      env: { EVENT_STREAMS_PER_KEY: String(PER_KEY), EVENT_STREAMS_PER_CLIENT: String(PER_CLIENT) },
    });
  });
  afterEach(closeAll);
  after(async () => {
    for (const s of opened) s.close();
    await service?.stop();
  });

  it(`500 streams of one key from 500 addresses: ${PER_KEY} open, the other 480 answer 429 with Retry-After; when one closes another may open`, async () => {
    const { key } = await newKey("one-key");
    const { statuses, refused } = await openMany(500, () => ({ "x-api-key": key, ...distinctClient() }));
    expect(statuses.filter((s) => s === 200)).to.have.length(PER_KEY);
    expect(statuses.filter((s) => s === 429)).to.have.length(500 - PER_KEY);
    expect(Number(refused[0].headers["retry-after"])).to.be.within(1, 60);
    expect(JSON.parse(refused[0].errorBody).message).to.match(new RegExp(`${PER_KEY} per API key`));
    expect(service.services.eventStreams.size).to.equal(PER_KEY);
    opened.pop()!.close();
    const deadline = Date.now() + 10_000;
    while (service.services.eventStreams.size >= PER_KEY && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const again = await EventStreamClient.open(service.url, {}, { "x-api-key": key, ...distinctClient() });
    expect(again.status).to.equal(200);
    opened.push(again);
    // The service still answers everything else.
    expect((await fetch(`${service.url}/health`)).status).to.equal(200);
  });

  it(`500 streams from one address with 25 keys: ${PER_CLIENT} open, the rest 429`, async () => {
    const keys = await Promise.all(Array.from({ length: 25 }, (_, i) => newKey(`address-${i}`)));
    const address = distinctClient();
    const { statuses, refused } = await openMany(500, (i) => ({ "x-api-key": keys[i % 25].key, ...address }));
    expect(statuses.filter((s) => s === 200)).to.have.length(PER_CLIENT);
    expect(JSON.parse(refused[0].errorBody).message).to.match(new RegExp(`${PER_CLIENT} per client address`));
  });

  it("without a key a stream needs the batch's streamToken: the txId of a free relayed prepare alone opens nothing, and 500 tries from one address hold at most the per-address limit", async () => {
    const prepared = await service.api.post(
      "/x402/token/create",
      {
        chainId: "84532",
        name: "Streamed",
        symbol: `S${randomBytes(2).toString("hex").toUpperCase()}`,
        agentWallet: Wallet.createRandom().address,
      },
      distinctClient(),
    );
    expect(prepared.status, JSON.stringify(prepared.body)).to.equal(200);
    const { txId, streamToken } = prepared.body as { txId: string; streamToken: string };
    const bare = await EventStreamClient.open(service.url, { txId });
    expect(bare.status, bare.errorBody).to.equal(401);
    expect(JSON.parse(bare.errorBody).message).to.match(/streamToken is required/);
    const forged = await EventStreamClient.open(service.url, { txId, streamToken: "A".repeat(43) });
    expect(forged.status, forged.errorBody).to.equal(403);
    const address = distinctClient();
    const { statuses } = await openMany(500, () => address, { txId, streamToken });
    expect(statuses.filter((s) => s === 200)).to.have.length(PER_CLIENT);
    expect(statuses.filter((s) => s === 429)).to.have.length(500 - PER_CLIENT);
  });

  it("one read of the outbox per new event serves every stream: 100 streams of five keys, an event of one key reaches its 20 streams only, after at most two reads", async () => {
    const keys = await Promise.all(Array.from({ length: 5 }, (_, i) => newKey(`fanout-${i}`)));
    const addresses = Array.from({ length: 5 }, () => distinctClient());
    const { statuses } = await openMany(100, (i) => ({
      "x-api-key": keys[i % 5].key,
      ...addresses[Math.floor(i / 20)],
    }));
    expect(
      statuses.every((s) => s === 200),
      statuses.join(),
    ).to.equal(true);
    // Count the statements that read events after a position, from the moment the event is committed.
    const db = service.services.db as Db & { query: Db["query"] };
    const original = db.query.bind(db);
    let reads = 0;
    db.query = (sql: string, params?: unknown[]) => {
      if (/FROM events\s+WHERE position >/.test(sql)) reads++;
      return original(sql, params as never);
    };
    try {
      const marker = randomBytes(6).toString("hex");
      await db.transaction((q) =>
        emitEvent(q, {
          type: "kyc.submitted",
          apiKeyId: keys[0].id,
          orderingKey: `kyc:${marker}`,
          data: { investorId: marker },
        }),
      );
      const mine = opened.filter((_, i) => i % 5 === 0);
      const others = opened.filter((_, i) => i % 5 !== 0);
      await Promise.all(
        mine.map((s) =>
          s.waitFor("the key's event", (events) => events.some((e) => e.data.data?.investorId === marker), 10_000),
        ),
      );
      await new Promise((r) => setTimeout(r, 300));
      expect(reads, "reads of the outbox for 100 streams").to.be.at.most(2);
      for (const s of others) expect(s.events, "another key's stream hears nothing of it").to.deep.equal([]);
    } finally {
      db.query = original;
    }
  });
});
