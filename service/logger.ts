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
