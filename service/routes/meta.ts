import { z } from "zod";
import { chainIdHex } from "../chains/networks";
import { unavailable } from "../errors";
import { chainIdInput } from "../http/fields";
import { defineRoute } from "../http/route";
import type { Services } from "../services";

const networkInfoQuery = z.object({ chainId: chainIdInput });

/** Health, network information and the generated OpenAPI document. */
export function metaRoutes(services: Services) {
  const networkInfo = (path: string) =>
    defineRoute({
      method: "get",
      path,
      summary: "Contract addresses and explorer of one network (public)",
      tags: ["network"],
      auth: "none",
      query: networkInfoQuery,
      handler: async ({ query }) => {
        const chain = services.chains.resolve(query.chainId);
        const { contracts } = chain.deployment;
        return {
          chainId: chainIdHex(chain.chainId),
          chainName: chain.network.name,
          currencyName: chain.deployment.currencyName,
          blockExplorerUrl: chain.deployment.blockExplorerUrl,
          factoryAddress: contracts.TokenFactory,
          BKNAddress: contracts.BKN,
          USDTAddress: contracts.USDT,
          USDCAddress: contracts.USDC,
        };
      },
    });

  return [
    defineRoute({
      method: "get",
      path: "/health",
      summary: "200 once the database and every configured chain answer",
      tags: ["meta"],
      auth: "none",
      handler: async () => {
        const checks: Record<string, unknown> = {};
        let healthy = true;
        try {
          await services.db.query("SELECT 1");
          checks.database = { ok: true, kind: services.db.kind };
        } catch (error) {
          healthy = false;
          checks.database = { ok: false, error: (error as Error).message };
        }
        const chains = await Promise.all(
          services.chains.list().map(async (chain) => {
            try {
              const blockNumber = await withTimeout(chain.provider.getBlockNumber(), 5000);
              return { chainId: chain.chainId, ok: true, blockNumber };
            } catch (error) {
              healthy = false;
              return { chainId: chain.chainId, ok: false, error: (error as Error).message };
            }
          }),
        );
        checks.chains = chains;
        if (!healthy) throw unavailable("Service is not healthy", checks);
        return { status: "ok", environment: services.config.ENVIRONMENT, ...checks };
      },
    }),
    networkInfo("/get-network-info"),
    networkInfo("/get-api-network-info"),
  ];
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e) => (clearTimeout(timer), reject(e)),
    );
  });
}
