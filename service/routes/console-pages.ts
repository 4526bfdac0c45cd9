import fs from "node:fs";
import path from "node:path";
import type { Request, Response } from "express";
import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import { authenticate, type SignedIn } from "../auth/console-session";
import { auditPage as auditList } from "../console/audit";
import { keysView } from "../console/keys";
import { kycQueue } from "../console/kyc";
import { overview } from "../console/overview";
import { listPayments, paymentDetail, paymentTotals } from "../console/payments";
import { searchTransactions, transactionDetail } from "../console/transactions";
import { endpointDetail, listEndpoints } from "../console/webhooks";
import type { PageContext } from "../console/pages/layout";
import { listRefunds, refundRow } from "../console/refunds";
import { ApiError } from "../errors";
import { toApiError } from "../http/error-mapping";
import { defineRoute } from "../http/route";
import type { Services } from "../usecases/services";
import { basePathOf } from "./console";
import type { ConsoleOptions } from "./console-changes";

/**
 * The pages' renderers, loaded on the first page asked for rather than at start: most instances never serve one, and
 * the console's JSON endpoints (routes/console.ts) do not need them.
 */
let renderers: Promise<typeof import("./console-page-renderers")> | undefined;
const pages = () => (renderers ??= import("./console-page-renderers"));

function send(res: Response, status: number, body: string, csp: string): void {
  res.status(status);
  res.setHeader("Content-Type", "text/html; charset=utf-8");
  res.setHeader("Content-Security-Policy", csp);
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("X-Frame-Options", "DENY");
  res.end(body);
}

const one = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);

/** A console page: rendered for a live session; without one, the browser is sent to sign in (and back afterwards). */
function consolePage(
  services: Services,
  pagePath: string,
  summary: string,
  render: (ctx: PageContext & { signedIn: SignedIn }, req: Request) => Promise<string | { redirect: string }>,
) {
  return defineRoute({
    method: "get",
    path: pagePath,
    operationId: `consolePage${pagePath.replace(/[^A-Za-z]/g, "")}`,
    summary,
    tags: ["console"],
    access: ACCESS.operatorSession,
    hidden: true,
    tool: false,
    response: { 200: { description: "The page", content: { mediaType: "text/html", schema: { type: "string" } } } },
    handler: async ({ req, res }) => {
      const base = basePathOf(services);
      let signedIn: SignedIn;
      try {
        signedIn = await authenticate(services.operatorSessions, req, "viewer", {
          change: false,
          idleMs: services.config.CONSOLE_SESSION_IDLE_TIMEOUT,
        });
      } catch (error) {
        const reason =
          error instanceof ApiError && typeof error.details?.reason === "string" ? error.details.reason : "";
        const query = new URLSearchParams({
          next: `${base}${req.originalUrl}`,
          ...(reason && reason !== "no_session" ? { reason } : {}),
        });
        return void res.redirect(303, `${base}/console/sign-in?${query.toString()}`);
      }
      const ctx = { operator: signedIn.operator, csrfToken: signedIn.csrfToken, base, signedIn };
      const { CONSOLE_CSP, html, page } = await pages();
      try {
        const rendered = await render(ctx, req);
        if (typeof rendered === "string") send(res, 200, rendered, CONSOLE_CSP);
        else res.redirect(303, rendered.redirect);
      } catch (error) {
        const refused = toApiError(error);
        if (!refused || refused.status >= 500) throw error;
        send(
          res,
          refused.status,
          page(
            ctx,
            "overview",
            "This page cannot be shown",
            html`<p class="notice error" role="alert">${refused.message}</p><p><a href="${base}/console">Back to the overview</a></p>`,
          ),
          CONSOLE_CSP,
        );
      }
    },
  });
}

const REASONS: Record<string, string> = {
  expired: "Your session has expired: sign in again.",
  revoked: "Your session was ended (signed out, your password changed, or revoked by an administrator): sign in again.",
  idle: "Your session ended after a while without use: sign in again.",
  unknown_session: "Your session is not known here: sign in again.",
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
      const { CONSOLE_CSP, signInPage } = await pages();
      send(res, 200, signInPage(base, next, token, REASONS[one(req.query.reason) ?? ""]), CONSOLE_CSP);
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

const q = (req: Request, name: string) => one(req.query[name]);

/** The console's pages (HTML; hidden from /openapi.json, whose "console" tag lists their JSON endpoints). */
export function consolePageRoutes(services: Services, options: ConsoleOptions) {
  return [
    signInRoute(services),
    assetRoute(),
    consolePage(services, "/console", "The console's overview", async (ctx) =>
      (await pages()).overviewPage(ctx, await overview(services)),
    ),
    consolePage(services, "/console/transactions", "Transactions", async (ctx, req) => {
      const query = { q: q(req, "q"), status: q(req, "status") as never, before: q(req, "before") };
      const found = await searchTransactions(services, query);
      if (found.match && query.q) return { redirect: `${ctx.base}/console/transactions/${found.match}` };
      return (await pages()).transactionsPage(ctx, query, found);
    }),
    consolePage(services, "/console/transactions/{txId}", "A batch", async (ctx, req) =>
      (await pages()).transactionPage(ctx, await transactionDetail(services, String(req.params.txId).toLowerCase())),
    ),
    consolePage(services, "/console/payments", "Payments", async (ctx, req) => {
      const query = { status: q(req, "status") as never, payer: q(req, "payer"), before: q(req, "before") };
      const [list, totals] = [await listPayments(services, query), (await paymentTotals(services, 7)).totals];
      return (await pages()).paymentsPage(ctx, query, list, totals);
    }),
    consolePage(services, "/console/refunds", "Refunds", async (ctx, req) => {
      const query = { status: q(req, "status"), before: q(req, "before") };
      return (await pages()).refundsPage(ctx, query, await listRefunds(services, query));
    }),
    consolePage(services, "/console/payments/{id}", "A payment", async (ctx, req) => {
      const detail = await paymentDetail(services, String(req.params.id));
      const refund = await services.paymentRefunds.get(detail.payment.id);
      return (await pages()).paymentPage(ctx, detail, refund && refundRow(refund));
    }),
    consolePage(services, "/console/webhooks", "Webhooks", async (ctx, req) =>
      (await pages()).webhooksPage(ctx, await listEndpoints(services, { before: q(req, "before") })),
    ),
    consolePage(services, "/console/webhooks/{id}", "A webhook endpoint", async (ctx, req) => {
      const query = { status: q(req, "status") as never, before: q(req, "before") };
      return (await pages()).webhookPage(ctx, await endpointDetail(services, String(req.params.id), query), query);
    }),
    consolePage(services, "/console/kyc", "KYC review", async (ctx, req) => {
      const status = q(req, "status") ?? "submitted";
      const queue = await kycQueue(services, { status: status as never, before: q(req, "before") });
      return (await pages()).kycPage(ctx, status, queue);
    }),
    consolePage(services, "/console/keys", "Keys and money", async (ctx) =>
      (await pages()).keysPage(ctx, await keysView(services, options.pricedOperations())),
    ),
    consolePage(services, "/console/audit", "Audit log", async (ctx, req) => {
      const entries = await auditList(services, { actor: q(req, "actor"), before: q(req, "before") });
      return (await pages()).auditPage(ctx, q(req, "actor"), entries);
    }),
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
