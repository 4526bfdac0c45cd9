import pino from "pino";

export type Logger = pino.Logger;

/** Structured JSON logs. Keys, signatures and payment headers are redacted wherever they appear. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "tokenized-asset-api" },
    redact: {
      paths: [
        'req.headers["x-api-key"]',
        'req.headers["x-payment"]',
        'req.headers["payment-signature"]',
        'req.headers["x-admin-token"]',
        "*.privateKey",
        "*.apiKey",
        "*.signature",
      ],
      censor: "[redacted]",
    },
  });
}

/** Long hex strings (signed transactions, signatures, calldata) are cut out of logged error texts. */
const LONG_HEX = /0x[0-9a-fA-F]{120,}/g;

/**
 * What of an error may be logged: its name, code, a shortened message without long hex, and the stack's frames. Never
 * the error object itself: driver and RPC errors carry query parameters, request payloads and signed bytes.
 */
export function errorFacts(error: unknown): Record<string, unknown> {
  const e = error as { name?: string; code?: unknown; message?: string; stack?: string };
  const message = String(e?.message ?? error).replace(LONG_HEX, "[hex]").slice(0, 500);
  const frames = (e?.stack ?? "").split("\n").filter((l) => l.trim().startsWith("at ")).slice(0, 8).join("\n");
  return { name: e?.name ?? typeof error, code: typeof e?.code === "string" || typeof e?.code === "number" ? e.code : undefined, message, stack: frames };
}
