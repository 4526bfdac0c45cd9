import { z } from "zod";
import { listRefunds, markRefundPaid } from "../console/refunds";
import type { Services } from "../usecases/services";
import { ConsoleRefund, ConsoleRefundList, MarkRefundBody } from "../wire/console-refunds";
import { consoleRoute } from "./console-route";

/** Payments owed back after a failure of the service's: the list, and an operator's refund marked paid. */
export function consoleRefundRoutes(services: Services) {
  return [
    consoleRoute(services, {
      method: "get",
      path: "/console/api/refunds",
      operationId: "consoleRefunds",
      summary:
        "Payments owed back after a failure of the service's, newest first: owed, being sent by the refund wallet, refunded",
      role: "viewer",
      query: z.strictObject({
        status: z.enum(["owed", "sending", "refunded"]).optional(),
        before: z.string().optional().meta({ description: "The `next` of the previous page" }),
      }),
      response: ConsoleRefundList,
      handler: async ({ query }) => listRefunds(services, query),
    }),
    consoleRoute(services, {
      method: "post",
      path: "/console/api/refunds/{paymentId}/mark-paid",
      operationId: "consoleRefundMarkPaid",
      summary: "Mark an owed refund paid by the operator's own transaction (checked on chain; audited)",
      description:
        "The transaction must be mined and confirmed on the payment's chain and transfer at least the owed amount of the payment's asset to the payer; each transaction marks one refund. A refund the refund wallet is sending, or already refunded, is a 409.",
      role: "admin",
      body: MarkRefundBody,
      response: ConsoleRefund,
      handler: async ({ req, body, signedIn }) =>
        markRefundPaid(services, signedIn.operator, String(req.params.paymentId), body.transaction),
    }),
  ];
}
