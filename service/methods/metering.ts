import { METHODS } from "./index";

/** Spends a credit of its own outside /prepare-transactions: PATCH /patch-token-docs, per accepted call. */
const METERED_ENDPOINTS = ["patch-token-docs"];

/**
 * Every balance a plan grants credits of, one per metered send or call: the prepare methods that declare `metered`
 * and the metered endpoints. Derived, never written out: a method declares its metering in its own module.
 */
export const METERED_METHODS: readonly string[] = [
  ...METHODS.filter((method) => method.metered).map((method) => method.name),
  ...METERED_ENDPOINTS,
];
