import { formatUnits } from "ethers";
import type { Overview } from "../../wire/console";
import { ether } from "../triage";
import { chart } from "./charts";
import { badge, hashOf, html, number, stateBadge, table, time, type Html } from "./html";
import { page, type PageContext } from "./layout";

type Bucket = Overview["lastHour"][number];
type Signal = Overview["signals"][number];

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

const ORDER = { bad: 0, warn: 1, ok: 2 } as const;

/** The triage first: every threshold as a state in colour and words, its figure a link to the list it counts. */
function signals(ctx: PageContext, all: Signal[]): Html {
  const sorted = [...all].sort((a, b) => ORDER[a.state] - ORDER[b.state]);
  const failing = all.filter((s) => s.state !== "ok").length;
  return html`<section aria-labelledby="triage"><h2 id="triage">${failing ? `${failing} thing${failing > 1 ? "s" : ""} to look at` : "Nothing to look at"}</h2>
<ul class="signals">${sorted.map(
    (s) => html`<li class="signal state-${s.state}" id="signal-${s.id}" data-state="${s.state}">
<div class="signal-head">${stateBadge(s.state)} <strong>${s.title}</strong></div>
<div class="signal-value">${s.link ? html`<a href="${ctx.base}${s.link}">${s.value}</a>` : s.value}</div>
<p>${s.words}</p></li>`,
  )}</ul></section>`;
}

const gweiOf = (wei: string | null) => (wei === null ? "—" : `${Number(formatUnits(wei, "gwei")).toFixed(3)} gwei`);

function chainSection(ctx: PageContext, c: Overview["chains"][number]): Html {
  const head =
    c.headBlock === null
      ? html`<p>${badge("failed")} The chain did not answer within 3 seconds.</p>`
      : html`<p>Head block ${hashOf(String(c.headBlock), { explorer: c.explorer, kind: "block", full: true })}, ${c.headAgeSeconds} s old; a block every ${c.blockSeconds} s; base fee ${gweiOf(c.baseFeePerGas)}; ${c.confirmations} confirmation(s) count as final.</p>`;
  return html`<section aria-labelledby="chain-${c.chainId}"><h2 id="chain-${c.chainId}">${c.name} <span class="muted">(chain ${c.chainId})</span></h2>
${head}
${table(
  `RPC URLs of chain ${c.chainId}`,
  ["URL", "In use", "Health", "Failures in a row", "Answered", "Failed", "Throttled", "Latency"],
  c.rpc.map((r) => [
    html`<code>${r.url}</code>`,
    r.inUse ? "yes" : "no",
    badge(r.healthy ? "healthy" : "failing"),
    r.failuresInARow,
    number(r.answered),
    number(r.failed),
    number(r.throttled),
    r.latencyMs === null ? "—" : `${r.latencyMs} ms`,
  ]),
)}
</section>`;
}

function walletsTable(ctx: PageContext, o: Overview): Html {
  return table(
    "The service's wallets",
    [
      "Wallet",
      "State",
      "Chain",
      "Address",
      "Balance",
      "Spent in 24 h",
      "Transactions left",
      "Next nonce",
      "In flight",
      "Read",
    ],
    o.wallets.map((w) => [
      w.role,
      stateBadge(w.state),
      w.chainId,
      hashOf(w.address, { explorer: ctx.explorers?.[w.chainId], kind: "address" }),
      w.balance === null ? "—" : `${w.balance} ${w.currency}`,
      w.spentPerDayWei === null ? "—" : `≈ ${ether(BigInt(w.spentPerDayWei))} ${w.currency}`,
      w.transactionsLeft === null ? "—" : number(w.transactionsLeft),
      w.nextNonce ?? "—",
      html`<a href="${ctx.base}/console/transactions?q=${w.address}&amp;status=sending">${w.inFlight}</a>`,
      time(w.readAt),
    ]),
    "No relayer or settlement wallet on this deployment.",
  );
}

function queueTable(ctx: PageContext, q: Overview["queue"]): Html {
  const link = (path: string, n: number) => html`<a href="${ctx.base}${path}">${number(n)}</a>`;
  return table(
    "Queues",
    ["Queue", "Now", "What it counts"],
    [
      ["Batches prepared", link("/console/transactions?status=prepared", q.prepared), "prepared, not sent yet"],
      ["Batches in flight", link("/console/transactions?status=sending", q.sending), "sent, not ended"],
      [
        "Batches stuck",
        link("/console/transactions?stuck=1", q.stuck),
        "a transaction pending too long, or priced below the base fee",
      ],
      ["Payments reserved", link("/console/payments?status=reserved", q.paymentsReserved), "waiting for their work"],
      [
        "Payments settling",
        link("/console/payments?status=settling", q.paymentsSettling),
        "settlement sent, not mined",
      ],
      [
        "Webhook deliveries owed",
        link("/console/webhooks?owed=1", q.webhooksOwed),
        `to enabled endpoints; the oldest event ${q.oldestUndeliveredSeconds} s old`,
      ],
      [
        "Webhook deliveries paused",
        link("/console/webhooks?state=disabled", q.webhooksPaused),
        "at disabled endpoints",
      ],
    ],
  );
}

/** The overview: the triage, chains and their RPC URLs, the service's wallets, the queues, the last hour and day. */
export function overviewPage(ctx: PageContext, o: Overview): string {
  const charts = (id: string, buckets: Bucket[], per: string) => html`<div class="grid charts">
${chart(`${id}-ops`, `Operations by outcome, per ${per}`, buckets, outcomes, "bars", "batches")}
${chart(`${id}-latency`, `Time from send to confirmed, per ${per}`, buckets, latency, "lines", "ms")}
${chart(`${id}-payments`, `Payments settled and released, per ${per}`, buckets, payments, "bars", "payments")}
</div>`;
  return page(
    ctx,
    "overview",
    "Overview",
    html`<p class="muted">As of ${time(o.generatedAt)}.</p>
${signals(ctx, o.signals)}
${o.chains.map((c) => chainSection(ctx, c))}
<section aria-labelledby="wallets"><h2 id="wallets">Wallets</h2>${walletsTable(ctx, o)}</section>
<section aria-labelledby="queues"><h2 id="queues">Queues</h2>${queueTable(ctx, o.queue)}</section>
<section aria-labelledby="hour"><h2 id="hour">The last hour</h2>${charts("hour", o.lastHour, "minute")}</section>
<section aria-labelledby="day"><h2 id="day">The last day</h2>${charts("day", o.lastDay, "half hour")}</section>`,
    { live: true },
  );
}
