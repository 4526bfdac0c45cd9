import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { createSandbox } from "../scripts/lib/sandbox";
import { hashPassword } from "../service/auth/operator-passwords";
import { ApiKeys } from "../service/store/api-keys";
import { openDb, type Db } from "../service/store/db";
import { migrate } from "../service/store/migrate";
import { Operators } from "../service/store/operators";
import { serviceEnv } from "./reads";
import { startServiceProcess } from "./service-process";

/** The bound the issue sets: a console page answers within this on the embedded database. */
export const CONSOLE_TARGET_MS = 300;

export interface ConsoleRow {
  page: string;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  status: number;
  pass: boolean;
}

const SIZE = { batches: 10_000, payments: 10_000, deliveries: 10_000, audit: 1_000 };

/**
 * Fills the embedded database as a busy deployment's would be (SIZE: batches with their transactions and events,
 * x402 payments settled five to a Multicall3 transaction, one endpoint's webhook deliveries with their attempts, the
 * audit log), in SQL, before the service owns it.
 */
export async function seedConsole(db: Db): Promise<{
  keyId: string;
  txId: string;
  hash: string;
  address: string;
  paymentId: string;
  endpointId: string;
  payer: string;
  deepBatch: string;
  deepPayment: string;
  deepDelivery: string;
}> {
  const { record } = await new ApiKeys(db).create({ email: "tenant@bench.test", plan: "Enterprise" });
  await new Operators(db).add({
    email: "ops@bench.test",
    role: "admin",
    passwordHash: await hashPassword("bench console password"),
  });
  const n = SIZE.batches;
  await db.query(
    `INSERT INTO batches (tx_id, chain_id, method, execution_mode, signer, api_key_id, status, body, plan, info, error, created_at, updated_at, sent_at, completed_at)
     SELECT '0x' || md5('tx' || i) || md5('id' || i), CASE WHEN i % 5 = 0 THEN 11155111 ELSE 84532 END,
            (ARRAY['agentCreateToken', 'agentRegister', 'mintToken', 'faucetBkn'])[1 + i % 4],
            CASE WHEN i % 3 = 0 THEN 'service-relayed' ELSE 'client-signed' END, '0x' || lpad(to_hex(i % 200), 40, '0'),
            CASE WHEN i % 3 = 0 THEN NULL ELSE $2 END,
            CASE WHEN i % 50 = 0 THEN 'sending' WHEN i % 7 = 0 THEN 'rejected' ELSE 'success' END,
            jsonb_build_object('symbol', 'B' || i, 'chainId', '84532'), '{}', '{}', CASE WHEN i % 7 = 0 AND i % 50 <> 0 THEN 'transaction 1 reverted on-chain' END,
            now() - make_interval(secs => i * 8.6), now(), now() - make_interval(secs => i * 8.6 - 1),
            CASE WHEN i % 50 = 0 THEN NULL ELSE now() - make_interval(secs => i * 8.6 - 3) END
     FROM generate_series(1, $1::int) i`,
    [n, record.id],
  );
  await db.query(
    `INSERT INTO batch_transactions (tx_id, index, unsigned, tx_hash, status, block_number, gas_used, broadcast_at, broadcast_block, confirmed_at)
     SELECT b.tx_id, 0, jsonb_build_object('from', b.signer, 'to', '0x' || lpad(to_hex(7 + length(b.method)), 40, '0'), 'nonce', 1, 'chainId', 84532, 'data', '0x', 'value', '0x00',
              'type', 2, 'maxFeePerGas', '2000000000', 'maxPriorityFeePerGas', '1000000000', 'gasLimit', '0x30d40'),
            '0x' || md5('hash' || b.tx_id) || md5('h2' || b.tx_id), CASE b.status WHEN 'success' THEN 'confirmed' WHEN 'rejected' THEN 'reverted' ELSE 'broadcast' END,
            CASE WHEN b.status = 'sending' THEN NULL ELSE 100 END, CASE WHEN b.status = 'sending' THEN NULL ELSE 50000 END, b.sent_at,
            CASE WHEN b.status = 'sending' THEN 1 END, b.completed_at
     FROM batches b`,
  );
  await db.query(
    `INSERT INTO events (type, api_key_id, tx_id, chain_id, hash, data, created_at)
     SELECT e.type, b.api_key_id, b.tx_id, 84532, t.tx_hash, jsonb_build_object('txId', b.tx_id, 'transaction', jsonb_build_object('index', 0, 'hash', t.tx_hash, 'nonce', 1)), b.created_at
     FROM batches b JOIN batch_transactions t ON t.tx_id = b.tx_id, (VALUES ('transaction.broadcast'), ('transaction.confirmed'), ('batch.completed')) e(type)
     WHERE b.api_key_id IS NOT NULL`,
  );
  await db.query(
    `INSERT INTO payments (id, subject, route, tx_id, network, asset, pay_to, amount, payer, authorization_nonce, valid_before, requirements, status,
                           settle_tx_hash, settlement, release_reason, created_at, updated_at)
     SELECT gen_random_uuid(), 'p:' || i, CASE WHEN b.tx_id IS NULL THEN '/get-agents' ELSE '/send-transactions' END, b.tx_id, 'eip155:84532',
            '0x' || lpad('a', 40, '0'), '0x' || lpad('b', 40, '0'), 10000, '0x' || lpad(to_hex(i % 100), 40, '0'), '0x' || md5('n' || i) || md5('m' || i),
            2000000000, '{}', CASE WHEN i % 13 = 0 THEN 'released' ELSE 'settled' END,
            CASE WHEN i % 13 = 0 THEN NULL ELSE '0x' || md5('settle' || (i / 5)) || md5('s2' || (i / 5)) END,
            CASE WHEN i % 13 = 0 THEN NULL ELSE jsonb_build_object('transaction', '0x' || md5('settle' || (i / 5)) || md5('s2' || (i / 5))) END,
            CASE WHEN i % 13 = 0 THEN 'the operation failed' END, now() - make_interval(secs => i * 8.6), now() - make_interval(secs => i * 8.6 - 2)
     FROM generate_series(1, $1::int) i LEFT JOIN LATERAL (SELECT tx_id FROM batches WHERE execution_mode = 'service-relayed' ORDER BY tx_id OFFSET i % 3000 LIMIT 1) b ON i % 2 = 0`,
    [SIZE.payments],
  );
  const endpointId = "wh_bench0000000000000000";
  await db.query(
    "INSERT INTO webhook_endpoints (id, api_key_id, url, event_types, secret_sealed, disabled_at, disabled_reason) VALUES ($1, $2, 'https://receiver.invalid/hook', '{}', 'sealed', now(), 'bench')",
    [endpointId, record.id],
  );
  await db.query(
    `INSERT INTO webhook_deliveries (endpoint_id, event_id, position, ordering_key, status, attempts, next_attempt_at, delivered_at, created_at)
     SELECT $1, e.id, e.position, e.tx_id, CASE WHEN e.id % 4 = 0 THEN 'failed' ELSE 'delivered' END, 1, e.created_at, e.created_at, e.created_at
     FROM events e ORDER BY e.id LIMIT $2`,
    [endpointId, SIZE.deliveries],
  );
  await db.query(
    "INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, response_body) SELECT id, 1, created_at, 40, CASE status WHEN 'failed' THEN 500 ELSE 200 END, 'ok' FROM webhook_deliveries",
  );
  await db.query(
    "INSERT INTO operator_audit (actor, action, target, before, after, at) SELECT 'ops@bench.test', 'credits.add', $2, '{\"balance\": 1}', '{\"balance\": 2}', now() - make_interval(secs => i) FROM generate_series(1, $1::int) i",
    [SIZE.audit, record.id],
  );
  const [sample] = await db.query<{ tx_id: string; tx_hash: string; signer: string }>(
    "SELECT b.tx_id, t.tx_hash, b.signer FROM batches b JOIN batch_transactions t USING (tx_id) WHERE b.api_key_id IS NOT NULL ORDER BY b.created_at LIMIT 1 OFFSET 5000",
  );
  const [payment] = await db.query<{ id: string }>(
    "SELECT id::text AS id FROM payments WHERE status = 'settled' ORDER BY created_at LIMIT 1 OFFSET 5000",
  );
  // Cursors of rows half-way down each list: a page there costs what one at the top does (both ways).
  const [deepBatch] = await db.query<{ cursor: string }>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '~' || tx_id AS cursor
     FROM batches WHERE chain_id = 84532 ORDER BY created_at DESC, tx_id DESC OFFSET 4000 LIMIT 1`,
  );
  const [deepPayment] = await db.query<{ cursor: string }>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '~' || id AS cursor
     FROM payments WHERE status = 'settled' ORDER BY created_at DESC, id DESC OFFSET 4500 LIMIT 1`,
  );
  const [deepDelivery] = await db.query<{ id: string }>(
    "SELECT id::text AS id FROM webhook_deliveries ORDER BY id DESC OFFSET 5000 LIMIT 1",
  );
  return {
    keyId: record.id,
    txId: sample.tx_id,
    hash: sample.tx_hash,
    address: sample.signer,
    paymentId: payment.id,
    endpointId,
    payer: "0x" + "0".repeat(38) + "2a",
    deepBatch: deepBatch.cursor,
    deepPayment: deepPayment.cursor,
    deepDelivery: deepDelivery.id,
  };
}

/** The lists with their filters applied, a page deep down each (older and newer), as an operator on call asks them. */
function filteredPages(facts: Awaited<ReturnType<typeof seedConsole>>): string[] {
  const day = (hoursAgo: number) => encodeURIComponent(new Date(Date.now() - hoursAgo * 3_600_000).toISOString());
  const e = encodeURIComponent;
  return [
    `/console/transactions?chain=84532&method=mintToken&status=success&from=${day(20)}&to=${day(2)}`,
    `/console/transactions?chain=11155111&status=rejected`,
    "/console/transactions?stuck=1",
    `/console/transactions?chain=84532&before=${e(facts.deepBatch)}`,
    `/console/transactions?chain=84532&after=${e(facts.deepBatch)}`,
    `/console/transactions?q=${facts.keyId}&method=agentRegister&from=${day(12)}`,
    `/console/payments?status=settled&chain=84532&method=${e("/get-agents")}&from=${day(20)}&to=${day(1)}`,
    `/console/payments?status=released&method=agentRegister`,
    `/console/payments?payer=${facts.payer}&status=settled`,
    `/console/payments?status=settled&before=${e(facts.deepPayment)}`,
    `/console/payments?status=settled&after=${e(facts.deepPayment)}`,
    "/console/webhooks?owed=1",
    "/console/webhooks?state=disabled",
    `/console/webhooks/${facts.endpointId}?status=failed&type=batch.completed`,
    `/console/webhooks/${facts.endpointId}?type=transaction.confirmed&from=${day(20)}&to=${day(4)}`,
    `/console/webhooks/${facts.endpointId}?before=${facts.deepDelivery}`,
    `/console/webhooks/${facts.endpointId}?after=${facts.deepDelivery}`,
    `/console/audit?action=credits.add&from=${day(1)}`,
    `/console/api/transactions?chain=84532&status=success&method=faucetBkn`,
    `/console/api/payments?chain=84532&status=released`,
    `/console/api/webhooks/${facts.endpointId}?type=batch.completed&status=delivered`,
  ];
}

/** Each console page and JSON list, asked `rounds` times one after the other (after two warm-ups), with the operator's session. */
export async function measureConsole(
  hre: HardhatRuntimeEnvironment,
  options: { rounds: number },
): Promise<{ rows: ConsoleRow[]; seedSeconds: number; size: typeof SIZE }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-bench-console-"));
  const sandbox = await createSandbox(hre, { deploymentsDir: path.join(dir, "deployments") });
  const started = Date.now();
  const db = await openDb({ dataDir: path.join(dir, "data", "sandbox", "pglite") });
  let facts: Awaited<ReturnType<typeof seedConsole>>;
  try {
    await migrate(db);
    facts = await seedConsole(db);
    await db.query("ANALYZE");
  } finally {
    await db.close();
  }
  const seedSeconds = Math.round((Date.now() - started) / 100) / 10;
  const service = await startServiceProcess({
    ...serviceEnv(sandbox, path.join(dir, "data"), "embedded"),
    DATA_ENCRYPTION_KEY: "bench-console-data-encryption-key-0123456789",
  });
  try {
    const signIn = await fetch(`${service.url}/console/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "ops@bench.test", password: "bench console password" }),
    });
    if (signIn.status !== 200) throw new Error(`sign-in answered ${signIn.status}: ${await signIn.text()}`);
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0];
    const second = (await (await fetch(`${service.url}/console/api/transactions`, { headers: { cookie } })).json()) as {
      next: string;
    };
    const pages = [
      "/console",
      "/console/transactions",
      `/console/transactions?before=${encodeURIComponent(second.next)}`,
      `/console/transactions?q=${facts.address}`,
      `/console/transactions?q=${facts.keyId}&status=rejected`,
      `/console/transactions?q=${facts.hash}`,
      `/console/transactions/${facts.txId}`,
      "/console/payments",
      "/console/payments?status=released",
      `/console/payments/${facts.paymentId}`,
      "/console/webhooks",
      `/console/webhooks/${facts.endpointId}`,
      `/console/webhooks/${facts.endpointId}?status=failed`,
      "/console/kyc",
      "/console/keys",
      "/console/audit",
      "/console/api/overview",
      "/console/api/transactions?status=sending",
      "/console/api/payments/totals?days=30",
      // The filters of issue 50, applied (chain, method, status, time range, stuck, state, event type), both ways.
      ...filteredPages(facts),
    ];
    const rows: ConsoleRow[] = [];
    for (const page of pages) {
      const times: number[] = [];
      let status = 0;
      for (let i = 0; i < options.rounds + 2; i++) {
        const t0 = process.hrtime.bigint();
        const res = await fetch(`${service.url}${page}`, { headers: { cookie }, redirect: "manual" });
        await res.arrayBuffer();
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        status = res.status;
        if (i >= 2) times.push(ms);
      }
      times.sort((a, b) => a - b);
      const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))] * 10) / 10;
      const row = {
        page,
        p50Ms: at(0.5),
        p95Ms: at(0.95),
        maxMs: Math.round(times[times.length - 1] * 10) / 10,
        status,
      };
      rows.push({ ...row, pass: (status === 200 || status === 303) && row.p95Ms <= CONSOLE_TARGET_MS });
    }
    return { rows, seedSeconds, size: SIZE };
  } finally {
    await service.stop();
    await sandbox.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
