import type { BatchRow } from "../../store/batch-search";
import type { ListPage } from "../paging";
import { BATCH_STATUSES, METHOD_NAMES } from "../queries";
import { filterForm, filteredBy, kept, type FilterError } from "./filters";
import { badge, hashOf, html, pager, table, time } from "./html";
import { page, type PageContext } from "./layout";

/** A served chain, as the filters offer it. */
export interface ChainChoice {
  chainId: number;
  name: string;
}

const FILTERS = ["q", "chain", "method", "status", "stuck", "from", "to"];

/** The transactions page: the filters (in the URL) and a page of batches, newest first, paged both ways. */
export function transactionsPage(
  ctx: PageContext,
  chains: ChainChoice[],
  values: Record<string, string | undefined>,
  list: ListPage<BatchRow> | undefined,
  error?: FilterError,
): string {
  const { base } = ctx;
  const form = filterForm({
    action: `${base}/console/transactions`,
    label: "Filter transactions",
    values,
    error,
    fields: [
      { name: "q", label: "txId, hash, address or API key id", kind: "text" },
      {
        name: "chain",
        label: "Chain",
        kind: "select",
        options: [["", "any"], ...chains.map((c): [string, string] => [String(c.chainId), `${c.name} (${c.chainId})`])],
      },
      { name: "method", label: "Method", kind: "select", options: ["", ...METHOD_NAMES] },
      { name: "status", label: "Status", kind: "select", options: ["", ...BATCH_STATUSES] },
      { name: "from", label: "Prepared from", kind: "time" },
      { name: "to", label: "to", kind: "time" },
      { name: "stuck", label: "Stuck only", kind: "checkbox" },
    ],
  });
  const rows = (list?.items ?? []).map((b) => {
    const explorer = ctx.explorers?.[b.chainId];
    return [
      hashOf(b.txId, { href: `${base}/console/transactions/${b.txId}` }),
      time(b.createdAt),
      b.method,
      b.executionMode,
      badge(b.status),
      chains.find((c) => c.chainId === b.chainId)?.name ?? b.chainId,
      hashOf(b.signer, { explorer, kind: "address" }),
      b.apiKeyId ? html`<code>${b.apiKeyId}</code>` : html`<span class="muted">x402</span>`,
      b.hashes.map((h) => hashOf(h, { explorer, kind: "tx" })),
    ];
  });
  const results = list
    ? html`${table("Batches, newest first", ["txId", "Prepared", "Method", "Execution", "Status", "Chain", "Signer", "Key", "Hashes"], rows, "No batch matches.")}
${pager(`${base}/console/transactions`, kept(values, FILTERS), list)}`
    : html`<p class="muted">Nothing is listed until the filter is corrected.</p>`;
  return page(
    ctx,
    "transactions",
    "Transactions",
    html`<section>${form}</section>
<section aria-labelledby="found"><h2 id="found">Batches${filteredBy(values, { q: "matching", chain: "on chain", method: "method", status: "status", stuck: "stuck", from: "from", to: "to" })}</h2>
${results}</section>`,
  );
}
