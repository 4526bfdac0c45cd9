import type { PriceTier } from "../auth/access-rules";

/**
 * The reads a caller without a key pays per call (GET routes whose rule takes an optional key and has a price), as
 * data: the admin tool and the console name them as priced operations without building the routes, which need a
 * composed service. test/service/wiring.test.ts holds this list to the routes (routes/agents.ts, routes/rams.ts).
 */
export const PAID_READS: { path: string; tier: PriceTier }[] = [
  { path: "/get-agents", tier: "agentGetter" },
  { path: "/get-agent-info", tier: "agentGetter" },
  { path: "/get-agent-transactions", tier: "agentGetter" },
  { path: "/rams/mandate", tier: "ramsRead" },
  { path: "/rams/compliance-status", tier: "ramsRead" },
  { path: "/rams/status", tier: "ramsRead" },
  { path: "/rams/can-execute", tier: "ramsRead" },
  { path: "/rams/executor-action", tier: "ramsRead" },
  { path: "/rams/typed-data/grant-mandate", tier: "ramsRead" },
  { path: "/rams/typed-data/revoke-mandate", tier: "ramsRead" },
  { path: "/rams/typed-data/extend-mandate", tier: "ramsRead" },
  { path: "/rams/typed-data/set-operator", tier: "ramsRead" },
];
