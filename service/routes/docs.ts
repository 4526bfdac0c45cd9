import { timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { NextFunction, Request, Response } from "express";
import { z } from "zod";
import { ACCESS } from "../auth/access-rules";
import { notFound, unauthorized } from "../errors";
import { defineRoute } from "../http/route";
import { metricsOf } from "../metrics";
import type { Services } from "../usecases/services";

/**
 * The API explains itself: GET /openapi.json (the document), GET /docs (an interactive reference rendered from it by
 * Swagger UI, every asset served by this service: it works with no internet) and GET /metrics (Prometheus).
 */
export function docsRoutes(services: Services, options: { document: () => object; version: string }) {
  return [
    defineRoute({
      method: "get",
      path: "/openapi.json",
      summary: "This document: OpenAPI 3.1, generated from the request and response schemas",
      tags: ["meta"],
      access: ACCESS.public,
      response: z
        .looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) })
        .meta({ description: "The OpenAPI 3.1 document" }),
      handler: async () => options.document(),
    }),
    defineRoute({
      method: "get",
      path: "/docs",
      summary: "The interactive API reference (Swagger UI over /openapi.json; works offline)",
      tags: ["meta"],
      access: ACCESS.public,
      response: {
        200: { description: "The reference page", content: { mediaType: "text/html", schema: { type: "string" } } },
      },
      handler: async ({ res }) => {
        const basePath = new URL(services.baseUrl).pathname.replace(/\/$/, "");
        res.status(200);
        res.setHeader("Content-Type", "text/html; charset=utf-8");
        res.setHeader("Content-Security-Policy", DOCS_CSP);
        res.setHeader("X-Content-Type-Options", "nosniff");
        res.setHeader("Referrer-Policy", "no-referrer");
        res.setHeader("Cache-Control", "no-cache");
        res.end(docsPage(basePath));
      },
    }),
    defineRoute({
      method: "get",
      path: "/metrics",
      summary:
        "Prometheus metrics: requests and latencies per route, batches, payments, relayer balance and nonce lag, database pool",
      description:
        "With METRICS_TOKEN set, `Authorization: Bearer <METRICS_TOKEN>`. Without it: off (404) on a production start, public in the local sandbox.",
      tags: ["meta"],
      access: ACCESS.public,
      response: {
        200: {
          description: "Prometheus text exposition format",
          content: { mediaType: "text/plain", schema: { type: "string" } },
        },
      },
      handler: async ({ req, res }) => {
        const token = services.config.METRICS_TOKEN;
        if (!token && services.config.profile !== "local")
          throw notFound("No route for GET /metrics: metrics are off (set METRICS_TOKEN to serve them)");
        if (token && !sameSecret(req.header("authorization") ?? "", `Bearer ${token}`)) {
          throw unauthorized("GET /metrics needs Authorization: Bearer <METRICS_TOKEN>", { header: "authorization" });
        }
        const { registry } = metricsOf(services, options.version);
        const text = await registry.metrics();
        res.status(200);
        res.setHeader("Content-Type", registry.contentType);
        res.setHeader("Cache-Control", "no-store");
        res.end(text);
      },
    }),
  ];
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Swagger UI styles itself inline and draws icons as data: images; everything else comes from this service. */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const escapeAttribute = (text: string) => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

function docsPage(basePath: string): string {
  const asset = (file: string) => escapeAttribute(`${basePath}/docs/assets/${file}`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tokenized-Asset Transaction API — reference</title>
<link rel="icon" type="image/png" href="${asset("favicon-32x32.png")}">
<link rel="stylesheet" href="${asset("swagger-ui.css")}">
</head>
<body>
<div id="swagger-ui" data-spec-url="${escapeAttribute(`${basePath}/openapi.json`)}"></div>
<script src="${asset("swagger-ui-bundle.js")}"></script>
<script src="${asset("docs.js")}"></script>
</body>
</html>
`;
}

/** Starts Swagger UI on the page's element, with nothing that reaches out (no validator badge, no remote config). */
const DOCS_SCRIPT = `"use strict";
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-spec-url"),
    domNode: root,
    deepLinking: true,
    validatorUrl: null,
    queryConfigEnabled: false,
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    filter: true,
    tryItOutEnabled: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  });
});
`;

/** The files of the page, from swagger-ui-dist (read once, kept in memory) plus its start script. */
const ASSET_TYPES: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
  "favicon-16x16.png": "image/png",
};
const assetCache = new Map<string, Buffer>();

function assetBytes(file: string): Buffer | undefined {
  if (file === "docs.js") return Buffer.from(DOCS_SCRIPT);
  if (!ASSET_TYPES[file]) return undefined;
  let bytes = assetCache.get(file);
  if (!bytes) {
    const dir = path.dirname(require.resolve("swagger-ui-dist/package.json"));
    bytes = fs.readFileSync(path.join(dir, file));
    assetCache.set(file, bytes);
  }
  return bytes;
}

/** GET /docs/assets/<file>: the page's scripts, styles and icons (a fixed list; anything else is a 404). */
export function docsAssets(req: Request, res: Response, next: NextFunction): void {
  res.locals.route = "/docs/assets/{file}";
  const file = String(req.params.file ?? "");
  const bytes = assetBytes(file);
  if (!bytes) return next(notFound(`No asset ${file}`));
  res.setHeader("Content-Type", file === "docs.js" ? "text/javascript; charset=utf-8" : ASSET_TYPES[file]);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Cache-Control", "public, max-age=3600");
  res.status(200).end(bytes);
}
