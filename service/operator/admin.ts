import fs from "node:fs";
import path from "node:path";
import { JsonRpcProvider, Wallet } from "ethers";
import { runAdminCommand, type AdminCommand } from "./commands";
import { parseSelectorSpec, setupExecutor } from "./rams-setup";
import { readDeployment, type Deployment } from "../chains/deployments";
import type { Config } from "../config";
import { ApiError } from "../errors";
import { Prices } from "../payments/pricing";
import { ApiKeys } from "../store/api-keys";
import { Credits } from "../store/credits";
import { METERED_METHODS } from "../methods/metering";
import { KycStore } from "../store/kyc";
import { KycLinks } from "../store/kyc-links";
import { Sealer } from "../crypto/sealed";
import { assertDataKey } from "../store/key-check";
import { ensureDataEncryptionKey } from "../runtime-files";
import { RamsExecutors } from "../store/rams";
import { assertSchemaCurrent } from "../store/schema-version";
import { Signers } from "../store/signers";
import { Tokens } from "../store/tokens";
import { RelayerKeys } from "../store/relayer-keys";
import { AuditLog } from "../store/audit-log";
import { OperatorSessions } from "../store/operator-sessions";
import { Operators } from "../store/operators";
import type { RelayerKeysContext } from "./relayer-keys";
import { openServiceWallets } from "../signers/service-wallets";
import { parseArguments } from "./arguments";
import type { SetupExecutorCommand } from "./command-table";
import { operatorConfig, openConfiguredDb, runningService } from "./setup";
import { UsageError } from "./usage-error";

/**
 * `npm run admin -- <command>` (on a server: `node dist/service/operator/admin.js <command>`): the operator's commands,
 * with the service's configuration. Arguments are checked before anything is opened; with the service stopped, or on
 * PostgreSQL, it opens the database (whose schema must be this version's); while a service holds the embedded database
 * it goes through that service. Prints JSON; an error is one JSON line on stderr, exit 2 for the command line, 1 for
 * what the command met.
 */
async function main() {
  const argv = process.argv.slice(2);
  // The price table is the app's route list, which loads every route: only `prices` commands need it.
  const operations = argv[0] === "prices" ? (await import("../app")).pricedOperations() : [];
  const parsed = parseArguments(argv, operations);
  if ("help" in parsed) return void console.log(parsed.help);
  const { command } = parsed;
  const config = operatorConfig({ existing: true });
  const service = runningService(config);
  const run = (cmd: AdminCommand) => (service ? viaService(service, cmd) : viaDatabase(config, cmd, operations));
  const result =
    command.command === "rams.setup-executor" ? await ramsSetupExecutor(config, command, run) : await run(command);
  console.log(JSON.stringify(result, null, 2));
}

async function viaService(
  service: { pid: number; url: string; token?: string },
  command: AdminCommand,
): Promise<unknown> {
  if (!service.token)
    throw new Error(
      `The service (pid ${service.pid}) holds the database: give this tool its ADMIN_TOKEN (the same configuration)`,
    );
  const response = await fetch(`${service.url}/admin/command`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-admin-token": service.token },
    body: JSON.stringify(command),
  });
  const body = (await response.json()) as { result?: unknown; message?: string };
  if (!response.ok) throw new Error(body.message ?? `service answered ${response.status}`);
  return body.result;
}

/** The data key's sealer: DATA_ENCRYPTION_KEY (or, in the local sandbox, the kept file); a ConfigError naming it without. */
function dataSealer(config: Config): Sealer {
  return new Sealer(ensureDataEncryptionKey(config));
}

async function viaDatabase(config: Config, command: AdminCommand, operations: string[]): Promise<unknown> {
  const db = await openConfiguredDb(config);
  try {
    await assertSchemaCurrent(db, "this admin tool");
    if (command.command.startsWith("kyc.")) await assertDataKey(db, dataSealer(config));
    const stores = {
      apiKeys: new ApiKeys(db),
      credits: new Credits(db, METERED_METHODS),
      signers: new Signers(db),
      prices: new Prices(db, config.ENVIRONMENT),
      tokens: new Tokens(db),
      ramsExecutors: new RamsExecutors(db),
      db,
      // KYC records are sealed with the data key: only the kyc commands need it (checked against the database first).
      get kyc() {
        return new KycStore(db, dataSealer(config));
      },
      kycLinks: new KycLinks(db),
      relayerKeys: new RelayerKeys(db),
      operators: new Operators(db),
      operatorSessions: new OperatorSessions(db),
      auditLog: new AuditLog(db),
    };
    const consoleLinks = {
      baseUrl: config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`,
      linkTtlMs: config.CONSOLE_SIGN_IN_LINK_TTL,
    };
    return await runAdminCommand(stores, command, {
      operations,
      console: consoleLinks,
      relayer: command.command.startsWith("relayer-keys.") ? configuredRelayerKeys(config) : undefined,
    });
  } finally {
    await db.close();
  }
}

/** The relayer's keys of this tool's configuration (the service's): a key on a token is opened to learn its address. */
function configuredRelayerKeys(config: Config): RelayerKeysContext {
  const wallets = openServiceWallets(config);
  try {
    return {
      configured: new Map([...wallets.relayer].map(([chainId, signers]) => [chainId, signers.map((s) => s.address)])),
      settlement: wallets.settlement?.address,
    };
  } finally {
    void wallets.close();
  }
}

/**
 * `rams setup-executor`: the chain steps run here with the keys of this process's configuration (never sent to the
 * service), then the executor is recorded as the principal's default through the service or the database.
 */
async function ramsSetupExecutor(
  config: Config,
  c: SetupExecutorCommand,
  run: (cmd: AdminCommand) => Promise<unknown>,
) {
  const { flags } = c;
  const chainId = Number(flags["chain-id"] ?? 11155111);
  const selectors = c.selectors.map(parseSelectorSpec);
  const { rpcUrl, deployment } = chainAccess(config, chainId);
  const registry = flags.registry ?? deployment?.contracts.AgentMandate;
  const complianceProvider = flags.compliance ?? deployment?.contracts.ComplianceProvider;
  if (!registry || !complianceProvider)
    throw new Error(
      `No RAMS deployment for chain ${chainId}: set DEPLOYMENTS_DIR, or pass --registry and --compliance`,
    );
  const key = (value: string | undefined) => (value ? new Wallet(value) : undefined);
  const admin = key(config.RAMS_ADMIN_PRIVATE_KEY);
  if (!admin)
    throw new Error(
      "RAMS_ADMIN_PRIVATE_KEY is required: the registry admin deploys the executor and grants it RECORDER_ROLE",
    );
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
      keys: {
        admin,
        owner: key(config.RAMS_EXECUTOR_OWNER_PRIVATE_KEY),
        principal: key(config.RAMS_PRINCIPAL_PRIVATE_KEY),
        compliance: key(config.RAMS_COMPLIANCE_PRIVATE_KEY),
      },
    });
    const recorded = await run({
      command: "rams.executors.record",
      chainId,
      executor: result.executor,
      registry: result.registry,
      principal: result.principal,
      owner: result.owner,
    });
    return { ...result, recorded };
  } finally {
    provider.destroy();
  }
}

/** The RPC URL and deployment of a chain: RPC_URL_<chainId> and DEPLOYMENTS_DIR, else the sandbox's dev-credentials.json. */
function chainAccess(config: Config, chainId: number): { rpcUrl: string; deployment?: Deployment } {
  const credentialsFile = path.join(config.environmentDir, "dev-credentials.json");
  const sandbox = fs.existsSync(credentialsFile)
    ? (
        JSON.parse(fs.readFileSync(credentialsFile, "utf8")) as {
          chains?: Record<string, { rpcUrl?: string; deployment?: Deployment }>;
        }
      ).chains?.[String(chainId)]
    : undefined;
  const rpcUrl = config.rpcUrls.get(chainId) ?? sandbox?.rpcUrl;
  if (!rpcUrl)
    throw new Error(
      `No RPC URL for chain ${chainId}: set RPC_URL_${chainId} (npm start's dev-credentials.json names the sandbox's)`,
    );
  return { rpcUrl, deployment: readDeployment(config.DEPLOYMENTS_DIR, chainId) ?? sandbox?.deployment };
}

main().catch((error: unknown) => {
  const message = error instanceof ApiError || error instanceof Error ? error.message : String(error);
  console.error(JSON.stringify({ error: message }));
  process.exit(error instanceof UsageError ? 2 : 1);
});
