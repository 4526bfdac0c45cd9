import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import { assertSameOrigin, clearedSessionCookie, sessionCookie } from "../auth/console-session";
import { auditPage } from "../console/audit";
import { overview } from "../console/overview";
import { listPayments, paymentDetail, paymentTotals } from "../console/payments";
import { serveConsoleEvents } from "../console/live";
import { AuditQuery, PaymentsQuery, TransactionsQuery } from "../console/queries";
import { setOwnPassword, signIn, signOut } from "../console/sign-in";
import { transactionDetail } from "../console/transaction-detail";
import { searchTransactions, transactionAction, type TransactionAction } from "../console/transactions";
import { clientSubject } from "../auth/client-address";
import { eventStreamSink } from "../http/event-stream-sink";
import { defineRoute } from "../http/route";
import type { Services } from "../usecases/services";
import {
  ConsoleActionOutcome,
  ConsoleAudit,
  ConsoleBatch,
  ConsoleBatchList,
  ConsoleOperator,
  ConsoleOverview,
  ConsolePaymentDetail,
  ConsolePaymentList,
  ConsolePaymentTotals,
  ConsoleSession,
  IndexBody,
  PasswordBody,
  SignInBody,
} from "../wire/console";
import { consoleRoute } from "./console-route";
import { consoleChangeRoutes, type ConsoleOptions } from "./console-changes";
import { consoleRefundRoutes } from "./console-refunds";

/** The path prefix PUBLIC_BASE_URL gives the service ("" at the root): the cookie's path and the pages' links. */
export const basePathOf = (services: Services) =>
  services.baseUrl ? new URL(services.baseUrl).pathname.replace(/\/$/, "") : "";

/** POST, GET and DELETE /console/api/session: sign in (no session needed), who is signed in, sign out. */
function sessionRoutes(services: Services) {
  const cookiePath = () => `${basePathOf(services)}/console`;
  return [
    defineRoute({
      method: "post",
      path: "/console/api/session",
      operationId: "consoleSignIn",
      summary:
        "Sign in to the operator console: e-mail and password, or a one-time link's token; sets the session cookie",
      description:
        "Rate limited per client address and per operator e-mail (a few refused passwords lock that e-mail for 15 minutes). The answer's csrfToken goes with every change.",
      tags: ["console"],
      access: ACCESS.operatorSession,
      tool: false,
      rateLimited: true,
      takesSecrets: ["password"],
      body: SignInBody,
      response: ConsoleSession,
      handler: async ({ body, req, res }) => {
        assertSameOrigin(
          req,
          services.config?.PUBLIC_BASE_URL ? new URL(services.config.PUBLIC_BASE_URL).origin : undefined,
        );
        const opened = await signIn(services, req, body);
        const seconds = (Date.parse(opened.expiresAt) - Date.now()) / 1000;
        // Secure as the request's protocol says (X-Forwarded-Proto only from a proxy TRUST_PROXY trusts).
        res.setHeader("Set-Cookie", sessionCookie(req, opened.token, seconds, cookiePath()));
        res.setHeader("Cache-Control", "no-store");
        return { operator: opened.operator, csrfToken: opened.csrfToken, expiresAt: opened.expiresAt };
      },
    }),
    consoleRoute(services, {
      method: "get",
      path: "/console/api/session",
      operationId: "consoleSession",
      summary: "The signed-in operator, the session's CSRF token and when it ends",
      role: "viewer",
      response: ConsoleSession,
      handler: async ({ signedIn }) => ({
        operator: signedIn.operator,
        csrfToken: signedIn.csrfToken,
        expiresAt: signedIn.expiresAt,
      }),
    }),
    consoleRoute(services, {
      method: "delete",
      path: "/console/api/session",
      operationId: "consoleSignOut",
      summary: "Sign out: the session ends now, everywhere it was used",
      role: "viewer",
      response: z.strictObject({ signedOut: z.literal(true) }),
      handler: async ({ req, res, signedIn }) => {
        await signOut(services, signedIn, req);
        res.setHeader("Set-Cookie", clearedSessionCookie(req, cookiePath()));
        return { signedOut: true as const };
      },
    }),
    consoleRoute(services, {
      method: "post",
      path: "/console/api/password",
      operationId: "consoleSetPassword",
      summary: "Set or change the signed-in operator's password; every other session of the operator ends",
      description:
        "The current password is required when the operator has one (unless this session was opened by a one-time link in the last 10 minutes). The new one must be at least 12 characters and hard to guess (zxcvbn score 3 of 4). Wrong current passwords count toward the operator's sign-in lockout.",
      role: "viewer",
      takesSecrets: ["password", "currentPassword"],
      body: PasswordBody,
      response: z.strictObject({
        operator: ConsoleOperator,
        sessionsEnded: z.number().int().meta({ description: "The operator's other sessions this change ended" }),
      }),
      handler: async ({ body, req, signedIn }) => setOwnPassword(services, signedIn, body, req),
    }),
  ];
}

/** The overview, and transactions with the operator's actions on relayed ones. */
function transactionRoutes(services: Services) {
  return [
    consoleRoute(services, {
      method: "get",
      path: "/console/api/overview",
      operationId: "consoleOverview",
      summary:
        "The triage's signals (stale heads, stuck transactions, wallets short of a day of spend, deliveries and settlements owed), chains, wallets, queues, and the last hour's and day's activity",
      role: "viewer",
      response: ConsoleOverview,
      handler: async () => overview(services),
    }),
    consoleRoute(services, {
      method: "get",
      path: "/console/api/events",
      operationId: "consoleEvents",
      summary:
        "Every tenant's events from now on (Server-Sent Events): the console's pages read themselves again on each",
      description:
        "The service's event stream (GET /events) for an operator: every event committed after the connection, of every tenant, as `id:`, `event:`, `data:` lines, with a heartbeat comment while nothing happens. Counts against EVENT_STREAMS_PER_CLIENT.",
      role: "viewer",
      response: {
        200: {
          description: "text/event-stream until the page leaves or the service stops",
          content: { mediaType: "text/event-stream", schema: { type: "string" } },
        },
      },
      handler: async ({ req, res }) => serveConsoleEvents(services, eventStreamSink(req, res), clientSubject(req)),
    }),
    consoleRoute(services, {
      method: "get",
      path: "/console/api/transactions",
      operationId: "consoleTransactions",
      summary:
        "Batches, newest first, paged both ways with counts: by txId or hash (the batch that has it), address or API key id, chain, method, status, time range, stuck",
      role: "viewer",
      query: TransactionsQuery,
      response: ConsoleBatchList,
      handler: async ({ query }) => {
        const { match: _match, ...page } = await searchTransactions(services, query);
        return page;
      },
    }),
    consoleRoute(services, {
      method: "get",
      path: "/console/api/transactions/{txId}",
      operationId: "consoleTransaction",
      summary:
        "A batch: its request; its transactions as they stand (pending for how many blocks and how long, the fee against the base fee, which hash is live after a replacement or a cancellation, the actions that still make sense; a mined revert's block and reason decoded); timeline, events, payments",
      role: "viewer",
      response: ConsoleBatch,
      handler: async ({ req }) => transactionDetail(services, String(req.params.txId).toLowerCase()),
    }),
    ...(["rebroadcast", "replace", "cancel"] as TransactionAction[]).map((action) =>
      consoleRoute(services, {
        method: "post",
        path: `/console/api/transactions/{txId}/${action}`,
        operationId: `consoleTransaction${action[0].toUpperCase()}${action.slice(1)}`,
        summary: {
          rebroadcast: "Send a relayed transaction's signed bytes to the node again now",
          replace: "Replace a relayed transaction that is not mined with the same one at higher fees",
          cancel:
            "Cancel a relayed transaction that is not mined: a no-op at its nonce takes its place; the batch ends rejected, its payment released",
        }[action],
        role: "admin",
        body: IndexBody,
        response: ConsoleActionOutcome,
        handler: async ({ req, body, signedIn }) =>
          transactionAction(services, signedIn.operator, String(req.params.txId), body.index, action),
      }),
    ),
  ];
}

/** What the operator reads of payments and of the audit log. */
function paymentAndAuditRoutes(services: Services) {
  return [
    consoleRoute(services, {
      method: "get",
      path: "/console/api/payments",
      operationId: "consolePayments",
      summary:
        "x402 payments, newest first, paged both ways with counts: by state, payer, batch, settlement transaction, chain, what they paid for, time range",
      role: "viewer",
      query: PaymentsQuery,
      response: ConsolePaymentList,
      handler: async ({ query }) => listPayments(services, query),
    }),
    consoleRoute(services, {
      method: "get",
      path: "/console/api/payments/totals",
      operationId: "consolePaymentTotals",
      summary: "What settled payments charged per day and operation (and how many were released), the last `days` days",
      role: "viewer",
      query: z.strictObject({
        days: z.coerce.number({ error: "must be a number of days" }).int().min(1).max(90).default(7),
      }),
      response: ConsolePaymentTotals,
      handler: async ({ query }) => paymentTotals(services, query.days),
    }),
    consoleRoute(services, {
      method: "get",
      path: "/console/api/payments/{id}",
      operationId: "consolePayment",
      summary: "A payment, and the other payments its settlement transaction carried (a Multicall3 batch)",
      role: "viewer",
      response: ConsolePaymentDetail,
      handler: async ({ req }) => paymentDetail(services, String(req.params.id)),
    }),
    consoleRoute(services, {
      method: "get",
      path: "/console/api/audit",
      operationId: "consoleAudit",
      summary:
        "The audit log: every change operators made (console and admin tool), newest first, each with what changed field by field",
      role: "viewer",
      query: AuditQuery,
      response: ConsoleAudit,
      handler: async ({ query }) => auditPage(services, query),
    }),
  ];
}

/** The operator console's JSON endpoints (/console/api/…). */
export function consoleRoutes(services: Services, options: ConsoleOptions) {
  return [
    ...sessionRoutes(services),
    ...transactionRoutes(services),
    ...paymentAndAuditRoutes(services),
    ...consoleChangeRoutes(services, options),
    ...consoleRefundRoutes(services),
  ];
}
