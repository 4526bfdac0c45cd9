// tier: e2e
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { ApiKeys } from "../../service/store/api-keys";
import { openDb } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { Signers } from "../../service/store/signers";
import { killHard, startServiceProcess } from "../helpers/child-service";
import { execute } from "../helpers/flow";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { testEnv } from "../helpers/service";
import { verifyWith, WebhookReceiver } from "../helpers/webhook-receiver";

/**
 * The outbox survives a crash: the service is killed (SIGKILL) while deliveries are pending and its receiver answers
 * 500, started again on the same data directory, and every event reaches the receiver once it answers 200.
 */
describe("e2e: webhook deliveries survive kill -9", function () {
  this.timeout(240_000);
  let sandbox: Sandbox;
  let receiver: WebhookReceiver | undefined;
  const children: ChildProcess[] = [];
  let dataDir: string;

  before(async () => {
    sandbox = await getSandbox();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-events-recovery-"));
  });
  after(async () => {
    for (const child of children) await killHard(child);
    await receiver?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("events committed before the kill, still failing at the kill, are all delivered after the restart, signed, in order per txId", async () => {
    const issuer = sandbox.accounts[1];
    const pglite = path.join(dataDir, "sandbox", "pglite");
    const setUp = await openDb({ dataDir: pglite });
    await migrate(setUp);
    const { key, record } = await new ApiKeys(setUp).create({ email: "ops@events-recovery.test", plan: "Enterprise" });
    await new Signers(setUp).add(issuer.address, "all-keys");
    await setUp.close();

    receiver = await WebhookReceiver.start();
    receiver.answer = () => ({ status: 500, body: "down" });
    const env = testEnv(sandbox, dataDir, {
      WEBHOOK_RETRY_SCHEDULE: "300ms,600ms,1s,1s,2s,2s,2s,2s,2s,2s,2s,2s",
      WEBHOOK_DISABLE_AFTER: "1h",
    });
    const first = await startServiceProcess(env);
    children.push(first.child);
    const api = first.api.withKey(key);
    const created = await api.post("/webhooks", { url: `${receiver.url}/hook` });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const secret: string = created.body.secret;

    const run = Math.random()
      .toString(36)
      .slice(2, 5)
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, "K");
    const txIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const done = await execute(api, issuer, {
        method: "newTokenization",
        chainId: "aa36a7",
        tokenizerEmail: `k-${run.toLowerCase()}@recovery.test`,
        name: "Kill",
        tokenSymbol: `K${run}${i}`,
      });
      txIds.push(done.prepared.txId);
    }
    // The receiver is failing them: some attempted, retries pending.
    await receiver.waitFor("failed attempts", (r) => r.filter((x) => x.status === 500).length >= 4);
    await killHard(first.child);

    // What the outbox holds for the key (read with the service down), and what is still owed to the endpoint.
    const db = await openDb({ dataDir: pglite });
    const events = await db.query<{ position: string; type: string; tx_id: string }>(
      "SELECT position::text AS position, type, tx_id FROM events WHERE api_key_id = $1 AND endpoint_id IS NULL ORDER BY events.position",
      [record.id],
    );
    const owed = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status IN ('pending', 'delivering')",
    );
    await db.close();
    expect(events.map((e) => e.type)).to.deep.equal(
      txIds.flatMap(() => ["transaction.broadcast", "transaction.confirmed", "batch.completed", "token.created"]),
    );
    expect(owed[0].n, "deliveries pending at the kill").to.be.greaterThan(0);
    const deliveredBeforeKill = receiver.delivered().length;
    expect(deliveredBeforeKill).to.equal(0);

    receiver.answer = () => ({ status: 200 });
    const second = await startServiceProcess(env);
    children.push(second.child);
    const ids = events.map((e) => e.position);
    await receiver.waitFor(
      "every event after the restart",
      (r) => ids.every((id) => r.some((x) => x.status === 200 && x.headers["webhook-id"] === id)),
      60_000,
    );

    const delivered = receiver.delivered();
    for (const r of delivered) verifyWith(secret, r);
    // Per txId, the first successful delivery of each event came in the order the events were committed.
    for (const txId of txIds) {
      const firsts = events
        .filter((e) => e.tx_id === txId)
        .map((e) => delivered.findIndex((r) => r.headers["webhook-id"] === e.position));
      expect(firsts, txId).to.deep.equal([...firsts].sort((a, b) => a - b));
    }
    const listed = (await second.api.withKey(key).get(`/webhooks/${created.body.id}`)).body;
    expect(listed).to.include({ enabled: true, pendingDeliveries: 0, failingSince: null });
  });
});
