import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { createApiClient, execute } from "../client/index";
import { createSandbox } from "../scripts/lib/sandbox";
import { emitEvents } from "../service/events/emit";
import type { NewEvent } from "../service/events/types";
import { openDb } from "../service/store/db";
import { WebhookReceiver, type Received } from "../test/helpers/webhook-receiver";
import { serviceEnv } from "./reads";
import { startServiceProcess } from "./service-process";

export interface LatencyFigures {
  samples: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

export interface EventsResult {
  measuredAt: string;
  cpus: number;
  database: "embedded";
  /** From the event's commit (its `timestamp`: the writing transaction's time) to the receiver having the request. */
  latency: { batchEvents: LatencyFigures; testEvents: LatencyFigures };
  /** One instance draining a backlog of events (4 per txId, in order per txId) to one receiver answering at once. */
  throughput: { events: number; seconds: number; eventsPerSec: number; concurrency: number };
  notes: string[];
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

function figures(latencies: number[]): LatencyFigures {
  const sorted = [...latencies].sort((a, b) => a - b);
  const round = (v: number) => Math.round(v * 10) / 10;
  return {
    samples: sorted.length,
    p50Ms: round(percentile(sorted, 50)),
    p95Ms: round(percentile(sorted, 95)),
    maxMs: round(sorted.at(-1) ?? NaN),
  };
}

/** Milliseconds from each event's commit to its arrival at the receiver (first arrival per event). */
function latenciesOf(received: Received[], ids: Set<string>): number[] {
  const seen = new Set<string>();
  const out: number[] = [];
  for (const r of received) {
    const id = r.headers["webhook-id"];
    if (!ids.has(id) || seen.has(id)) continue;
    seen.add(id);
    out.push(r.at - Date.parse(r.event.timestamp));
  }
  return out;
}

/**
 * Webhook delivery against the real service in its own process, embedded database, in-process chains:
 * 1. latency from commit to receiver: the events of sequential client-signed batches (newTokenization: 4 events each),
 *    and single test events sent one at a time (the outbox → dispatcher → HTTP path alone);
 * 2. throughput: the service is stopped, a backlog of events is written into its outbox (as the service writes them:
 *    emitEvents, 4 per txId), it is started again and the time to deliver them all is measured.
 */
export async function measureEvents(
  hre: HardhatRuntimeEnvironment,
  opts: { writes?: number; tests?: number; backlog?: number; log?: (line: string) => void } = {},
): Promise<EventsResult> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const writes = opts.writes ?? 25;
  const tests = opts.tests ?? 100;
  const backlog = opts.backlog ?? 4000;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-bench-events-"));
  const sandbox = await createSandbox(hre, { deploymentsDir: path.join(dir, "deployments") });
  const receiver = await WebhookReceiver.start();
  const env = serviceEnv(sandbox, dir, "embedded");
  let service = await startServiceProcess(env);
  try {
    const issuer = sandbox.accounts[1];
    const { apiKey, id: benchKeyId } = await service.admin({
      command: "keys.create",
      email: "bench-events@example.com",
      plan: "Enterprise",
    });
    await service.admin({ command: "signers.add", address: issuer.address, keyId: benchKeyId });
    const created = await fetch(`${service.url}/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey },
      body: JSON.stringify({ url: `${receiver.url}/bench` }),
    });
    const endpoint = (await created.json()) as { id: string };
    if (created.status !== 201)
      throw new Error(`POST /webhooks answered ${created.status}: ${JSON.stringify(endpoint)}`);

    // 1a. Batches: the events of each write are committed in its finishing transaction (and its broadcast before).
    log(`  latency: ${writes} client-signed batches (newTokenization), one after the other`);
    const api = createApiClient({ baseUrl: service.url, apiKey });
    const batchIds = new Set<string>();
    const run = Math.random()
      .toString(36)
      .slice(2, 4)
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, "B");
    for (let i = 0; i < writes; i++) {
      await execute(api, issuer, {
        method: "newTokenization",
        chainId: "aa36a7",
        signerAddress: issuer.address,
        tokenizerEmail: "bench@events.test",
        name: "Bench",
        tokenSymbol: `B${run}${i}`,
      });
    }
    await receiver.waitFor("the batches' events", (r) => r.length >= writes * 4, 60_000);
    for (const r of receiver.received) batchIds.add(r.headers["webhook-id"]);
    const batchLatency = figures(latenciesOf(receiver.received, batchIds));

    // 1b. Test events, one at a time (each committed by its request, delivered before the next is asked for).
    log(`  latency: ${tests} single test events`);
    const testIds = new Set<string>();
    for (let i = 0; i < tests; i++) {
      const res = await fetch(`${service.url}/webhooks/${endpoint.id}/test`, {
        method: "POST",
        headers: { "x-api-key": apiKey },
      });
      const { eventId } = (await res.json()) as { eventId: string };
      testIds.add(eventId);
      await receiver.waitFor("a test event", (r) => r.some((x) => x.headers["webhook-id"] === eventId), 10_000);
    }
    const testLatency = figures(latenciesOf(receiver.received, testIds));

    // 2. A backlog written while the service is down, drained by one instance.
    await service.stop();
    const sample = receiver.received.find((r) => r.event?.type === "batch.completed")!.event;
    const db = await openDb({ dataDir: path.join(dir, "sandbox", "pglite") });
    const keyId = (
      await db.query<{ api_key_id: string }>("SELECT api_key_id FROM webhook_endpoints WHERE id = $1", [endpoint.id])
    )[0].api_key_id;
    const backlogIds: string[] = [];
    for (let start = 0; start < backlog; start += 400) {
      const events: NewEvent[] = [];
      for (let i = start; i < Math.min(backlog, start + 400); i++) {
        const txId = "0x" + (Math.floor(i / 4) + 1).toString(16).padStart(64, "0");
        events.push({
          type: "batch.completed",
          apiKeyId: keyId,
          txId,
          chainId: 11155111,
          hash: sample.hash,
          data: { ...sample.data, txId },
        });
      }
      await db.transaction((q) => emitEvents(q, events));
    }
    for (const row of await db.query<{ position: string }>(
      "SELECT position::text AS position FROM events WHERE tx_id LIKE '0x00000000%' ORDER BY events.position",
    ))
      backlogIds.push(row.position);
    await db.close();
    const before = receiver.received.length;
    log(`  throughput: ${backlog} events in the outbox, the service started again`);
    service = await startServiceProcess(env);
    const ids = new Set(backlogIds);
    await receiver.waitFor(
      "the backlog",
      (r) => r.filter((x) => ids.has(x.headers["webhook-id"])).length >= backlog,
      300_000,
    );
    const drained = receiver.received.slice(before).filter((r) => ids.has(r.headers["webhook-id"]));
    const seconds = (drained.at(-1)!.at - drained[0].at) / 1000;
    const concurrency = 16;
    return {
      measuredAt: new Date().toISOString(),
      cpus: os.cpus().length,
      database: "embedded",
      latency: { batchEvents: batchLatency, testEvents: testLatency },
      throughput: {
        events: backlog,
        seconds: Math.round(seconds * 100) / 100,
        eventsPerSec: Math.round(backlog / seconds),
        concurrency,
      },
      notes: [
        "latency starts at the event's timestamp, the writing transaction's clock (at or before its commit), so it is an upper bound of commit → receiver",
        "the receiver is on the same machine and answers at once; a real receiver's own time adds to each delivery (deliveries run WEBHOOK_CONCURRENCY at a time)",
      ],
    };
  } finally {
    await service.stop().catch(() => undefined);
    await receiver.close();
    await sandbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
