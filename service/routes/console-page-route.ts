import type { Request, Response } from "express";
import type { ZodType } from "zod";
import { ACCESS } from "../auth/access-rules";
import { authenticate, type SignedIn } from "../auth/console-session";
import { explorerOf } from "../console/chain-facts";
import { html } from "../console/pages/html";
import type { FilterError } from "../console/pages/filters";
import { CONSOLE_CSP, page, type PageContext } from "../console/pages/layout";
import { filledIn } from "../console/queries";
import { ApiError } from "../errors";
import { toApiError } from "../http/error-mapping";
import { defineRoute } from "../http/route";
import type { Services } from "../usecases/services";
import { parseInput } from "../wire/parse-input";
import { basePathOf } from "./console";

/** What a page's render answers: the page, a page with its own status (a refused filter: 400), or a redirect. */
export type Rendered = string | { status: number; body: string } | { redirect: string };

export type ConsolePageContext = PageContext & { signedIn: SignedIn };

export function sendPage(res: Response, status: number, body: string): void {
  res.status(status);
  res.setHeader("Content-Type", "text/html; charset=utf-8");
  res.setHeader("Content-Security-Policy", CONSOLE_CSP);
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("X-Frame-Options", "DENY");
  res.end(body);
}

/** The block explorer of each served chain that has one (the pages' links). */
function explorers(services: Services): Record<number, string> {
  const out: Record<number, string> = {};
  for (const chain of services.chains.list()) {
    const url = explorerOf(services.config, chain);
    if (url) out[chain.chainId] = url;
  }
  return out;
}

/** A console page: rendered for a live session; without one, the browser is sent to sign in (and back afterwards). */
export function consolePage(
  services: Services,
  pagePath: string,
  summary: string,
  render: (ctx: ConsolePageContext, req: Request) => Promise<Rendered>,
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
      const ctx = {
        operator: signedIn.operator,
        csrfToken: signedIn.csrfToken,
        base,
        signedIn,
        explorers: explorers(services),
      };
      try {
        const rendered = await render(ctx, req);
        if (typeof rendered === "string") sendPage(res, 200, rendered);
        else if ("redirect" in rendered) res.redirect(303, rendered.redirect);
        else sendPage(res, rendered.status, rendered.body);
      } catch (error) {
        const refused = toApiError(error);
        if (!refused || refused.status >= 500) throw error;
        sendPage(
          res,
          refused.status,
          page(
            ctx,
            "overview",
            "This page cannot be shown",
            html`<p class="notice error" role="alert">${refused.message}</p><p><a href="${base}/console">Back to the overview</a></p>`,
          ),
        );
      }
    },
  });
}

/**
 * A list page's filters: parsed with the schema its JSON endpoint uses (empty form fields left out), and the list
 * loaded; a filter either refuses (400 naming the field) is shown on the page above its form, the values as sent, with
 * status 400: never an empty list that looks like "nothing matches".
 */
export async function filteredPage<Q>(
  req: Request,
  schema: ZodType<Q>,
  load: (query: Q, values: Record<string, string | undefined>) => Promise<Rendered>,
  refused: (values: Record<string, string | undefined>, error: FilterError) => string | Promise<string>,
): Promise<Rendered> {
  const given = filledIn(req.query);
  const values = Object.fromEntries(
    Object.entries(given).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  );
  try {
    return await load(parseInput(schema, given, "query"), values);
  } catch (error) {
    const refusal = toApiError(error);
    if (!refusal || refusal.status !== 400) throw error;
    const field = typeof refusal.details?.field === "string" ? refusal.details.field : undefined;
    return { status: 400, body: await refused(values, { field, message: refusal.message }) };
  }
}
