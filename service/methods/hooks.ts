import type { BatchHooks } from "../engine/runner-ports";
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
    return {
      ...(method.bindRelayed
        ? { bindRelayed: (batch, index, payer) => method.bindRelayed!(services, batch, index, payer) }
        : {}),
      ...(method.onConfirmed
        ? { onConfirmed: (q, confirmed) => method.onConfirmed!(q, { ...confirmed, services }) }
        : {}),
    };
  };
}
