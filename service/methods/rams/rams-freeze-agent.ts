import { freezeMethod } from "./enforcer";

/** An enforcer freezes an agent: every mandate of the agent fails the execution checks until it is unfrozen. */
export const ramsFreezeAgent = freezeMethod("ramsFreezeAgent", true);
