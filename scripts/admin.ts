import fs from "node:fs";
import path from "node:path";
import { runAdminCommand, type AdminCommand } from "../service/admin/commands";
import { loadConfig } from "../service/config";
import { ApiError } from "../service/errors";
import { adminTokenPath, runtimeFilePath } from "../service/runtime-files";
import { ApiKeys } from "../service/store/api-keys";
import { Credits } from "../service/store/credits";
import { openDb } from "../service/store/db";
import { migrate } from "../service/store/migrate";
import { Signers } from "../service/store/signers";
import { Prices } from "../service/payments/pricing";

const USAGE = `usage: npm run admin -- <command>
  keys create --email E --plan Starter|Professional|Enterprise
  keys list
  keys revoke <keyId>            (or --key-id K)
  credits add --key-id K --method M --amount N
  signers add <address>
  signers remove <address>
  signers list
  prices set --operation agentCreateToken|faucet|<method> --amount <USDC, e.g. 0.25>
  prices list
Environment: ENVIRONMENT (sandbox), DATA_DIR (.data) or DATABASE_URL. Output is JSON.`;

function parse(argv: string[]): AdminCommand {
  const [group, action, ...rest] = argv;
  const flags: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    if (rest[i].startsWith("--")) flags[rest[i].slice(2)] = rest[++i] ?? "";
    else positional.push(rest[i]);
  }
  switch (`${group} ${action}`) {
    case "keys create":
      return { command: "keys.create", email: flags.email, plan: flags.plan };
    case "keys list":
      return { command: "keys.list" };
    case "keys revoke":
      return { command: "keys.revoke", keyId: flags["key-id"] ?? positional[0] };
    case "credits add":
      return { command: "credits.add", keyId: flags["key-id"], method: flags.method, amount: Number(flags.amount) };
    case "signers add":
      return { command: "signers.add", address: flags.address ?? positional[0] };
    case "signers remove":
      return { command: "signers.remove", address: flags.address ?? positional[0] };
    case "signers list":
      return { command: "signers.list" };
    case "prices set":
      return { command: "prices.set", operation: flags.operation, amount: flags.amount };
    case "prices list":
      return { command: "prices.list" };
    default:
      throw new UsageError(USAGE);
  }
}

class UsageError extends Error {}

/** The running service that owns the embedded database, if any (PGlite is single-process). */
function runningService(runtimeFile: string, tokenFile: string): { url: string; token: string } | undefined {
  if (!fs.existsSync(runtimeFile)) return undefined;
  const { pid, url } = JSON.parse(fs.readFileSync(runtimeFile, "utf8")) as { pid: number; url: string };
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return undefined; // stale file of a process that died
  }
  if (!process.env.ADMIN_TOKEN && !fs.existsSync(tokenFile)) {
    throw new Error(`The service (pid ${pid}) owns the database, but ${tokenFile} is missing: set ADMIN_TOKEN to the token it was started with`);
  }
  const token = process.env.ADMIN_TOKEN ?? fs.readFileSync(tokenFile, "utf8").trim();
  return { url, token };
}

async function main() {
  const command = parse(process.argv.slice(2));
  const config = loadConfig();
  const service = config.DATABASE_URL ? undefined : runningService(runtimeFilePath(config), adminTokenPath(config));
  let result: unknown;
  if (service) {
    const response = await fetch(`${service.url}/admin/command`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-admin-token": service.token },
      body: JSON.stringify(command),
    });
    const body = (await response.json()) as { result?: unknown; message?: string };
    if (!response.ok) throw new Error(body.message ?? `service answered ${response.status}`);
    result = body.result;
  } else {
    const db = await openDb({ databaseUrl: config.DATABASE_URL, schema: config.DATABASE_SCHEMA, dataDir: path.join(config.environmentDir, "pglite") });
    try {
      await migrate(db);
      result = await runAdminCommand(
        { apiKeys: new ApiKeys(db), credits: new Credits(db), signers: new Signers(db), prices: new Prices(db, config.ENVIRONMENT) },
        command,
      );
    } finally {
      await db.close();
    }
  }
  console.log(JSON.stringify(result, null, 2));
}

main().catch((error) => {
  const message = error instanceof ApiError || error instanceof UsageError ? error.message : (error as Error).message;
  console.error(JSON.stringify({ error: message }));
  process.exit(error instanceof UsageError ? 2 : 1);
});
