import { shareOf } from "../auth/access-rules";
import type { RouteDefinition } from "../http/route";
import { PUBLIC_METHODS } from "../methods";
import type { Services } from "./services";

/**
 * What GET /.well-known/x402 lists: every paid resource under `base` with its price and payment requirements — the
 * prepare and send of each priced method, the paid GETs (`paidReads`, the app's route list), the sandbox faucet.
 */
export async function x402Discovery(services: Services, base: string, paidReads: () => RouteDefinition<any, any>[]) {
  const x402 = services.x402;
  if (!x402) return { x402Version: 2, enabled: false, resources: [] };
  const resources = [];
  for (const method of PUBLIC_METHODS.filter((m) => m.access.price)) {
    const price = await services.prices.of(method.name, method.access.price!);
    const entry = (
      path: string,
      routeKey: string,
      mode: "client-signed" | "service-relayed",
      step: "prepare" | "send",
    ) => ({
      resource: `${base}${path}`,
      method: "POST",
      operation: method.name,
      executionMode: mode,
      step,
      accepts: [
        x402.requirements({
          subject: "",
          routeKey,
          amount: shareOf(price, mode, step),
          resourceUrl: `${base}${path}`,
          description: method.summary,
        }),
      ],
    });
    resources.push(
      entry("/prepare-transactions", "POST /prepare-transactions", "client-signed", "prepare"),
      entry("/send-transactions", "POST /send-transactions", "client-signed", "send"),
      ...(method.relayable ? [entry("/send-transactions", "POST /send-transactions", "service-relayed", "send")] : []),
    );
  }
  // Paid reads (agent getters, RAMS reads): one call, one payment.
  for (const route of paidReads()) {
    const amount = await services.prices.of(route.path.replace(/^\//, ""), route.access.price!);
    const url = `${base}${route.path}`;
    resources.push({
      resource: url,
      method: "GET",
      operation: route.path.replace(/^\//, ""),
      executionMode: "read",
      step: "call",
      accepts: [
        x402.requirements({
          subject: "",
          routeKey: `GET ${route.path}`,
          amount,
          resourceUrl: url,
          description: route.summary,
        }),
      ],
    });
  }
  if (services.config.ENVIRONMENT === "sandbox") {
    const amount = shareOf(await services.prices.of("faucet", "faucet"), "service-relayed", "send");
    resources.push({
      resource: `${base}/faucet/bkn`,
      method: "POST",
      operation: "faucet",
      executionMode: "service-relayed",
      step: "send",
      accepts: [
        x402.requirements({
          subject: "",
          routeKey: "POST /faucet/bkn",
          amount,
          resourceUrl: `${base}/faucet/bkn`,
          description: "BKN faucet",
        }),
      ],
    });
  }
  return { x402Version: 2, enabled: true, network: x402.network, asset: x402.asset, payTo: x402.payTo, resources };
}
