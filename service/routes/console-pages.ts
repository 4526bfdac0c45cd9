import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import { authenticate } from "../auth/console-session";
import { auditPage as auditList } from "../console/audit";
import { keysView } from "../console/keys";
import { kycQueue } from "../console/kyc";
import { overview } from "../console/overview";
import { listPayments, paymentDetail, paymentTotals } from "../console/payments";
import { transactionDetail } from "../console/transaction-detail";
import { searchTransactions } from "../console/transactions";
import { endpointDetail, listEndpoints } from "../console/webhooks";
import type { ChainChoice } from "../console/pages/transactions";
import { listRefunds, refundRow } from "../console/refunds";
import { AuditQuery, DeliveriesQuery, EndpointsQuery, PaymentsQuery, TransactionsQuery } from "../console/queries";
import { ApiError } from "../errors";
import { defineRoute } from "../http/route";
import type { Services } from "../usecases/services";
import { basePathOf } from "./console";
import type { ConsoleOptions } from "./console-changes";
import { consolePage, filteredPage, sendPage as send } from "./console-page-route";

const one = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);

/**
 * The pages' renderers, loaded on the first page asked for rather than at start: most instances never serve one, and
 * the console's JSON endpoints do not need them.
 */
let renderers: Promise<typeof import("./console-page-renderers")> | undefined;
const pages = () => (renderers ??= import("./console-page-renderers"));

const REASONS: Record<string, string> = {
  expired: "Your session has expired: sign in again.",
  revoked: "Your session was ended (signed out, or revoked by an administrator): sign in again.",
  unknown_session: "Your session is not known here: sign in again.",
  idle: "Your session ended after a while without use: sign in again.",
};

/** The sign-in page (no session needed). A signed-in visitor without a link is sent on to where it was going. */
function signInRoute(services: Services) {
  return defineRoute({
    method: "get",
    path: "/console/sign-in",
    operationId: "consoleSignInPage",
    summary: "The console's sign-in page",
    tags: ["console"],
    access: ACCESS.operatorSession,
    hidden: true,
    tool: false,
    query: z.looseObject({}),
    response: { 200: { description: "The page", content: { mediaType: "text/html", schema: { type: "string" } } } },
    handler: async ({ req, res }) => {
      const base = basePathOf(services);
      const token = one(req.query.token);
      const next = one(req.query.next) ?? `${base}/console`;
      if (
        !token &&
        (await authenticate(services.operatorSessions, req, "viewer", {
          change: false,
          idleMs: services.config.CONSOLE_SESSION_IDLE_TIMEOUT,
        }).then(
          () => true,
          () => false,
        ))
      )
        return void res.redirect(303, next.startsWith(`${base}/console`) ? next : `${base}/console`);
      send(res, 200, (await pages()).signInPage(base, next, token, REASONS[one(req.query.reason) ?? ""]));
    },
  });
}

/** Its pages' assets (console.js, console.css), built into dist/ beside the compiled console (scripts/build.ts). */
const ASSETS: Record<string, string> = {
  "console.js": "text/javascript; charset=utf-8",
  "console.css": "text/css; charset=utf-8",
};
const ASSETS_DIR = path.join(__dirname, "..", "console", "assets");
const assetCache = new Map<string, Buffer>();

function assetRoute() {
  return defineRoute({
    method: "get",
    path: "/console/assets/{file}",
    operationId: "consoleAsset",
    summary: "The console's script and styles",
    tags: ["console"],
    access: ACCESS.public,
    hidden: true,
    tool: false,
    response: { 200: { description: "The asset", content: { mediaType: "text/plain", schema: { type: "string" } } } },
    handler: async ({ req, res }) => {
      const file = String(req.params.file);
      const type = ASSETS[file];
      if (!type) throw new ApiError("NOT_FOUND", `No console asset ${file}`);
      let content = assetCache.get(file);
      if (!content) assetCache.set(file, (content = fs.readFileSync(path.join(ASSETS_DIR, file))));
      res.status(200).setHeader("Content-Type", type);
      res.setHeader("Cache-Control", "no-cache");
      res.setHeader("X-Content-Type-Options", "nosniff");
      res.end(content);
    },
  });
}

const q = (req: { query: Record<string, unknown> }, name: string) => one(req.query[name]);

const chainChoices = (services: Services): ChainChoice[] =>
  services.chains.list().map((c) => ({ chainId: c.chainId, name: c.network.name }));

/** The lists: their filters in the URL (parsed as their JSON endpoints parse them), a refused one shown on the page. */
function listPages(services: Services) {
  const chains = () => chainChoices(services);
  return [
    consolePage(services, "/console/transactions", "Transactions", async (ctx, req) =>
      filteredPage(
        req,
        TransactionsQuery,
        async (query, values) => {
          const found = await searchTransactions(services, query);
          if (found.match && query.q) return { redirect: `${ctx.base}/console/transactions/${found.match}` };
          return (await pages()).transactionsPage(ctx, chains(), values, found);
        },
        async (values, error) => (await pages()).transactionsPage(ctx, chains(), values, undefined, error),
      ),
    ),
    consolePage(services, "/console/payments", "Payments", async (ctx, req) => {
      const totals = (await paymentTotals(services, 7)).totals;
      return filteredPage(
        req,
        PaymentsQuery,
        async (query, values) =>
          (await pages()).paymentsPage(ctx, chains(), values, await listPayments(services, query), totals),
        async (values, error) => (await pages()).paymentsPage(ctx, chains(), values, undefined, totals, error),
      );
    }),
    consolePage(services, "/console/webhooks", "Webhooks", async (ctx, req) =>
      filteredPage(
        req,
        EndpointsQuery,
        async (query, values) => (await pages()).webhooksPage(ctx, values, await listEndpoints(services, query)),
        async (values, error) => (await pages()).webhooksPage(ctx, values, undefined, error),
      ),
    ),
    consolePage(services, "/console/webhooks/{id}", "A webhook endpoint", async (ctx, req) => {
      const id = String(req.params.id);
      return filteredPage(
        req,
        DeliveriesQuery,
        async (query, values) => {
          const detail = await endpointDetail(services, id, query);
          return (await pages()).webhookPage(ctx, detail, values, detail);
        },
        async (values, error) => {
          const detail = await endpointDetail(services, id, {});
          return (await pages()).webhookPage(ctx, detail, values, undefined, error);
        },
      );
    }),
    consolePage(services, "/console/audit", "Audit log", async (ctx, req) => {
      const actions = await services.auditLog.actions();
      return filteredPage(
        req,
        AuditQuery,
        async (query, values) => (await pages()).auditPage(ctx, actions, values, await auditList(services, query)),
        async (values, error) => (await pages()).auditPage(ctx, actions, values, undefined, error),
      );
    }),
  ];
}

/** The console's pages (HTML; hidden from /openapi.json, whose "console" tag lists their JSON endpoints). */
export function consolePageRoutes(services: Services, options: ConsoleOptions) {
  return [
    signInRoute(services),
    assetRoute(),
    consolePage(services, "/console", "The console's overview", async (ctx) =>
      (await pages()).overviewPage(ctx, await overview(services)),
    ),
    ...listPages(services),
    consolePage(services, "/console/transactions/{txId}", "A batch", async (ctx, req) =>
      (await pages()).transactionPage(ctx, await transactionDetail(services, String(req.params.txId).toLowerCase())),
    ),
    consolePage(services, "/console/refunds", "Refunds", async (ctx, req) => {
      const query = { status: q(req, "status"), before: q(req, "before") };
      return (await pages()).refundsPage(ctx, query, await listRefunds(services, query));
    }),
    consolePage(services, "/console/payments/{id}", "A payment", async (ctx, req) => {
      const detail = await paymentDetail(services, String(req.params.id));
      const refund = await services.paymentRefunds.get(detail.payment.id);
      return (await pages()).paymentPage(ctx, detail, refund && refundRow(refund));
    }),
    consolePage(services, "/console/kyc", "KYC review", async (ctx, req) => {
      const status = q(req, "status") ?? "submitted";
      return (await pages()).kycPage(
        ctx,
        status,
        await kycQueue(services, { status: status as never, before: q(req, "before") }),
      );
    }),
    consolePage(services, "/console/keys", "Keys and money", async (ctx) =>
      (await pages()).keysPage(ctx, await keysView(services, options.pricedOperations())),
    ),
    consolePage(services, "/console/account", "Account", async (ctx) =>
      (await pages()).accountPage(ctx, ctx.signedIn, services.config.CONSOLE_SESSION_IDLE_TIMEOUT),
    ),
  ];
}

/** The pages' paths (the OpenAPI test lists what the app mounts without documenting it). */
export const CONSOLE_PAGE_PATHS = [
  "/console",
  "/console/sign-in",
  "/console/assets/{file}",
  "/console/transactions",
  "/console/transactions/{txId}",
  "/console/payments",
  "/console/payments/{id}",
  "/console/refunds",
  "/console/webhooks",
  "/console/webhooks/{id}",
  "/console/kyc",
  "/console/keys",
  "/console/audit",
  "/console/account",
];
