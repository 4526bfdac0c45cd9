import fs from "node:fs";
import path from "node:path";
import { runAdminCommand, type AdminCommand } from "../service/admin/commands";
import { findDataDir } from "../service/admin/data-dir";
import { loadConfig } from "../service/config";
import { ApiError } from "../service/errors";
import { adminTokenPath, runtimeFilePath } from "../service/runtime-files";
import { ApiKeys } from "../service/store/api-keys";
import { Tokens } from "../service/store/tokens";
import { Credits } from "../service/store/credits";
import { openDb } from "../service/store/db";
import { migrate } from "../service/store/migrate";
import { Signers } from "../service/store/signers";
import { Prices } from "../service/payments/pricing";
import { JsonRpcProvider, Wallet } from "ethers";
import { parseSelectorSpec, setupExecutor } from "../service/admin/rams-setup";
import { readDeployment, type Deployment } from "../service/chains/deployments";
import { RamsExecutors } from "../service/store/rams";
import type { Config } from "../service/config";
import { KycStore } from "../service/store/kyc";

const USAGE = `usage: npm run admin -- <command>
  keys create --email E --plan Starter|Professional|Enterprise
  keys list
  keys revoke <keyId>            (or --key-id K)
  keys bind-email --key-id K --email E     let key K act on the tokens of tokenizer e-mail E too
  keys unbind-email --key-id K --email E
  credits add --key-id K --method M --amount N
  signers add <address>
  signers remove <address>
  signers list
  prices set --operation agentCreateToken|faucet|<method> --amount <USDC, e.g. 0.25>
  prices list
  kyc list [--status none|invited|submitted|approved|rejected] [--email E] [--key-id K]
  kyc approve <email> [--key-id K]
  kyc reject <email> --reason "why" [--key-id K]
  rams setup-executor --principal P [--owner O] --selector transferFrom:2 [--selector 0x095ea7b3:1|:none ...]
                      [--asset A [--allowance N]] [--enforcer E] [--identity-ref R [--expires-at T]] [--executor X]
                      [--chain-id 11155111] [--registry R] [--compliance C]
  rams executors [--chain-id N]
Environment: ENVIRONMENT (sandbox), DATA_DIR or DATABASE_URL; without either, the sandbox's .data (the current
directory's, else the checkout's) when it holds a database. Output is JSON.
rams setup-executor: RPC_URL_<chainId> and DEPLOYMENTS_DIR (else the sandbox's dev-credentials.json); keys from
  RAMS_ADMIN_PRIVATE_KEY (registry admin, required), RAMS_EXECUTOR_OWNER_PRIVATE_KEY, RAMS_PRINCIPAL_PRIVATE_KEY,
  RAMS_COMPLIANCE_PRIVATE_KEY (optional: without one, that wallet's step is printed as a prepared transaction).`;

/** Operator commands that run in this process (they need chain access and keys) before recording through the store. */
type SetupExecutorCommand = { command: "rams.setup-executor"; flags: Record<string, string>; lists: Record<string, string[]> };
type CliCommand = AdminCommand | SetupExecutorCommand;

function parse(argv: string[]): CliCommand {
  const [group, action, ...rest] = argv;
  const flags: Record<string, string> = {};
  const lists: Record<string, string[]> = {};
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    if (rest[i].startsWith("--")) {
      const name = rest[i].slice(2);
      flags[name] = rest[++i] ?? "";
      (lists[name] ??= []).push(flags[name]);
    } else positional.push(rest[i]);
  }
  switch (`${group} ${action}`) {
    case "keys create":
      return { command: "keys.create", email: flags.email, plan: flags.plan };
    case "keys list":
      return { command: "keys.list" };
    case "keys revoke":
      return { command: "keys.revoke", keyId: flags["key-id"] ?? positional[0] };
    case "keys bind-email":
      return { command: "keys.bind-email", keyId: flags["key-id"], email: flags.email };
    case "keys unbind-email":
      return { command: "keys.unbind-email", keyId: flags["key-id"], email: flags.email };
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
    case "rams setup-executor":
      return { command: "rams.setup-executor", flags, lists };
    case "rams executors":
      return { command: "rams.executors.list", chainId: flags["chain-id"] ? Number(flags["chain-id"]) : undefined };
    case "kyc list":
      return { command: "kyc.list", status: flags.status, email: flags.email, keyId: flags["key-id"] };
    case "kyc approve":
      return { command: "kyc.approve", email: flags.email ?? positional[0], keyId: flags["key-id"] };
    case "kyc reject":
      return { command: "kyc.reject", email: flags.email ?? positional[0], reason: flags.reason, keyId: flags["key-id"] };
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
  const dataDir = findDataDir(process.env, [".data", path.resolve(__dirname, "..", ".data")]);
  const config = loadConfig({ ...process.env, ...(dataDir ? { DATA_DIR: dataDir } : {}) });
  const service = config.DATABASE_URL ? undefined : runningService(runtimeFilePath(config), adminTokenPath(config));
  const run = (cmd: AdminCommand) => (service ? viaService(service, cmd) : viaDatabase(config, cmd));
  const result = command.command === "rams.setup-executor" ? await ramsSetupExecutor(config, command, run) : await run(command);
  console.log(JSON.stringify(result, null, 2));
}

async function viaService(service: { url: string; token: string }, command: AdminCommand): Promise<unknown> {
  const response = await fetch(`${service.url}/admin/command`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-admin-token": service.token },
    body: JSON.stringify(command),
  });
  const body = (await response.json()) as { result?: unknown; message?: string };
  if (!response.ok) throw new Error(body.message ?? `service answered ${response.status}`);
  return body.result;
}

async function viaDatabase(config: Config, command: AdminCommand): Promise<unknown> {
  const db = await openDb({ databaseUrl: config.DATABASE_URL, schema: config.DATABASE_SCHEMA, dataDir: path.join(config.environmentDir, "pglite") });
  try {
    await migrate(db);
    return await runAdminCommand(
      { apiKeys: new ApiKeys(db), credits: new Credits(db), signers: new Signers(db), prices: new Prices(db, config.ENVIRONMENT), tokens: new Tokens(db), ramsExecutors: new RamsExecutors(db), db, kyc: new KycStore(db) },
      command,
    );
  } finally {
    await db.close();
  }
}

/**
 * `rams setup-executor`: the chain steps run here with the keys of this process's environment (never sent to the
 * service), then the executor is recorded as the principal's default through the service or the database.
 */
async function ramsSetupExecutor(config: Config, c: SetupExecutorCommand, run: (cmd: AdminCommand) => Promise<unknown>) {
  const { flags, lists } = c;
  const chainId = Number(flags["chain-id"] ?? 11155111);
  if (!flags.principal) throw new UsageError(`--principal is required\n${USAGE}`);
  if (!lists.selector?.length) throw new UsageError(`at least one --selector is required (e.g. --selector transferFrom:2)\n${USAGE}`);
  const selectors = lists.selector.map(parseSelectorSpec);
  const { rpcUrl, deployment } = chainAccess(config, chainId);
  const registry = flags.registry ?? deployment?.contracts.AgentMandate;
  const complianceProvider = flags.compliance ?? deployment?.contracts.ComplianceProvider;
  if (!registry || !complianceProvider) throw new Error(`No RAMS deployment for chain ${chainId}: set DEPLOYMENTS_DIR, or pass --registry and --compliance`);
  const key = (name: string) => {
    const value = process.env[name];
    if (!value) return undefined;
    try {
      return new Wallet(value);
    } catch {
      throw new Error(`${name} is not a valid private key`);
    }
  };
  const admin = key("RAMS_ADMIN_PRIVATE_KEY");
  if (!admin) throw new Error("RAMS_ADMIN_PRIVATE_KEY is required: the registry admin deploys the executor and grants it RECORDER_ROLE");
  const provider = new JsonRpcProvider(rpcUrl, chainId, { staticNetwork: true, cacheTimeout: -1 });
  try {
    const result = await setupExecutor({
      provider,
      chainId,
      registry,
      complianceProvider,
      principal: flags.principal,
      owner: flags.owner,
      selectors,
      asset: flags.asset,
      allowance: flags.allowance ? BigInt(flags.allowance) : undefined,
      enforcer: flags.enforcer,
      identityRef: flags["identity-ref"],
      expiresAt: flags["expires-at"] ? Number(flags["expires-at"]) : undefined,
      executor: flags.executor,
      keys: { admin, owner: key("RAMS_EXECUTOR_OWNER_PRIVATE_KEY"), principal: key("RAMS_PRINCIPAL_PRIVATE_KEY"), compliance: key("RAMS_COMPLIANCE_PRIVATE_KEY") },
    });
    const recorded = await run({ command: "rams.executors.record", chainId, executor: result.executor, registry: result.registry, principal: result.principal, owner: result.owner });
    return { ...result, recorded };
  } finally {
    provider.destroy();
  }
}

/** The RPC URL and deployment of a chain: RPC_URL_<chainId> and DEPLOYMENTS_DIR, else the sandbox's dev-credentials.json. */
function chainAccess(config: Config, chainId: number): { rpcUrl: string; deployment?: Deployment } {
  const credentialsFile = path.join(config.environmentDir, "dev-credentials.json");
  const sandbox = fs.existsSync(credentialsFile)
    ? (JSON.parse(fs.readFileSync(credentialsFile, "utf8")) as { chains?: Record<string, { rpcUrl?: string; deployment?: Deployment }> }).chains?.[String(chainId)]
    : undefined;
  const rpcUrl = config.rpcUrls.get(chainId) ?? sandbox?.rpcUrl;
  if (!rpcUrl) throw new Error(`No RPC URL for chain ${chainId}: set RPC_URL_${chainId} (npm start's dev-credentials.json names the sandbox's)`);
  return { rpcUrl, deployment: readDeployment(config.DEPLOYMENTS_DIR, chainId) ?? sandbox?.deployment };
}

main().catch((error) => {
  const message = error instanceof ApiError || error instanceof UsageError ? error.message : (error as Error).message;
  console.error(JSON.stringify({ error: message }));
  process.exit(error instanceof UsageError ? 2 : 1);
});
