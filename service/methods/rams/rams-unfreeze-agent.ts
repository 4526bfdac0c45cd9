import { freezeMethod } from "./enforcer";

/** An enforcer unfreezes an agent: its mandates execute again, as their own state allows. */
export const ramsUnfreezeAgent = freezeMethod("ramsUnfreezeAgent", false);
