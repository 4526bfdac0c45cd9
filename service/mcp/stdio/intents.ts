import { AGENT_INTENTS } from "./intents-agents";
import { OFFERING_INTENTS } from "./intents-offerings";
import { TOKEN_INTENTS } from "./intents-tokens";
import { TOKEN_LIFECYCLE_INTENTS } from "./intents-token-lifecycle";
import type { IntentTable } from "./intent";

/** The intent of every prepare method (test/service/mcp-stdio-checks.test.ts holds it to PUBLIC_METHODS). */
export const INTENTS: IntentTable = {
  ...TOKEN_INTENTS,
  ...TOKEN_LIFECYCLE_INTENTS,
  ...OFFERING_INTENTS,
  ...AGENT_INTENTS,
};
