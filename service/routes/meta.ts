import { z } from "zod";
import { chainIdHex } from "../chains/networks";
import { unavailable } from "../errors";
import { chainIdInput } from "../http/fields";
import { ACCESS } from "../access/rules";
import { responseFields } from "../http/responses";
import { defineRoute } from "../http/route";
import type { Services } from "../services";

const networkInfoQuery = z.object({ chainId: chainIdInput });

const { address, int } = responseFields;
const optionalAddress = (description: string) => address.optional().meta({ description });

export const NetworkInfo = z
  .strictObject({
    chainId: z.string().meta({ description: "0x hex", example: "0xaa36a7" }),
    chainName: z.string(),
    currencyName: z.string(),
    blockExplorerUrl: z.string(),
    factoryAddress: address.meta({ description: "TokenFactory (security tokens and their escrows)" }),
    BKNAddress: address,
    USDTAddress: address.nullable().meta({ description: "The network's USDT (ours on local chains); null where Tether issues none" }),
    USDCAddress: address.nullable().meta({ description: "The network's Circle USDC (ours on local chains); null where Circle issues none" }),
    agentTokenFactoryAddress: optionalAddress("Agent-token factory (where the network serves agents)"),
    identityRegistryAddress: optionalAddress("ERC-8004 identity registry"),
    reputationRegistryAddress: optionalAddress("ERC-8004 reputation registry"),
    agentMandateAddress: optionalAddress("ERC-8226 AgentMandate registry (RAMS)"),
    complianceProviderAddress: optionalAddress("ERC-8226 ComplianceProvider (RAMS)"),
  })
  .meta({ id: "NetworkInfo" });

const Health = z.strictObject({
  status: z.literal("ok"),
  environment: z.string(),
  database: z.strictObject({ ok: z.boolean(), kind: z.enum(["pglite", "postgres"]), error: z.string().optional() }),
  chains: z.array(z.strictObject({ chainId: int, ok: z.boolean(), blockNumber: int.optional(), error: z.string().optional() })),
});

/** Health, network information and the generated OpenAPI document. */
export function metaRoutes(services: Services) {
  const networkInfo = (path: string) =>
    defineRoute({
      method: "get",
      path,
      summary: "Contract addresses and explorer of one network (public)",
      tags: ["network"],
      access: ACCESS.public,
      query: networkInfoQuery,
      response: NetworkInfo,
      handler: async ({ query }): Promise<z.infer<typeof NetworkInfo>> => {
        const chain = services.chains.resolve(query.chainId);
        const { contracts } = chain.deployment;
        return {
          chainId: chainIdHex(chain.chainId),
          chainName: chain.network.name,
          currencyName: chain.deployment.currencyName,
          blockExplorerUrl: chain.deployment.blockExplorerUrl,
          factoryAddress: contracts.TokenFactory,
          BKNAddress: contracts.BKN,
          USDTAddress: contracts.USDT ?? null,
          USDCAddress: contracts.USDC ?? null,
          agentTokenFactoryAddress: contracts.AgentTokenFactory,
          identityRegistryAddress: contracts.IdentityRegistry,
          reputationRegistryAddress: contracts.ReputationRegistry,
          agentMandateAddress: contracts.AgentMandate,
          complianceProviderAddress: contracts.ComplianceProvider,
        };
      },
    });

  return [
    defineRoute({
      method: "get",
      path: "/health",
      summary: "200 once the database and every configured chain answer",
      description: "Otherwise 503 with the same checks in error.details.",
      tags: ["meta"],
      access: ACCESS.public,
      response: Health,
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
