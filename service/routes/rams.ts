import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import { badRequest } from "../errors";
import { address, chainIdInput } from "../wire/fields";
import { ErrorBody } from "../wire/responses";
import { defineRoute } from "../http/route";
import { action, bytes32, deadline, rawAmount, selector } from "../methods/rams/fields";
import { extendFields } from "../methods/rams/rams-extend-mandate";
import { grantFields } from "../methods/rams/rams-grant-mandate";
import { pairFields } from "../methods/rams/rams-revoke-mandate";
import { operatorFields } from "../methods/rams/rams-set-operator";
import { SIGNED_OPERATIONS, type SignedOperation } from "../domains/rams/typed-data";
import {
  CanExecuteRead,
  ComplianceRead,
  ExecutorActionRead,
  MandateRead,
  StatusRead,
  TypedDataRead,
  actionOfQuery,
  canExecuteRead,
  complianceRead,
  executorActionRead,
  mandateRead,
  planTypedData,
  ramsChain,
  statusRead,
  typedDataRead,
  type TypedDataQuery,
} from "../reads/rams";
import type { Services } from "../usecases/services";
import { TRANSFER_FROM_SELECTOR } from "../domains/rams/executors";
import { complianceRef, registryRef } from "../domains/rams/on-chain";

const chainId = chainIdInput.meta({ description: "11155111 (decimal, 0xaa36a7 or aa36a7): RAMS runs on Sepolia only" });
const registryOverride = {
  agentMandateAddress: address.optional().meta({ description: "Overrides the chain's AgentMandate registry" }),
};
const signedQuery = {
  chainId,
  ...registryOverride,
  deadline: deadline
    .optional()
    .meta({ type: "integer", description: "Unix seconds; default now + 1 hour (chain time), at most 30 days" }),
};

const typedDataQueries: Record<SignedOperation, z.ZodObject> = {
  "grant-mandate": z.object({ ...signedQuery, ...grantFields }),
  "revoke-mandate": z.object({ ...signedQuery, ...pairFields }),
  "extend-mandate": z.object({ ...signedQuery, ...extendFields }),
  "set-operator": z.object({ ...signedQuery, ...operatorFields }),
};

/** GET /rams/mandate */
function ramsMandateRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/rams/mandate",
    summary:
      "RAMS: a mandate, its derived status (none, revoked, pending, expired, active), the agent's freeze and the principal's EIP-712 nonce",
    tags: ["rams"],
    access: ACCESS.ramsRead,
    idempotent: true,
    response: MandateRead,
    query: z.object({ chainId, agent: address, principal: address, ...registryOverride }),
    handler: async ({ query, payment }) => {
      const chain = ramsChain(services, query.chainId);
      const registry = registryRef(chain, query.agentMandateAddress);
      await payment.take({ operation: "ramsMandate", chainId: chain.chainId, description: "RAMS mandate" });
      return { data: await mandateRead(chain, registry, query.agent, query.principal) };
    },
  });
}

/** GET /rams/compliance-status */
function ramsComplianceStatusRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/rams/compliance-status",
    summary:
      "RAMS: a principal's eligibility at the ComplianceProvider under an identityRef (eligible, reason, expiry)",
    tags: ["rams"],
    access: ACCESS.ramsRead,
    idempotent: true,
    response: ComplianceRead,
    query: z.object({
      chainId,
      principal: address,
      identityRef: bytes32,
      complianceProviderAddress: address.optional(),
    }),
    handler: async ({ query, payment }) => {
      const chain = ramsChain(services, query.chainId);
      const provider = complianceRef(chain, query.complianceProviderAddress);
      await payment.take({
        operation: "ramsComplianceStatus",
        chainId: chain.chainId,
        description: "RAMS compliance status",
      });
      return { data: await complianceRead(chain, provider, query.principal, query.identityRef) };
    },
  });
}

/** GET /rams/status */
function ramsStatusRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/rams/status",
    summary: "RAMS: an agent's freeze, the principal's EIP-712 nonce and (with operator) that operator's approval",
    tags: ["rams"],
    access: ACCESS.ramsRead,
    idempotent: true,
    response: StatusRead,
    query: z.object({ chainId, agent: address, principal: address, operator: address.optional(), ...registryOverride }),
    handler: async ({ query, payment }) => {
      const chain = ramsChain(services, query.chainId);
      const registry = registryRef(chain, query.agentMandateAddress);
      await payment.take({
        operation: "ramsStatus",
        chainId: chain.chainId,
        description: "RAMS agent/principal status",
      });
      return { data: await statusRead(chain, registry, query.agent, query.principal, query.operator) };
    },
  });
}

/** GET /rams/can-execute */
function ramsCanExecuteRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/rams/can-execute",
    summary:
      "RAMS: the registry's canExecute for an agent, asset, action and amount, each check's result and the first failing one",
    description:
      "action (bytes32) or selector (4 bytes); default ERC-20 transferFrom. amount in raw base units; default 0.",
    tags: ["rams"],
    access: ACCESS.ramsRead,
    idempotent: true,
    response: CanExecuteRead,
    query: z.object({
      chainId,
      agent: address,
      principal: address,
      asset: address,
      amount: rawAmount.optional(),
      action: action.optional(),
      selector: selector.optional(),
      ...registryOverride,
    }),
    handler: async ({ query, payment }) => {
      const chain = ramsChain(services, query.chainId);
      const registry = registryRef(chain, query.agentMandateAddress);
      const act = actionOfQuery(query, TRANSFER_FROM_SELECTOR + "0".repeat(56));
      await payment.take({ operation: "ramsCanExecute", chainId: chain.chainId, description: "RAMS can-execute" });
      return {
        data: await canExecuteRead(chain, registry, {
          agent: query.agent,
          principal: query.principal,
          asset: query.asset,
          action: act,
          amount: BigInt(query.amount ?? "0"),
        }),
      };
    },
  });
}

/** GET /rams/executor-action */
function ramsExecutorActionRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/rams/executor-action",
    summary:
      "RAMS: how an AgentExecutor gates a selector (ActionSpec) plus the executor's principal, owner and registry",
    description: "executorAddress, or principal for the executor the operator set up for it.",
    tags: ["rams"],
    access: ACCESS.ramsRead,
    idempotent: true,
    response: ExecutorActionRead,
    query: z.object({
      chainId,
      selector: selector.optional(),
      action: action.optional(),
      executorAddress: address.optional(),
      principal: address.optional(),
    }),
    handler: async ({ query, payment }) => {
      const chain = ramsChain(services, query.chainId);
      const act = actionOfQuery(query);
      if (!query.executorAddress && !query.principal)
        throw badRequest("executorAddress is required (or principal, for its default executor)", {
          field: "executorAddress",
        });
      await payment.take({
        operation: "ramsExecutorAction",
        chainId: chain.chainId,
        description: "RAMS executor action",
      });
      return {
        data: await executorActionRead(services, chain, {
          action: act,
          executorAddress: query.executorAddress,
          principal: query.principal,
        }),
      };
    },
  });
}

/** GET /rams/typed-data/{operation} */
function ramsTypedDataByOperationRoute() {
  return defineRoute({
    method: "get",
    path: "/rams/typed-data/{operation}",
    summary: "RAMS typed data for an unknown operation",
    tags: ["rams"],
    access: ACCESS.public,
    response: ErrorBody,
    hidden: true,
    handler: async ({ req }) => {
      throw badRequest(
        `operation must be one of ${Object.keys(SIGNED_OPERATIONS).join(", ")}, not ${String(req.params.operation)}`,
        { field: "operation" },
      );
    },
  });
}

/**
 * RAMS reads and typed data: free with an API key, otherwise paid per call through x402 at the
 * RAMS read tier. Each handler validates its query, takes the payment, then reads the chain; bodies are `{ data }`.
 */
export function ramsRoutes(services: Services) {
  return [
    ramsMandateRoute(services),
    ramsComplianceStatusRoute(services),
    ramsStatusRoute(services),
    ramsCanExecuteRoute(services),
    ramsExecutorActionRoute(services),
    ...(Object.keys(SIGNED_OPERATIONS) as SignedOperation[]).map((operation) =>
      defineRoute({
        method: "get",
        path: `/rams/typed-data/${operation}`,
        summary: `RAMS: the principal's EIP-712 ${SIGNED_OPERATIONS[operation]} payload over its current nonce, signable as is (types without EIP712Domain)`,
        tags: ["rams"],
        access: ACCESS.ramsRead,
        idempotent: true,
        response: TypedDataRead,
        query: typedDataQueries[operation],
        handler: async ({ query, payment }) => {
          const q = query as TypedDataQuery & { chainId: string | number };
          const chain = ramsChain(services, q.chainId);
          const plan = await planTypedData(chain, operation, q);
          await payment.take({
            operation: "ramsTypedData",
            chainId: chain.chainId,
            description: `RAMS typed data (${operation})`,
          });
          return { data: await typedDataRead(chain, plan) };
        },
      }),
    ),
    ramsTypedDataByOperationRoute(),
  ];
}
