import type { BatchHooks } from "../engine/runner";
import { findMethod } from "./index";
import type { MethodServices } from "./types";

/**
 * The engine's view of the methods: for a batch's method name, its hooks with what methods may use bound in, so the
 * runner needs neither the methods nor the services (the composition root hands this to it).
 */
export function methodHooks(services: MethodServices): (name: string) => BatchHooks | undefined {
  return (name) => {
    const method = findMethod(name);
    if (!method) return undefined;
    const { bindRelayed, onConfirmed } = method;
    return {
      ...(bindRelayed ? { bindRelayed: (batch, index, payer) => bindRelayed(services, batch, index, payer) } : {}),
      ...(onConfirmed ? { onConfirmed: (q, confirmed) => onConfirmed(q, { ...confirmed, services }) } : {}),
    };
  };
}
