import { z } from "zod";
import { chainIdHex } from "../chains/networks";
import { unavailable } from "../errors";
import { chainIdInput } from "../wire/fields";
import { ACCESS } from "../auth/access-rules";
import { responseFields } from "../wire/responses";
import { defineRoute } from "../http/route";
import type { Services } from "../usecases/services";
import { CHAIN_CHECK_MS, DATABASE_CHECK_MS, ReadinessCheck } from "../lifecycle/readiness";

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
    USDTAddress: address
      .nullable()
      .meta({ description: "The network's USDT (ours on local chains); null where Tether issues none" }),
    USDCAddress: address
      .nullable()
      .meta({ description: "The network's Circle USDC (ours on local chains); null where Circle issues none" }),
    agentTokenFactoryAddress: optionalAddress("Agent-token factory (where the network serves agents)"),
    identityRegistryAddress: optionalAddress("ERC-8004 identity registry"),
    reputationRegistryAddress: optionalAddress("ERC-8004 reputation registry"),
    agentMandateAddress: optionalAddress("ERC-8226 AgentMandate registry (RAMS)"),
    complianceProviderAddress: optionalAddress("ERC-8226 ComplianceProvider (RAMS)"),
  })
  .meta({ id: "NetworkInfo" });

const Health = z
  .strictObject({
    status: z
      .enum(["ok", "starting"])
      .meta({ description: '"starting" (every other route answers 503 UNAVAILABLE) until the service is composed' }),
    environment: z.string(),
    uptimeSeconds: z.number().meta({ description: "Seconds since this process started serving" }),
  })
  .meta({ id: "Health" });

const Readiness = z
  .strictObject({
    status: z.literal("ready"),
    environment: z.string(),
    database: z.strictObject({ ok: z.boolean(), kind: z.enum(["pglite", "postgres"]), error: z.string().optional() }),
    chains: z.array(
      z.strictObject({ chainId: int, ok: z.boolean(), blockNumber: int.optional(), error: z.string().optional() }),
    ),
  })
  .meta({ id: "Readiness" });

/**
 * GET <path>: one network's contract addresses and explorer (two paths answer it; the second is the same MCP tool as
 * the first, get_network_info).
 */
function networkInfoRoute(services: Services, path: string, tool: false | undefined = undefined) {
  return defineRoute({
    method: "get",
    path,
    ...(tool === false ? { tool } : {}),
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
}

/** Liveness, readiness and network information. */
export function metaRoutes(services: Services) {
  const startedAt = Date.now();
  const readiness = new ReadinessCheck(services);
  return [
    defineRoute({
      method: "get",
      path: "/health",
      summary: "Liveness: 200 while the process serves requests",
      description:
        'Cheap enough to poll often: it asks neither the database nor a chain, so it answers while a chain or the database is slow or down. Whether those answer is GET /ready. It answers from the moment the port opens: status "starting" while the service opens its database and checks its chains (every other route answers 503 UNAVAILABLE with Retry-After then), "ok" after.',
      tags: ["meta"],
      access: ACCESS.public,
      response: Health,
      handler: async (): Promise<z.infer<typeof Health>> => ({
        status: "ok",
        environment: services.config.ENVIRONMENT,
        uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
      }),
    }),
    defineRoute({
      method: "get",
      path: "/ready",
      summary: "Readiness: 200 once the database and every configured chain answer",
      description: `The database must answer within ${DATABASE_CHECK_MS} ms and each chain's RPC within ${CHAIN_CHECK_MS} ms; otherwise 503 with the same checks in error.details. Probes arriving together share one check.`,
      tags: ["meta"],
      access: ACCESS.public,
      response: Readiness,
      handler: async (): Promise<z.infer<typeof Readiness>> => {
        const { ready, database, chains } = await readiness.check();
        if (!ready) throw unavailable("Service is not ready", { database, chains });
        return { status: "ready", environment: services.config.ENVIRONMENT, database, chains };
      },
    }),
    networkInfoRoute(services, "/get-network-info"),
    networkInfoRoute(services, "/get-api-network-info", false),
  ];
}
