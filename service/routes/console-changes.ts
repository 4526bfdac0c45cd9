import { z } from "zod";
import { createKey, keysCommand, keysView, type PricedOperation } from "../console/keys";
import { decideKyc, kycQueue } from "../console/kyc";
import { DeliveriesQuery, EndpointsQuery } from "../console/queries";
import {
  disableEndpoint,
  enableEndpoint,
  endpointDetail,
  listEndpoints,
  replayFailed,
  replayOne,
} from "../console/webhooks";
import { KYC_STATUSES } from "../store/kyc";
import type { Services } from "../usecases/services";
import {
  ConsoleCommandResult,
  ConsoleDelivery,
  ConsoleEndpoint,
  ConsoleEndpointDetail,
  ConsoleEndpointList,
  ConsoleInvestor,
  ConsoleInvestorList,
  ConsoleKeys,
  ConsoleReplayed,
  CreateKeyBody,
  CreatedKey,
  CreditsBody,
  DisableBody,
  PriceBody,
  RejectBody,
  ReplayBody,
  ReplayRangeBody,
  SignerBody,
} from "../wire/console-changes";
import { consoleRoute } from "./console-route";

/** What the console's key and price endpoints check against: the operations with a price (app.ts). */
export interface ConsoleOptions {
  /** Read when needed (the list is made from every route, this one included). */
  pricedOperations: () => PricedOperation[];
}

const cursor = z.string().optional().meta({ description: "The `next` of the previous page" });
const param = (req: { params: Record<string, unknown> }, name: string) => String(req.params[name]);

/** Webhook endpoints and deliveries of every tenant; replays (one, or the failed ones of a range) and disabling. */
function webhookRoutes(services: Services) {
  return [
    consoleRoute(services, {
      method: "get",
      path: "/console/api/webhooks",
      operationId: "consoleWebhooks",
      summary:
        "Every tenant's webhook endpoints with their state and the deliveries each is owed, failed and delivered, paged both ways with counts",
      role: "viewer",
      query: EndpointsQuery,
      response: ConsoleEndpointList,
      handler: async ({ query }) => listEndpoints(services, query),
    }),
    consoleRoute(services, {
      method: "get",
      path: "/console/api/webhooks/{id}",
      operationId: "consoleWebhook",
      summary:
        "An endpoint and its deliveries, newest first: each attempt's request and response (bodies cut, the signature never shown), what holds an owed one back, replays linked to their original; by status, event type and time range",
      role: "viewer",
      query: DeliveriesQuery,
      response: ConsoleEndpointDetail,
      handler: async ({ req, query }) => endpointDetail(services, param(req, "id"), query),
    }),
    consoleRoute(services, {
      method: "post",
      path: "/console/api/webhooks/{id}/replay",
      operationId: "consoleWebhookReplay",
      summary: "Deliver one delivery's event again now (a new delivery, same webhook-id)",
      role: "admin",
      body: ReplayBody,
      response: ConsoleDelivery,
      handler: async ({ req, body, signedIn }) =>
        replayOne(services, signedIn.operator, param(req, "id"), body.deliveryId),
    }),
    consoleRoute(services, {
      method: "post",
      path: "/console/api/webhooks/{id}/replay-failed",
      operationId: "consoleWebhookReplayFailed",
      summary: "Deliver again every failed delivery of the endpoint created in [from, to) (at most 500)",
      role: "admin",
      body: ReplayRangeBody,
      response: ConsoleReplayed,
      handler: async ({ req, body, signedIn }) => ({
        replayed: await replayFailed(services, signedIn.operator, param(req, "id"), body),
      }),
    }),
    consoleRoute(services, {
      method: "post",
      path: "/console/api/webhooks/{id}/disable",
      operationId: "consoleWebhookDisable",
      summary:
        "Disable an endpoint: nothing is delivered to it until it is enabled again (by the operator or its owner)",
      role: "admin",
      body: DisableBody,
      response: ConsoleEndpoint,
      handler: async ({ req, body, signedIn }) =>
        disableEndpoint(services, signedIn.operator, param(req, "id"), body.reason),
    }),
    consoleRoute(services, {
      method: "post",
      path: "/console/api/webhooks/{id}/enable",
      operationId: "consoleWebhookEnable",
      summary:
        "Enable a disabled endpoint again, its failures forgotten: the deliveries it is still owed are attempted at once",
      role: "admin",
      body: z.strictObject({}),
      response: ConsoleEndpoint,
      handler: async ({ req, signedIn }) => enableEndpoint(services, signedIn.operator, param(req, "id")),
    }),
  ];
}

/** The KYC review queue and the decisions (reviewer). */
function kycRoutes(services: Services) {
  return [
    consoleRoute(services, {
      method: "get",
      path: "/console/api/kyc",
      operationId: "consoleKyc",
      summary:
        "Investors by onboarding status (submitted by default: the review queue), with their details and proven wallet",
      role: "viewer",
      query: z.strictObject({ status: z.enum(KYC_STATUSES).optional(), before: cursor }),
      response: ConsoleInvestorList,
      handler: async ({ query }) => kycQueue(services, query),
    }),
    consoleRoute(services, {
      method: "post",
      path: "/console/api/kyc/{id}/approve",
      operationId: "consoleKycApprove",
      summary:
        "Approve a submitted investor (kyc.approved reaches the inviting key's webhooks; the investor's page shows it)",
      role: "reviewer",
      response: ConsoleInvestor,
      handler: async ({ req, signedIn }) => decideKyc(services, signedIn.operator, param(req, "id"), { approve: true }),
    }),
    consoleRoute(services, {
      method: "post",
      path: "/console/api/kyc/{id}/reject",
      operationId: "consoleKycReject",
      summary: "Reject an investor with the reason (sent to the inviting key's webhooks, shown on the investor's page)",
      role: "reviewer",
      body: RejectBody,
      response: ConsoleInvestor,
      handler: async ({ req, body, signedIn }) =>
        decideKyc(services, signedIn.operator, param(req, "id"), { reason: body.reason }),
    }),
  ];
}

/** API keys, credits, signers and prices: each change the admin command of the same name, with its checks. */
function keyRoutes(services: Services, options: ConsoleOptions) {
  const command = (signedIn: { operator: Parameters<typeof keysCommand>[1] }, cmd: Parameters<typeof keysCommand>[3]) =>
    keysCommand(services, signedIn.operator, options.pricedOperations(), cmd) as Promise<Record<string, unknown>>;
  const change = (
    path: string,
    operationId: string,
    summary: string,
    body: z.ZodType,
    build: (keyId: string, body: any) => Parameters<typeof keysCommand>[3],
  ) =>
    consoleRoute(services, {
      method: "post",
      path,
      operationId,
      summary,
      role: "admin",
      body,
      response: ConsoleCommandResult,
      handler: async ({ req, body: given, signedIn }) =>
        command(signedIn, build(String(req.params.keyId ?? ""), given)),
    });
  return [
    consoleRoute(services, {
      method: "get",
      path: "/console/api/keys",
      operationId: "consoleKeys",
      summary: "API keys with their credits and signers, the signers of every key, and every operation's x402 price",
      role: "viewer",
      response: ConsoleKeys,
      handler: async () => keysView(services, options.pricedOperations()),
    }),
    consoleRoute(services, {
      method: "post",
      path: "/console/api/keys",
      operationId: "consoleCreateKey",
      summary: "Create an API key: the key is in this answer only",
      role: "admin",
      body: CreateKeyBody,
      response: CreatedKey,
      handler: async ({ body, signedIn }) => createKey(services, signedIn.operator, body),
    }),
    change(
      "/console/api/keys/{keyId}/revoke",
      "consoleRevokeKey",
      "Revoke an API key",
      z.strictObject({}),
      (keyId) => ({ command: "keys.revoke", keyId }),
    ),
    change(
      "/console/api/keys/{keyId}/credits",
      "consoleAddCredits",
      "Add credits of one method to a key",
      CreditsBody,
      (keyId, b: z.infer<typeof CreditsBody>) => ({
        command: "credits.add",
        keyId,
        method: b.method,
        amount: b.amount,
      }),
    ),
    change(
      "/console/api/keys/{keyId}/signers",
      "consoleAddSigner",
      "Whitelist a signer for a key",
      SignerBody,
      (keyId, b: z.infer<typeof SignerBody>) => ({ command: "signers.add", keyId, address: b.address }),
    ),
    change(
      "/console/api/keys/{keyId}/signers/remove",
      "consoleRemoveSigner",
      "Remove a signer from a key's whitelist",
      SignerBody,
      (keyId, b: z.infer<typeof SignerBody>) => ({ command: "signers.remove", keyId, address: b.address }),
    ),
    change(
      "/console/api/prices",
      "consoleSetPrice",
      "Set an operation's x402 price (USDC, at most 6 decimals)",
      PriceBody,
      (_keyId, b: z.infer<typeof PriceBody>) => ({ command: "prices.set", operation: b.operation, amount: b.amount }),
    ),
  ];
}

/** The console's changes beyond transactions: webhooks, KYC, keys and money. */
export function consoleChangeRoutes(services: Services, options: ConsoleOptions) {
  return [...webhookRoutes(services), ...kycRoutes(services), ...keyRoutes(services, options)];
}
