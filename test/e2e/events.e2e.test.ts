import { expect } from "chai";
import { id as keccakId, parseUnits, Wallet } from "ethers";
import { RAMS_COMPLIANCE_OWNER_INDEX } from "../../scripts/lib/sandbox";
import { parseSelectorSpec, setupExecutor } from "../../service/operator/rams-setup";
import { runAdminCommand } from "../../service/operator/commands";
import { pruneEvents } from "../../service/store/outbox";
import { Event } from "../../service/events/types";
import { USDC__factory } from "../../typechain-types";
import { EventStreamClient } from "../helpers/event-stream";
import { execute } from "../helpers/flow";
import { submitThroughLink } from "../helpers/kyc";
import { distinctClient, payRelayedSend, prepareRelayedToken } from "../helpers/relayed";
import { getSandbox, providerFor, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type ApiResponse, type TestService } from "../helpers/service";
import { verifyWith, WebhookReceiver, type Received } from "../helpers/webhook-receiver";

/**
 * Events end to end (issue 24): a real HTTP receiver on an ephemeral port registered as webhooks, real writes through
 * HTTP on the sandbox chains, every delivery verified with the standardwebhooks package and parsed with the documented
 * Event schema; the SSE stream resumed with Last-Event-ID; the endpoints' management (rotation, test, deliveries,
 * redelivery, retries, disabling, timeouts, size cap, refused destinations).
 */
describe("e2e: events (outbox → signed webhooks, SSE stream)", function () {
  this.timeout(300_000);
  const SEPOLIA = 11155111;
  const chainId = "aa36a7";
  const run = Math.random()
    .toString(36)
    .slice(2, 5)
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, "E");
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let keyed: ApiClient;
  let keyId: string;
  let receiver: WebhookReceiver;
  let issuer: Wallet;
  const streams: EventStreamClient[] = [];

  const ok = (res: ApiResponse, status = 200) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    return res.body;
  };
  const request = (method: string, path: string, body?: unknown, client = keyed) => client.request(method, path, body);
  /** A stream with the test key, or without any key (`key` null). */
  const openStream = async (
    query: Record<string, string | undefined>,
    headers: Record<string, string> = {},
    key: string | null = keyed.apiKey!,
  ) => {
    const s = await EventStreamClient.open(service.url, query, key ? { "x-api-key": key, ...headers } : headers);
    streams.push(s);
    return s;
  };

  before(async () => {
    sandbox = await getSandbox();
    receiver = await WebhookReceiver.start();
    service = await startTestService(sandbox, {
      env: {
        WEBHOOK_RETRY_SCHEDULE: "300ms,300ms,300ms",
        WEBHOOK_TIMEOUT_MS: "1500",
        WEBHOOK_DISABLE_AFTER: "2s",
        WEBHOOK_RESPONSE_LIMIT_BYTES: "4096",
        EVENT_STREAM_HEARTBEAT_MS: "300",
      },
    });
    api = service.api;
    issuer = sandbox.accounts[1];
    const { key, record } = await service.services.apiKeys.create({
      email: `events-${run}@e2e.test`,
      plan: "Enterprise",
    });
    keyId = record.id;
    keyed = api.withKey(key);
    await service.services.signers.add(issuer.address, "all-keys");
  });
  after(async () => {
    for (const s of streams) s.close();
    await service?.stop();
    await receiver?.close();
  });

  /** Registers `path` of the receiver as an endpoint; returns it with its secret. */
  async function register(
    body: Record<string, unknown>,
    client = keyed,
  ): Promise<{ id: string; secret: string; url: string }> {
    const created = ok(await request("POST", "/webhooks", body, client), 201);
    expect(created.secret).to.match(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    return { id: created.id, secret: created.secret, url: created.url };
  }

  /** Every delivery to `url` verified with `secret` (standardwebhooks) and parsed with the documented Event schema. */
  function verified(url: string, secret: string): any[] {
    return receiver
      .delivered()
      .filter((r) => r.event && urlOf(r) === url)
      .map((r) => {
        verifyWith(secret, r);
        expect(r.headers["webhook-id"]).to.equal(r.event.id);
        const parsed = Event.safeParse(r.event);
        expect(parsed.success, `${r.event.type}: ${JSON.stringify(parsed.error?.issues?.slice(0, 3))}`).to.equal(true);
        return r.event;
      });
  }
  const urlOf = (r: Received) => `${receiver.url}${r.path === "/" ? "" : r.path}`;

  describe("Done when: a client-signed batch, an x402-paid relayed call, a KYC approval and a mandate execution", () => {
    it("each arrives signed (standardwebhooks verifies it), in order per txId, exactly the events the changes imply", async () => {
      const keyUrl = `${receiver.url}/key`;
      const keyEndpoint = await register({ url: keyUrl, description: "every event of the key" });

      // 1. A client-signed batch under the key: newTokenization.
      const symbol = `E${run}`;
      const tokenized = await execute(keyed, issuer, {
        method: "newTokenization",
        chainId,
        tokenizerEmail: `issuer-${run.toLowerCase()}@events.test`,
        name: "Events Fund",
        tokenSymbol: symbol,
      });
      const tokenTx = tokenized.prepared.txId;

      // 2. An x402-paid relayed call (no key): its preparer registers a webhook for its txId before paying the send.
      const relayedTx = await prepareRelayedToken(api, `X${run}`, sandbox.accounts[6].address);
      const txUrl = `${receiver.url}/tx`;
      const txEndpoint = await register({ url: txUrl, txId: relayedTx }, api);
      ok(await payRelayedSend(api, relayedTx, sandbox.accounts[3]));

      // 3. KYC: an invitation, the investor's signed submission, the operator's approval.
      const investor = Wallet.createRandom();
      const email = `investor-${run.toLowerCase()}@events.test`;
      const link = ok(await keyed.post("/create-kyc-link", { email }));
      ok(await submitThroughLink(api, link.url, investor, { firstName: "Ada", lastName: "Events", country: "DE" }));
      await runAdminCommand(service.services, { command: "kyc.approve", email });
      const [kycRecord] = await service.services.kyc.list({ email });

      // 4. A RAMS mandate granted directly by its principal, then executed by its agent within its caps.
      const { grantTx, executeTx, principal, agent } = await mandateFlow();

      const expected: Record<string, string[]> = {
        [tokenTx]: ["transaction.broadcast", "transaction.confirmed", "batch.completed", "token.created"],
        [`kyc:${kycRecord.id}`]: ["kyc.submitted", "kyc.approved"],
        [grantTx]: ["transaction.broadcast", "transaction.confirmed", "batch.completed", "mandate.granted"],
        [executeTx]: ["transaction.broadcast", "transaction.confirmed", "batch.completed", "mandate.executed"],
      };
      const keyOf = (e: any) => e.txId ?? `kyc:${e.data.investorId}`;
      const total = Object.values(expected).reduce((n, list) => n + list.length, 0) + 3; // + the compliance grant's three
      await receiver.waitFor(
        "the key's events",
        (r) => r.filter((x) => urlOf(x) === keyUrl && x.status === 200).length >= total,
      );
      await receiver.waitFor(
        "the relayed txId's events",
        (r) => r.filter((x) => urlOf(x) === txUrl && x.status === 200).length >= 4,
      );
      await new Promise((r) => setTimeout(r, 500)); // anything extra would arrive now

      const keyEvents = verified(keyUrl, keyEndpoint.secret);
      const byKey = new Map<string, string[]>();
      for (const e of keyEvents) byKey.set(keyOf(e), [...(byKey.get(keyOf(e)) ?? []), e.type]);
      for (const [k, types] of Object.entries(expected)) expect(byKey.get(k), k).to.deep.equal(types);
      // The compliance grant (a RAMS call with no mandate event) and nothing else.
      const others = [...byKey.entries()].filter(([k]) => !(k in expected));
      expect(others.map(([, types]) => types)).to.deep.equal([
        ["transaction.broadcast", "transaction.confirmed", "batch.completed"],
      ]);
      expect(keyEvents).to.have.length(total);
      expect(new Set(keyEvents.map((e) => e.id)).size, "each event once").to.equal(keyEvents.length);
      // Ids grow in commit order, so per txId in order means increasing ids too.
      for (const list of groupBy(keyEvents, keyOf).values())
        expect(list.map((e) => BigInt(e.id))).to.deep.equal(
          list.map((e) => BigInt(e.id)).sort((a, b) => (a < b ? -1 : 1)),
        );
      // Nothing of the keyless batch went to the key.
      expect(keyEvents.filter((e) => e.txId === relayedTx)).to.deep.equal([]);

      // The payloads carry what the getters show.
      const tokenCreated = keyEvents.find((e) => e.type === "token.created");
      expect(tokenCreated.data).to.deep.equal(ok(await keyed.get("/get-tokenizer-info", { tokenSymbol: symbol })));
      const completed = keyEvents.find((e) => e.type === "batch.completed" && e.txId === tokenTx);
      const { payments: _p, ...status } = ok(await keyed.get("/get-transaction-status", { txId: tokenTx }));
      expect(completed.data).to.deep.equal(status);
      const confirmed = keyEvents.find((e) => e.type === "transaction.confirmed" && e.txId === tokenTx);
      expect(confirmed.data.transaction).to.deep.equal(status.transactions[0]);
      expect(confirmed.hash).to.equal(status.txHash);
      const broadcast = keyEvents.find((e) => e.type === "transaction.broadcast" && e.txId === tokenTx);
      expect(broadcast.data.transaction).to.include({ status: "pending", blockNumber: null, hash: status.txHash });
      const approved = keyEvents.find((e) => e.type === "kyc.approved");
      // Identifiers and the onboarding's state only: never the investor's e-mail, names, country or wallet (issue 41).
      expect(approved.data).to.include({
        investorId: kycRecord.id,
        status: "approved",
        needKyc: true,
        reviewedBy: "operator",
      });
      expect(Object.keys(approved.data).sort()).to.deep.equal([
        "investorId",
        "needKyc",
        "reviewedAt",
        "reviewedBy",
        "status",
        "submittedAt",
      ]);
      expect(JSON.stringify(keyEvents.filter((e) => e.type.startsWith("kyc."))))
        .not.to.include(email)
        .and.not.to.include(investor.address.slice(2));
      const executed = keyEvents.find((e) => e.type === "mandate.executed");
      expect(executed.data).to.include({
        agent: agent.address,
        principal: principal.address,
        amount: "40000000",
        cumulativeUsed: "40000000",
        chainId: SEPOLIA,
      });
      const granted = keyEvents.find((e) => e.type === "mandate.granted");
      expect(granted.data.actions).to.deep.equal(["0x23b872dd" + "0".repeat(56)]);

      // The keyless endpoint: exactly its batch's public events, with the settled payment last.
      const txEvents = verified(txUrl, txEndpoint.secret);
      expect(txEvents.map((e) => e.type)).to.deep.equal([
        "transaction.broadcast",
        "transaction.confirmed",
        "batch.completed",
        "payment.settled",
      ]);
      expect(txEvents.every((e) => e.txId === relayedTx)).to.equal(true);
      const relayedStatus = ok(await api.get("/get-transaction-status", { txId: relayedTx }));
      expect(txEvents[2].data.outcome).to.deep.equal(relayedStatus.outcome); // the outcome the method recorded, in the same transaction
      expect(txEvents[3].data.payment).to.deep.equal(relayedStatus.payments.find((p: any) => p.step === "send"));
      expect(txEvents[3].hash).to.equal(
        relayedStatus.payments.find((p: any) => p.step === "send").settlementTransaction,
      );
      expect(receiver.overlaps).to.deep.equal([]);
    });
  });

  /** The RAMS set-up (operator's executor, the principal made eligible) and a keyed grant then execution in USDC. */
  async function mandateFlow() {
    const provider = providerFor(sandbox.sepolia);
    const contracts = sandbox.deployments[SEPOLIA].contracts;
    const [principal, agent] = [
      new Wallet(Wallet.createRandom().privateKey, provider),
      new Wallet(Wallet.createRandom().privateKey, provider),
    ];
    for (const w of [principal, agent]) {
      await provider.send("hardhat_setBalance", [w.address, "0x56BC75E2D63100000"]);
      await service.services.signers.add(w.address, "all-keys");
    }
    const funder = sandbox.accounts[2].connect(provider);
    await (
      await USDC__factory.connect(contracts.USDC, funder).transfer(principal.address, parseUnits("100", 6))
    ).wait();
    const complianceOwner = sandbox.accounts[RAMS_COMPLIANCE_OWNER_INDEX];
    await service.services.signers.add(complianceOwner.address, "all-keys");
    const setup = await setupExecutor({
      provider,
      chainId: SEPOLIA,
      registry: contracts.AgentMandate,
      complianceProvider: contracts.ComplianceProvider,
      principal: principal.address,
      selectors: [parseSelectorSpec("transferFrom:2")],
      asset: contracts.USDC,
      keys: { admin: sandbox.accounts[0], principal },
    });
    await runAdminCommand(service.services, {
      command: "rams.executors.record",
      chainId: SEPOLIA,
      executor: setup.executor,
      registry: setup.registry,
      principal: setup.principal,
      owner: setup.owner,
    });
    const identityRef = keccakId(`events:${run}`);
    await execute(keyed, complianceOwner, {
      method: "ramsGrantPrincipal",
      chainId,
      principal: principal.address,
      identityRef,
    });
    const validUntil = String((await provider.getBlock("latest"))!.timestamp + 86_400);
    const grant = await execute(keyed, principal, {
      method: "ramsGrantMandate",
      chainId,
      agent: agent.address,
      principal: principal.address,
      validUntil,
      identityRef,
      asset: contracts.USDC,
      maxTransactionValue: "50000000",
      maxCumulativeValue: "100000000",
      actions: ["0x23b872dd"],
    });
    const executed = await execute(keyed, agent, {
      method: "ramsExecute",
      chainId,
      asset: contracts.USDC,
      from: principal.address,
      to: sandbox.accounts[4].address,
      amount: "40000000",
    });
    provider.destroy();
    return { grantTx: grant.prepared.txId, executeTx: executed.prepared.txId, principal, agent };
  }

  describe("the stream (GET /events, Server-Sent Events)", () => {
    it("a client that reconnects with Last-Event-ID misses nothing: its two connections together are every event, once, in order", async () => {
      const first = await openStream({});
      expect(first.status).to.equal(200);
      expect(first.headers["content-type"]).to.match(/^text\/event-stream/);
      const writes: string[] = [];
      const write = async (i: number) =>
        writes.push(
          (
            await execute(keyed, issuer, {
              method: "newTokenization",
              chainId,
              tokenizerEmail: `sse-${run.toLowerCase()}@events.test`,
              name: "SSE",
              tokenSymbol: `S${run}${i}`,
            })
          ).prepared.txId,
        );
      await write(0);
      await first.waitFor("the first write's events", (e) => e.filter((x) => x.data.txId === writes[0]).length === 4);
      first.close();
      const lastSeen = first.events.at(-1)!.id;
      // While the client is away: two more writes.
      await write(1);
      await write(2);
      const resumed = await openStream({}, { "Last-Event-ID": lastSeen });
      await resumed.waitFor("the writes made while away", (e) =>
        writes.slice(1).every((t) => e.filter((x) => x.data.txId === t).length === 4),
      );
      await write(3);
      await resumed.waitFor(
        "a write made after resuming",
        (e) => e.filter((x) => x.data.txId === writes[3]).length === 4,
      );

      const seen = [...first.events, ...resumed.events];
      const ids = seen.map((e) => BigInt(e.id));
      expect(ids, "strictly increasing, no duplicate").to.deep.equal(
        [...new Set(ids)].sort((a, b) => (a < b ? -1 : 1)),
      );
      // Exactly the key's events of the outbox from the first connection's start on.
      const stored = await service.services.db.query<{ position: string }>(
        "SELECT position::text AS position FROM events WHERE api_key_id = $1 AND endpoint_id IS NULL AND position >= $2::bigint ORDER BY events.position",
        [keyId, first.events[0].id],
      );
      expect(seen.map((e) => e.id)).to.deep.equal(
        stored.map((r) => r.position).filter((p) => BigInt(p) <= ids.at(-1)!),
      );
      for (const e of seen) {
        expect(e.event).to.equal(e.data.type);
        expect(e.id).to.equal(e.data.id);
        expect(Event.safeParse(e.data).success, e.event).to.equal(true);
      }
      await new Promise((r) => setTimeout(r, 1000)); // 300 ms heartbeats in this service
      expect(resumed.heartbeats, "heartbeats while nothing happens").to.be.greaterThan(0);

      // A resume id also works as ?lastEventId, and filters by type and txId apply to the replay.
      const filtered = await openStream({ lastEventId: lastSeen, types: "batch.completed", txId: writes[2] });
      await filtered.waitFor("the filtered replay", (e) => e.length === 1);
      expect(filtered.events.map((e) => [e.event, e.data.txId])).to.deep.equal([["batch.completed", writes[2]]]);
    });

    it("without a key, a batch prepared without one streams its own events from the start with the streamToken its prepare answered; 4xx for what it may not read or resume", async () => {
      const prepared = ok(
        await api.post(
          "/x402/token/create",
          { chainId: "84532", name: `Agent Y${run}`, symbol: `Y${run}`, agentWallet: sandbox.accounts[6].address },
          distinctClient(),
        ),
      );
      const relayedTx: string = prepared.txId;
      const streamToken: string = prepared.streamToken;
      expect(streamToken).to.match(/^[A-Za-z0-9_-]{43}$/);
      const stream = await openStream({ txId: relayedTx, streamToken }, {}, null);
      expect(stream.status).to.equal(200);
      ok(await payRelayedSend(api, relayedTx, sandbox.accounts[3]));
      await stream.waitFor("the relayed batch's events", (e) => e.some((x) => x.event === "payment.settled"));
      expect(stream.events.map((e) => e.event)).to.deep.equal([
        "transaction.broadcast",
        "transaction.confirmed",
        "batch.completed",
        "payment.settled",
      ]);
      // A second client without Last-Event-ID replays the txId's history.
      const replay = await openStream({ txId: relayedTx }, { "X-Stream-Token": streamToken }, null);
      await replay.waitFor("the replay", (e) => e.length === 4);

      const refused = async (
        query: Record<string, string | undefined>,
        headers: Record<string, string>,
        key: string | null,
        status: number,
        message: RegExp,
      ) => {
        const s = await openStream(query, headers, key);
        expect(s.status, s.errorBody).to.equal(status);
        expect(JSON.parse(s.errorBody).message).to.match(message);
      };
      await refused({}, {}, null, 401, /API key is required/);
      // The txId alone (it can be read off the chain through get-transaction-status) opens nothing.
      await refused({ txId: relayedTx }, {}, null, 401, /streamToken is required/);
      await refused(
        { txId: relayedTx, streamToken: streamToken.replace(/^./, (c) => (c === "A" ? "B" : "A")) },
        {},
        null,
        403,
        /streamToken is not this batch's/,
      );
      const keyedBatch = (
        await service.services.db.query<{ tx_id: string }>("SELECT tx_id FROM batches WHERE api_key_id = $1 LIMIT 1", [
          keyId,
        ])
      )[0].tx_id;
      await refused({ txId: keyedBatch, streamToken }, {}, null, 403, /prepared under an API key/);
      await refused({ txId: relayedTx }, {}, keyed.apiKey!, 403, /not prepared under this API key/);
      await refused({ txId: "0x" + "ab".repeat(32), streamToken }, {}, null, 404, /No prepared transactions/);
      await refused({}, { "Last-Event-ID": "99999999999" }, keyed.apiKey!, 400, /not an event id this service issued/);
      await refused({}, { "Last-Event-ID": "abc" }, keyed.apiKey!, 400, /Last-Event-ID must be an event id/);
      await refused({ types: "transaction.confirmed,nope" }, {}, keyed.apiKey!, 400, /unknown event type nope/);
    });
  });

  describe("webhook endpoints", () => {
    let endpoint: { id: string; secret: string; url: string };
    const path = "/managed";

    it("list, update (types), test event (never on the stream), deliveries with the receiver's answers, redelivery with the same webhook-id", async () => {
      endpoint = await register({
        url: `${receiver.url}${path}`,
        eventTypes: ["batch.completed"],
        description: "managed",
      });
      const listed = ok(await keyed.get("/webhooks")).webhooks.find((w: any) => w.id === endpoint.id);
      expect(listed).to.include({
        url: `${receiver.url}${path}`,
        description: "managed",
        enabled: true,
        disabledAt: null,
        txId: null,
        failingSince: null,
        previousSecretValidUntil: null,
      });
      expect(listed.eventTypes).to.deep.equal(["batch.completed"]);
      expect(listed).to.not.have.property("secret");
      expect(ok(await keyed.get(`/webhooks/${endpoint.id}`)).id).to.equal(endpoint.id);

      const stream = await openStream({});
      const test = ok(await request("POST", `/webhooks/${endpoint.id}/test`), 202);
      await receiver.waitFor("the test event", (r) => r.some((x) => x.event?.id === test.eventId));
      const [testEvent] = verified(`${receiver.url}${path}`, endpoint.secret).filter((e) => e.id === test.eventId);
      expect(testEvent).to.deep.include({
        type: "webhook.test",
        txId: null,
        data: { endpointId: endpoint.id, message: `A test event for ${endpoint.id}` },
      });

      // Only batch.completed reaches it.
      const sent = await execute(keyed, issuer, {
        method: "newTokenization",
        chainId,
        tokenizerEmail: `wh-${run.toLowerCase()}@events.test`,
        name: "WH",
        tokenSymbol: `W${run}`,
      });
      await receiver.waitFor("batch.completed", (r) =>
        r.some((x) => urlOf(x) === `${receiver.url}${path}` && x.event?.txId === sent.prepared.txId),
      );
      await stream.waitFor("the write on the stream", (e) =>
        e.some((x) => x.event === "batch.completed" && x.data.txId === sent.prepared.txId),
      );
      expect(
        stream.events.some((e) => e.event === "webhook.test"),
        "the test event is not on the stream",
      ).to.equal(false);
      expect(
        verified(`${receiver.url}${path}`, endpoint.secret)
          .filter((e) => e.txId === sent.prepared.txId)
          .map((e) => e.type),
      ).to.deep.equal(["batch.completed"]);

      const updated = ok(
        await request("PATCH", `/webhooks/${endpoint.id}`, {
          eventTypes: ["token.created", "batch.completed"],
          description: null,
        }),
      );
      expect(updated).to.include({ description: null });
      expect(updated.eventTypes).to.deep.equal(["token.created", "batch.completed"]);

      const deliveries = ok(await keyed.get(`/webhooks/${endpoint.id}/deliveries`, { limit: "5" })).deliveries;
      expect(deliveries[0]).to.include({
        status: "delivered",
        eventType: "batch.completed",
        txId: sent.prepared.txId,
        manual: false,
      });
      expect(deliveries[0].attempts).to.have.length(1);
      expect(deliveries[0].attempts[0]).to.include({ attempt: 1, statusCode: 200, response: "ok", error: null });

      const count = receiver.received.filter((r) => r.event?.id === deliveries[0].eventId).length;
      const again = ok(await request("POST", `/webhooks/${endpoint.id}/deliveries/${deliveries[0].id}/redeliver`), 202);
      expect(again).to.include({ eventId: deliveries[0].eventId, manual: true, status: "pending" });
      await receiver.waitFor(
        "the redelivery",
        (r) => r.filter((x) => x.event?.id === deliveries[0].eventId).length === count + 1,
      );
      ok(await request("POST", `/webhooks/${endpoint.id}/deliveries/99999999/redeliver`), 404);
      ok(await request("GET", "/webhooks/wh_000000000000000000000000"), 404);
    });

    it("rotation: the new secret is shown once; during the grace period both secrets sign (two signatures), each verifies", async () => {
      const rotated = ok(await request("POST", `/webhooks/${endpoint.id}/rotate-secret`, { gracePeriodSeconds: 3600 }));
      expect(rotated.secret).to.not.equal(endpoint.secret);
      expect(Date.parse(rotated.previousSecretValidUntil) - Date.now()).to.be.within(3_500_000, 3_600_000);
      const test = ok(await request("POST", `/webhooks/${endpoint.id}/test`), 202);
      await receiver.waitFor("a test signed twice", (r) => r.some((x) => x.event?.id === test.eventId));
      const received = receiver.received.find((x) => x.event?.id === test.eventId)!;
      expect(received.headers["webhook-signature"].split(" ")).to.have.length(2);
      verifyWith(rotated.secret, received);
      verifyWith(endpoint.secret, received);
      // With no grace, the old secret stops at once.
      const immediate = ok(await request("POST", `/webhooks/${endpoint.id}/rotate-secret`, { gracePeriodSeconds: 0 }));
      expect(immediate.previousSecretValidUntil).to.equal(null);
      const next = ok(await request("POST", `/webhooks/${endpoint.id}/test`), 202);
      await receiver.waitFor("a test signed once", (r) => r.some((x) => x.event?.id === next.eventId));
      const single = receiver.received.find((x) => x.event?.id === next.eventId)!;
      expect(single.headers["webhook-signature"].split(" ")).to.have.length(1);
      verifyWith(immediate.secret, single);
      expect(() => verifyWith(rotated.secret, single)).to.throw();
      endpoint.secret = immediate.secret;
    });

    it("a failing receiver: retried on the schedule, then failed with every answer recorded; after a day's worth (here 2 s) of failures the endpoint is disabled; PATCH enabled re-enables", async () => {
      receiver.answer = (event) =>
        event?.data?.endpointId === endpoint.id ? { status: 500, body: "receiver is down" } : { status: 200 };
      const test = ok(await request("POST", `/webhooks/${endpoint.id}/test`), 202);
      await receiver.waitFor(
        "four attempts",
        (r) => r.filter((x) => x.event?.id === test.eventId).length === 4,
        20_000,
      );
      let delivery: any;
      for (let i = 0; i < 50 && delivery?.status !== "failed"; i++) {
        await new Promise((r) => setTimeout(r, 100));
        delivery = ok(await keyed.get(`/webhooks/${endpoint.id}/deliveries`, { status: "failed" })).deliveries.find(
          (d: any) => d.eventId === test.eventId,
        );
      }
      expect(delivery.status).to.equal("failed");
      expect(delivery.attempts.map((a: any) => [a.attempt, a.statusCode, a.response, a.error])).to.deep.equal(
        [1, 2, 3, 4].map((n) => [n, 500, "receiver is down", "answered 500"]),
      );
      let listed = ok(await keyed.get(`/webhooks/${endpoint.id}`));
      expect(listed.failingSince).to.be.a("string");

      // Keep failing past WEBHOOK_DISABLE_AFTER: disabled, and said so.
      await new Promise((r) => setTimeout(r, 2100));
      const last = ok(await request("POST", `/webhooks/${endpoint.id}/test`), 202);
      await receiver.waitFor("one more failure", (r) => r.some((x) => x.event?.id === last.eventId));
      for (let i = 0; i < 50 && listed.enabled; i++) {
        await new Promise((r) => setTimeout(r, 100));
        listed = ok(await keyed.get(`/webhooks/${endpoint.id}`));
      }
      expect(listed).to.include({ enabled: false, disabledReason: "every delivery failed for 2 s" });
      expect(ok(await request("POST", `/webhooks/${endpoint.id}/test`), 409).message).to.match(/is disabled/);

      receiver.answer = () => ({ status: 200 });
      const enabled = ok(await request("PATCH", `/webhooks/${endpoint.id}`, { enabled: true }));
      expect(enabled).to.include({ enabled: true, disabledAt: null, disabledReason: null, failingSince: null });
      // The delivery that was still retrying when the endpoint was disabled goes out now.
      await receiver.waitFor(
        "the pending delivery after re-enabling",
        (r) => r.some((x) => x.event?.id === last.eventId && x.status === 200),
        10_000,
      );
    });

    it("a receiver that answers too slowly or too much cannot hold a worker: timeout and size cap, recorded", async () => {
      const slowPath = `${receiver.url}/slow`;
      const slow = await register({ url: slowPath });
      receiver.answer = (event, headers) => {
        if (event?.data?.endpointId !== slow.id) return { status: 200 };
        return headers["webhook-id"] && Number(headers["webhook-id"]) % 2 === 0
          ? { status: 200, delayMs: 4000 }
          : { status: 200, body: "x".repeat(20_000) };
      };
      const ids = [
        ok(await request("POST", `/webhooks/${slow.id}/test`), 202),
        ok(await request("POST", `/webhooks/${slow.id}/test`), 202),
      ];
      let deliveries: any[] = [];
      for (let i = 0; i < 60; i++) {
        await new Promise((r) => setTimeout(r, 100));
        deliveries = ok(await keyed.get(`/webhooks/${slow.id}/deliveries`)).deliveries.filter((d: any) =>
          ids.some((t) => t.deliveryId === d.id),
        );
        if (deliveries.length === 2 && deliveries.every((d) => d.attempts.length >= 1)) break;
      }
      const errors = deliveries.map((d) => d.attempts[0]);
      const timedOut = errors.find((a) => a.statusCode === null);
      expect(timedOut.error).to.equal("no complete answer within 1500 ms");
      expect(timedOut.durationMs).to.be.within(1400, 2500);
      const huge = errors.find((a) => a.statusCode === 200);
      expect(huge.error).to.equal("answer cut at 4096 bytes");
      expect(huge.response).to.have.length(1024);
      receiver.answer = () => ({ status: 200 });
      ok(await request("DELETE", `/webhooks/${slow.id}`));
      ok(await request("GET", `/webhooks/${slow.id}`), 404);
    });

    it("refuses what it must not send to, naming the url; keyless endpoints only for a prepared keyless txId", async () => {
      const refusedUrl = async (url: string, message: RegExp) => {
        const res = await request("POST", "/webhooks", { url });
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.message).to.match(message);
        expect(res.body.error.details.field).to.equal("url");
      };
      await refusedUrl("http://169.254.169.254/latest/meta-data", /169\.254\.169\.254 is a metadata address/);
      await refusedUrl("http://[fe80::1]/hook", /link-local/);
      await refusedUrl("http://0.0.0.0/hook", /reserved/);
      await refusedUrl("ftp://127.0.0.1/hook", /must be an https URL/);
      await refusedUrl("http://user:pw@127.0.0.1/hook", /must not carry credentials/);
      await refusedUrl("http://no-such-host.invalid/hook", /does not resolve/);
      const badType = await request("POST", "/webhooks", { url: receiver.url, eventTypes: ["nope"] });
      expect(badType.status).to.equal(400);
      expect(badType.body.message).to.match(/^eventTypes\.0 /);
      const noKey = await api.post("/webhooks", { url: receiver.url });
      expect(noKey.status).to.equal(401);
      const relayedTx = await prepareRelayedToken(api, `Z${run}`, sandbox.accounts[6].address);
      const privateType = await api.post("/webhooks", {
        url: receiver.url,
        txId: relayedTx,
        eventTypes: ["kyc.approved"],
      });
      expect(privateType.status).to.equal(400);
      expect(privateType.body.message).to.match(/kyc\.approved is not sent for a batch prepared without a key/);
      for (let i = 0; i < 3; i++) ok(await api.post("/webhooks", { url: receiver.url, txId: relayedTx }), 201);
      expect((await api.post("/webhooks", { url: receiver.url, txId: relayedTx })).status).to.equal(409);
      const withKey = await request("POST", "/webhooks", { url: receiver.url, txId: relayedTx });
      expect(withKey.status).to.equal(400);
    });
  });

  describe("metrics", () => {
    it("/metrics counts this process's deliveries by outcome and shows what the outbox still owes and since when", async () => {
      const text = await (await fetch(`${service.url}/metrics`)).text();
      const value = (line: RegExp) => Number(line.exec(text)?.[1]);
      expect(value(/^tak_webhook_deliveries_total\{outcome="delivered"\} (\d+)/m)).to.be.greaterThan(30);
      expect(value(/^tak_webhook_deliveries_total\{outcome="retry"\} (\d+)/m)).to.be.greaterThan(2);
      expect(value(/^tak_webhook_deliveries_total\{outcome="failed"\} (\d+)/m)).to.be.greaterThan(0);
      expect(value(/^tak_webhook_deliveries_owed\{state="pending"\} (\d+)/m)).to.be.a("number");
      expect(value(/^tak_events_oldest_undelivered_seconds ([\d.e+-]+)/m)).to.be.at.least(0);
      expect(value(/^tak_event_streams (\d+)/m)).to.be.a("number");
    });
  });

  describe("retention", () => {
    it("a stream resuming from before the pruned events is told so (410), and a fresh one works", async () => {
      const [row] = await service.services.db.query<{ position: string }>(
        "SELECT min(position)::text AS position FROM events WHERE api_key_id = $1",
        [keyId],
      );
      await service.services.db.query("UPDATE events SET created_at = created_at - interval '30 days'");
      expect(await pruneEvents(service.services.db, 7 * 86_400_000)).to.be.greaterThan(0);
      const expired = await openStream({}, { "Last-Event-ID": row.position });
      expect(expired.status, expired.errorBody).to.equal(410);
      expect(JSON.parse(expired.errorBody).error.code).to.equal("EVENT_ID_EXPIRED");
      const fresh = await openStream({});
      expect(fresh.status).to.equal(200);
      const sent = await execute(keyed, issuer, {
        method: "newTokenization",
        chainId,
        tokenizerEmail: `rt-${run.toLowerCase()}@events.test`,
        name: "RT",
        tokenSymbol: `R${run}`,
      });
      await fresh.waitFor("a new event after pruning", (e) => e.some((x) => x.data.txId === sent.prepared.txId));
    });
  });
});

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}
