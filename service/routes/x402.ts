import { z } from "zod";
import { resourceUrl } from "../auth/gate";
import { ACCESS } from "../auth/access-rules";
import { address } from "../wire/fields";
import { FaucetClaim, PaymentRequirements, responseFields } from "../wire/responses";
import { defineRoute, type RouteDefinition } from "../http/route";
import type { Services } from "../usecases/services";
import { claimFaucet } from "../usecases/faucet-claim";
import { x402Discovery } from "../usecases/x402-discovery";

const { address: addressOut, int } = responseFields;

const Discovery = z
  .strictObject({
    x402Version: int,
    enabled: z.boolean(),
    network: z.string().optional().meta({ example: "eip155:84532" }),
    asset: addressOut.optional(),
    payTo: addressOut.optional(),
    resources: z.array(
      z.strictObject({
        resource: z.string(),
        method: z.string(),
        operation: z.string(),
        executionMode: z
          .enum(["client-signed", "service-relayed", "read"])
          .meta({ description: "How the operation runs; read is a paid GET (an agent getter or a RAMS read)" }),
        step: z
          .enum(["prepare", "send", "call"])
          .meta({ description: "The call that takes this payment; call is the paid GET itself" }),
        accepts: z.array(PaymentRequirements),
      }),
    ),
  })
  .meta({ id: "X402Discovery" });

/** GET /.well-known/x402 */
function wellKnownX402Route(services: Services, paidReads: () => RouteDefinition<any, any>[]) {
  return defineRoute({
    method: "get",
    path: "/.well-known/x402",
    summary: "Paid resources and their prices (x402 v2 discovery)",
    tags: ["x402"],
    access: ACCESS.public,
    response: Discovery,
    handler: ({ req }) =>
      x402Discovery(services, resourceUrl(services, req).replace(/\/\.well-known\/x402$/, ""), paidReads),
  });
}

/** POST /faucet/bkn */
function faucetBknRoute(services: Services) {
  return defineRoute({
    method: "post",
    path: "/faucet/bkn",
    summary: "Sandbox: 100 BKN to a recipient (Idempotency-Key header; an API key's 10 claims, or 0.01 USDC via x402)",
    tags: ["x402"],
    access: ACCESS.faucet,
    response: {
      200: {
        description:
          "The claim was confirmed (status confirmed), or failed (status failed; an x402 payment was released)",
        schema: FaucetClaim,
      },
      202: { description: "Submitted, not yet confirmed", schema: FaucetClaim },
    },
    rateLimited: true,
    body: z.looseObject({
      recipientAddress: address.refine((a) => !/^0x0{40}$/i.test(a), "must not be the zero address"),
    }),
    handler: ({ req, body, caller }) => claimFaucet(services, req, caller, body.recipientAddress),
  });
}

/**
 * Discovery of the paid resources, and the sandbox governance-token faucet. `paidReads` lists the API's paid GET routes
 * (the app's route list; handed in, since the app is built from these routes).
 */
export function x402Routes(services: Services, paidReads: () => RouteDefinition<any, any>[]) {
  return [wellKnownX402Route(services, paidReads), faucetBknRoute(services)];
}
