import { Counter, Gauge, Histogram, Registry, Summary, collectDefaultMetrics } from "prom-client";
import { z, type ZodType } from "zod";
import { allRoutes } from "../../service/app";
import type { AccessRule } from "../../service/auth/access-rules";
import { ERROR_CODES, ERROR_CODE_LIST } from "../../service/error-codes";
import { EVENT_CATALOGUE, EVENT_TYPES, KEYLESS_TYPES, SUBSCRIBABLE_TYPES } from "../../service/events/types";
import type { EventType } from "../../service/events/types";
import { Metrics, type MetricsSources } from "../../service/metrics";
import { PUBLIC_METHODS } from "../../service/methods";
import { NETWORKS } from "../../service/chains/networks";
import { DEFAULT_PRICES } from "../../service/payments/pricing";
import type { Services } from "../../service/usecases/services";

/**
 * The reference pages under docs/reference/, written from the code that defines what they list: the error catalogue,
 * the metrics registry, the event catalogue and the route and method tables. `npm run docs:reference` writes them (with
 * docs/configuration.md and .env.example); test/service/reference-docs.test.ts fails when a committed page is stale.
 */

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");
const code = (text: string) => `\`${text}\``;
const generatedBy = (source: string) =>
  `<!-- Generated from ${source} by \`npm run docs:reference\`; ` +
  "test/service/reference-docs.test.ts fails when it is stale. -->";

function table(header: string[], rows: string[][]): string[] {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), `|${header.map(() => "---").join("|")}|`, ...rows.map((r) => line(r.map(cell)))];
}

// ---------------------------------------------------------------------------------------------------------------
// Error codes

export function errorCodesMarkdown(): string {
  return [
    "# Error codes",
    "",
    generatedBy("service/error-codes.ts"),
    "",
    "Every `error.code` a client can read, in the catalogue's order (by HTTP status). Every error answer has the",
    'shape `{ "error": { "code", "message", "param"?, "details"? }, "message" }`; `docs/wire-conventions.md`',
    "(Errors) explains the fields, and `/openapi.json` publishes the same table as the `ErrorCode` schema.",
    "",
    ...table(
      ["code", "status", "what it means"],
      ERROR_CODE_LIST.map((c) => [code(c), String(ERROR_CODES[c].status), ERROR_CODES[c].meaning]),
    ),
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------------------------
// Metrics

type PromMetric = { name: string; help: string; labelNames?: readonly string[] };

function metricType(metric: unknown): string {
  if (metric instanceof Counter) return "counter";
  if (metric instanceof Histogram) return "histogram";
  if (metric instanceof Summary) return "summary";
  if (metric instanceof Gauge) return "gauge";
  return "untyped";
}

/** The service's own metrics: what `new Metrics(...)` registers beyond prom-client's defaults (which vary by OS). */
function serviceMetrics(): { name: string; type: string; labels: readonly string[]; help: string }[] {
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults, prefix: "tak_" });
  const defaultNames = new Set(defaults.getMetricsAsArray().map((m) => (m as unknown as PromMetric).name));
  // Registering reads nothing from the sources: they are read when a scrape collects.
  const metrics = new Metrics({} as MetricsSources, "reference");
  return metrics.registry
    .getMetricsAsArray()
    .map((m) => m as unknown as PromMetric)
    .filter((m) => !defaultNames.has(m.name))
    .map((m) => ({ name: m.name, type: metricType(m), labels: m.labelNames ?? [], help: m.help }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export function metricsMarkdown(): string {
  return [
    "# Metrics",
    "",
    generatedBy("service/metrics.ts"),
    "",
    "What `GET /metrics` exposes, in the Prometheus text format. In production the endpoint needs `METRICS_TOKEN`",
    "(a bearer token) or is off. Route labels are route templates (`/documents/{sha256}`), never raw paths; a path",
    "no route matched counts as `(unmatched)`. Gauges read from the database or the chains are read when Prometheus",
    "scrapes.",
    "",
    ...table(
      ["metric", "type", "labels", "help"],
      serviceMetrics().map((m) => [code(m.name), m.type, m.labels.map(code).join(", ") || "—", m.help]),
    ),
    "",
    "Beside these, prom-client's default process and Node.js metrics, prefixed `tak_`",
    "(`tak_process_cpu_seconds_total`, `tak_nodejs_heap_size_used_bytes`, `tak_nodejs_eventloop_lag_seconds`, …;",
    "which ones depends on the platform).",
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------------------------
// Events

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  description?: string;
  $ref?: string;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

const PATTERN_NAMES: Record<string, string> = {
  "^0x[a-fA-F0-9]{40}$": "address",
  "^0x[0-9a-fA-F]{64}$": "32-byte hex",
  "^[0-9]+$": "integer as text",
  "^0x[0-9a-fA-F]*$": "hex",
};

/** A JSON Schema in a few words: the type, an enum's values, a shared object's name. */
function typeOf(schema: JsonSchema): string {
  if (schema.$ref) return schema.$ref.replace("#/$defs/", "");
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map(typeOf).join(" or ");
  const shown = (value: unknown) => code(typeof value === "string" ? value : JSON.stringify(value));
  if (schema.enum) return schema.enum.map(shown).join(", ");
  if (schema.const !== undefined) return shown(schema.const);
  if (Array.isArray(schema.type)) return schema.type.join(" or ");
  if (schema.type === "array") return `array of ${schema.items ? typeOf(schema.items) : "values"}`;
  if (schema.type === "string" && schema.pattern) return PATTERN_NAMES[schema.pattern] ?? "string";
  return schema.type ?? "any";
}

function fieldRows(schema: JsonSchema): string[][] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, property]) => [
    code(name),
    typeOf(property),
    required.has(name) ? "yes" : "no",
    property.description ?? "",
  ]);
}

function jsonSchemaOf(data: ZodType): { root: JsonSchema; defs: Record<string, JsonSchema> } {
  type WithDefs = JsonSchema & { $defs?: Record<string, JsonSchema> };
  const json = z.toJSONSchema(data, { io: "output", unrepresentable: "any" }) as WithDefs;
  const defs = json.$defs ?? {};
  const root = json.$ref ? defs[json.$ref.replace("#/$defs/", "")] : json;
  return { root, defs };
}

export function eventsMarkdown(): string {
  const shared = new Map<string, JsonSchema>();
  const sections = EVENT_TYPES.flatMap((type: EventType) => {
    const { root, defs } = jsonSchemaOf(EVENT_CATALOGUE[type].data);
    for (const [name, schema] of Object.entries(defs)) if (schema !== root) shared.set(name, schema);
    const who = KEYLESS_TYPES.includes(type)
      ? "Delivered to the key's subscribers, and for a batch prepared without a key to its txId's stream."
      : (SUBSCRIBABLE_TYPES as readonly string[]).includes(type)
        ? "Delivered to the key's subscribers."
        : "Sent to one endpoint on request; never on the stream, and no subscription asks for it.";
    const fields = table(["field of data", "type", "always", "what it holds"], fieldRows(root));
    return [`## ${code(type)}`, "", `${EVENT_CATALOGUE[type].summary}. ${who}`, "", ...fields, ""];
  });
  const sharedSections = [...shared.keys()].sort().flatMap((name) => {
    const fields = table(["field", "type", "always", "what it holds"], fieldRows(shared.get(name)!));
    return [`### ${name}`, "", ...fields, ""];
  });
  return [
    "# Events",
    "",
    generatedBy("service/events/types.ts"),
    "",
    "Every event type and what its `data` holds. Each event reaches a webhook as its body and the stream",
    "(`GET /events`) as one `data:` line, in one envelope: `id` (its position, decimal; the stream's id and",
    "`Last-Event-ID`), `type`, `timestamp` (ISO 8601, when the change was committed), `txId`, `chainId` and `hash`",
    "(each null where none applies) and `data`. `docs/events.md` is the guide: subscribing, signatures, retries,",
    "ordering.",
    "",
    ...sections,
    "## Shared objects",
    "",
    "Objects the payloads above name by type.",
    "",
    ...sharedSections,
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------------------------
// Routes and methods

/** Who may call, in a few words. */
function accessOf(rule: AccessRule): string {
  if (rule.name === "operatorSession") return "operator session";
  if (rule.key === "none") return "public";
  if (rule.key === "required") return "API key";
  if (rule.price) return `API key or x402 (${rule.price})`;
  return "API key optional";
}

const tierPrices = (tier: keyof (typeof DEFAULT_PRICES)["sandbox"]) =>
  `${DEFAULT_PRICES.sandbox[tier]} / ${DEFAULT_PRICES.production[tier]}`;

export function methodsMarkdown(): string {
  const routes = allRoutes({} as Services).filter((r) => !r.hidden);
  const networkName = (chainId: number) => NETWORKS.find((n) => n.chainId === chainId)?.name ?? String(chainId);
  const tiers = ["write", "agentGetter", "ramsRead", "faucet"] as const;
  return [
    "# Routes and methods",
    "",
    generatedBy("the routes (`allRoutes` in service/app.ts) and the method table (service/methods/index.ts)"),
    "",
    "Every route `/openapi.json` documents, and every method `POST /prepare-transactions` takes. `/openapi.json` (and",
    "`/docs`) has each one's body, query and answers; this page is the overview.",
    "",
    "**Access.** *public*: no credential. *API key*: `x-api-key` required. *API key optional*: a key scopes the",
    "answer when sent. *API key or x402 (tier)*: a key, or without one an x402 payment at the tier's price.",
    "*operator session*: the operator console's cookie. The rules are `ACCESS` in `service/auth/access-rules.ts`.",
    "",
    "**Default prices** in USDC, sandbox / production; an operator may set any operation's price",
    "(`npm run admin -- prices set`).",
    "",
    ...table(
      ["tier", "price"],
      tiers.map((t) => [t, tierPrices(t)]),
    ),
    "",
    "A write is priced once: client-signed and client-broadcast batches pay half at prepare and half at send;",
    "service-relayed ones prepare free and pay it all at send.",
    "",
    "## Routes",
    "",
    ...table(
      ["HTTP", "path", "access", "what it does"],
      routes.map((r) => [r.method.toUpperCase(), code(r.path), accessOf(r.access), r.summary]),
    ),
    "",
    "## Prepare methods",
    "",
    "Named in `method` of `POST /prepare-transactions` (or in the path: `/prepare-transactions/<method>`).",
    "*Relayed*: the service's relayer may sign and send it (`executionMode: service-relayed`). *Facade*: the x402",
    "path that prepares it in one call.",
    "",
    ...table(
      ["method", "area", "access", "relayed", "facade", "chains", "what it does"],
      PUBLIC_METHODS.map((m) => [
        code(m.name) + (m.aliases?.length ? ` (alias ${m.aliases.map(code).join(", ")})` : ""),
        m.area,
        accessOf(m.access),
        m.relayable ? "yes" : "no",
        m.facadePath ? code(m.facadePath) : "—",
        m.chains ? m.chains.map(networkName).join(", ") : "any served",
        m.summary,
      ]),
    ),
    "",
  ].join("\n");
}

/** Each page, by its path from the repository root. */
export function referencePages(): Record<string, string> {
  return {
    "docs/reference/error-codes.md": errorCodesMarkdown(),
    "docs/reference/metrics.md": metricsMarkdown(),
    "docs/reference/events.md": eventsMarkdown(),
    "docs/reference/methods.md": methodsMarkdown(),
  };
}
