import type { Overview } from "../../wire/console";
import { chart } from "./charts";
import { badge, code, html, table, time } from "./html";
import { page, type PageContext } from "./layout";

type Bucket = Overview["lastHour"][number];

const outcomes = [
  { label: "succeeded", className: "s-ok", color: "#1f8a4c", value: (b: Bucket) => b.success },
  { label: "rejected", className: "s-bad", color: "#c0392b", value: (b: Bucket) => b.rejected },
];
const latency = [
  { label: "p50", className: "s-p50", color: "#1f4fd1", value: (b: Bucket) => b.p50Ms },
  { label: "p95", className: "s-p95", color: "#8e44ad", value: (b: Bucket) => b.p95Ms },
];
const payments = [
  { label: "settled", className: "s-settled", color: "#117a8b", value: (b: Bucket) => b.settled },
  { label: "released", className: "s-released", color: "#b9770e", value: (b: Bucket) => b.released },
];

/** The overview: chains and their RPC URLs, the service's wallets, the queues, the last hour's and day's activity. */
export function overviewPage(ctx: PageContext, o: Overview): string {
  const chains = o.chains.map(
    (
      c,
    ) => html`<section aria-labelledby="chain-${c.chainId}"><h2 id="chain-${c.chainId}">${c.name} <span class="muted">(chain ${c.chainId})</span></h2>
${
  c.headBlock === null
    ? html`<p>${badge("failed")} The chain did not answer within 3 seconds.</p>`
    : html`<p>Head block <strong>${c.headBlock}</strong>, ${c.headAgeSeconds} s old; ${c.confirmations} confirmation(s) count as final.</p>`
}
${table(
  `RPC URLs of chain ${c.chainId}`,
  ["URL", "In use", "Health", "Failures in a row", "Answered", "Failed", "Throttled", "Latency"],
  c.rpc.map((r) => [
    code(r.url),
    r.inUse ? "yes" : "no",
    badge(r.healthy ? "active" : "failed"),
    r.failuresInARow,
    r.answered,
    r.failed,
    r.throttled,
    r.latencyMs === null ? "—" : `${r.latencyMs} ms`,
  ]),
)}
</section>`,
  );
  const wallets = table(
    "The service's wallets",
    ["Wallet", "Chain", "Address", "Balance", "Transactions left", "Next nonce", "In flight", "Read"],
    o.wallets.map((w) => [
      w.low ? html`${w.role} ${badge("failed")} <strong>low balance</strong>` : w.role,
      w.chainId,
      code(w.address),
      w.balance ?? "—",
      w.transactionsLeft ?? "—",
      w.nextNonce ?? "—",
      w.inFlight,
      time(w.readAt),
    ]),
    "No relayer or settlement wallet on this deployment.",
  );
  const q = o.queue;
  const queue = table(
    "Queues",
    [
      "Batches prepared",
      "Batches in flight",
      "Payments reserved",
      "Payments settling",
      "Webhook deliveries owed",
      "Oldest undelivered",
    ],
    [
      [
        q.prepared,
        q.sending,
        q.paymentsReserved,
        q.paymentsSettling,
        q.webhooksOwed,
        `${q.oldestUndeliveredSeconds} s`,
      ],
    ],
  );
  const charts = (id: string, buckets: Bucket[], per: string) => html`<div class="grid">
${chart(`${id}-ops`, `Operations by outcome, per ${per}`, buckets, outcomes, "bars", "batches")}
${chart(`${id}-latency`, `Time from send to confirmed, per ${per}`, buckets, latency, "lines", "ms")}
${chart(`${id}-payments`, `Payments settled and released, per ${per}`, buckets, payments, "bars", "payments")}
</div>`;
  return page(
    ctx,
    "overview",
    "Overview",
    html`<p class="muted">As of ${time(o.generatedAt)}.</p>
${chains}
<section aria-labelledby="wallets"><h2 id="wallets">Wallets</h2>${wallets}</section>
<section aria-labelledby="queues"><h2 id="queues">Queues</h2>${queue}</section>
<section aria-labelledby="hour"><h2 id="hour">The last hour</h2>${charts("hour", o.lastHour, "minute")}</section>
<section aria-labelledby="day"><h2 id="day">The last day</h2>${charts("day", o.lastDay, "half hour")}</section>`,
  );
}
