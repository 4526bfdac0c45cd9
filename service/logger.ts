import pino from "pino";

export type Logger = pino.Logger;
export type LogFormat = "json" | "pretty";

/**
 * Logs on stdout: JSON lines (production, log shippers) or one readable line per entry (`pretty`: the sandbox).
 * Keys, signatures and payment headers are redacted wherever they appear.
 *
 * Writes are synchronous. pino's default asynchronous destination flushes what is pending at process.exit() and, when
 * stdout is a broken pipe (the terminal or supervisor that read it is gone), retries that write forever with the event
 * loop blocked: the service then ignored every later SIGTERM. A synchronous write fails at once with EPIPE, after which
 * pino stops writing, so a stop always reaches its exit.
 */
export function createLogger(level: string, format: LogFormat = "json"): Logger {
  const stdout = pino.destination({ dest: 1, sync: true });
  const stream = format === "pretty" ? { write: (line: string) => stdout.write(prettyLine(line)) } : stdout;
  return pino(
    {
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
    },
    stream,
  );
}

const LEVEL_NAMES: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO ",
  40: "WARN ",
  50: "ERROR",
  60: "FATAL",
};
const OMITTED = new Set(["level", "time", "msg", "pid", "hostname", "service"]);

/** `HH:MM:SS.mmm LEVEL message key=value …` from one JSON line (already redacted by pino). */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = new Date(Number(entry.time ?? Date.now())).toISOString().slice(11, 23);
  const level = LEVEL_NAMES[Number(entry.level)] ?? String(entry.level);
  const fields = Object.entries(entry)
    .filter(([key]) => !OMITTED.has(key))
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
  return `${time} ${level} ${typeof entry.msg === "string" ? entry.msg : JSON.stringify(entry.msg ?? "")}${fields.length ? `  ${fields.join(" ")}` : ""}\n`;
}

/** Long hex strings (signed transactions, signatures, calldata) are cut out of logged error texts. */
const LONG_HEX = /0x[0-9a-fA-F]{120,}/g;

/**
 * What of an error may be logged: its name, code, a shortened message without long hex, and the stack's frames. Never
 * the error object itself: driver and RPC errors carry query parameters, request payloads and signed bytes.
 */
export function errorFacts(error: unknown): Record<string, unknown> {
  const e = error as { name?: string; code?: unknown; message?: string; stack?: string };
  const message = String(e?.message ?? error)
    .replace(LONG_HEX, "[hex]")
    .slice(0, 500);
  const frames = (e?.stack ?? "")
    .split("\n")
    .filter((l) => l.trim().startsWith("at "))
    .slice(0, 8)
    .join("\n");
  return {
    name: e?.name ?? typeof error,
    code: typeof e?.code === "string" || typeof e?.code === "number" ? e.code : undefined,
    message,
    stack: frames,
  };
}
