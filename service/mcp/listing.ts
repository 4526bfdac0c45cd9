import type { RouteDefinition } from "../http/route";
import { displayPrice, type Prices } from "../payments/pricing";
import { routeTools } from "./catalogue";
import { sessionTools, type ToolListing } from "./session-tools";
import type { RouteTool } from "./tool";
import { selects, toolsetOf, TOOLSETS, type Selection } from "./toolsets";

/** A tool of the catalogue: how it is listed, whether it only reads, the route it calls (session tools have none). */
export interface CatalogueEntry {
  listing: ToolListing;
  readOnly: boolean;
  route?: RouteTool;
}

/** Every tool of the HTTP endpoint by name, session tools first: built once, on the first MCP request. */
export type Catalogue = ReadonlyMap<string, CatalogueEntry>;

export function buildCatalogue(routes: RouteDefinition<any, any>[]): Catalogue {
  const entries = new Map<string, CatalogueEntry>();
  for (const listing of sessionTools("http")) {
    if (!toolsetOf(listing.name)) throw new Error(`the MCP tool ${listing.name} is in no toolset`);
    entries.set(listing.name, { listing, readOnly: true });
  }
  for (const tool of routeTools(routes)) {
    const { name, description, inputSchema, outputSchema, annotations, _meta } = tool;
    const listing: ToolListing = {
      name,
      description,
      inputSchema,
      outputSchema,
      annotations,
      ...(_meta ? { _meta } : {}),
    };
    entries.set(name, { listing, readOnly: annotations.readOnlyHint, route: tool });
  }
  const missing = TOOLSETS.flatMap((set) => set.tools.filter((name) => !entries.has(name)));
  if (missing.length) throw new Error(`toolsets name tools that do not exist: ${missing.join(", ")}`);
  return entries;
}

/** The tools a selection lists, each paid tool's description ending with its price in force. */
export async function listTools(
  catalogue: Catalogue,
  selection: Selection,
  prices: Pick<Prices, "of">,
): Promise<ToolListing[]> {
  const chosen = [...catalogue.values()].filter((entry) => selects(selection, { name: entry.listing.name, ...entry }));
  return Promise.all(
    chosen.map(async ({ listing, route }) => {
      if (!route?.price) return listing;
      const amount = await prices.of(route.price.operation, route.price.tier);
      return { ...listing, description: `${listing.description}\n${priceLine(route, amount)}` };
    }),
  );
}

/** What a call without an API key pays, as a paid tool's description ends. */
export function priceLine(tool: Pick<RouteTool, "prepares">, amount: bigint): string {
  const price = `Without an API key: ${displayPrice(amount)} via x402`;
  return tool.prepares ? `${price} (half here, half at send_transactions; service-relayed: all at send).` : `${price}.`;
}
