import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import { formatUnits } from "ethers";
import {
  clearDeployments,
  createRehearsal,
  REHEARSAL_ACCOUNT_ROLES,
  REHEARSAL_FUNDING,
  rehearsalServiceDir,
} from "./lib/rehearsal";
import { onStopSignal, printServiceBanner, type SandboxCredentials } from "./lib/sandbox-service";

/** dev-credentials.json of a rehearsal: the sandbox's shape, plus each chain's block time and the metrics token. */
export interface RehearsalCredentials extends SandboxCredentials {
  chains: Record<string, { rpcUrl: string; blockTime: number; usdc: string; deployment: unknown }>;
  metricsToken: string;
}

/**
 * `npm run rehearsal`: the public test networks as they really are, on this machine. Chains 11155111 and 84532 with
 * their block times (12 s and 2 s; REHEARSAL_BLOCK_TIME_<chainId>) and a moving base fee, Circle's USDC at Circle's
 * addresses, the suite deployed by `scripts/deploy.ts --network sepolia|baseSepolia` as docs/deploying.md
 * says, the relayer and settlement wallets funded, and the service as its own process with a production-like
 * environment (DATABASE_URL when set, else the embedded database under <DATA_DIR>/sandbox). Prints the same banner
 * as `npm start` and writes <DATA_DIR>/sandbox/dev-credentials.json (DATA_DIR default .data/rehearsal), so
 * `DATA_DIR=.data/rehearsal npm run demo` and `npm run admin` work against it. Ctrl-C stops all.
 */
let running: { close(): Promise<void> } | undefined;

async function main() {
  const started = Date.now();
  const dataDir = path.resolve(process.env.DATA_DIR ?? path.join(".data", "rehearsal"));
  const deploymentsDir = path.join(dataDir, "deployments");
  const serviceDir = rehearsalServiceDir(dataDir);
  const logFile = path.join(dataDir, "service.log");
  clearDeployments(deploymentsDir);
  fs.mkdirSync(serviceDir, { recursive: true });
  const rehearsal = await createRehearsal(hre, {
    deploymentsDir,
    dataDir,
    ports: {
      11155111: Number(process.env.REHEARSAL_SEPOLIA_PORT ?? 8645),
      84532: Number(process.env.REHEARSAL_BASE_SEPOLIA_PORT ?? 8646),
    },
    log: (line) => console.log(line),
  });
  running = rehearsal;
  let stopping = false;
  onStopSignal(async () => {
    stopping = true;
    await rehearsal.close();
  });
  const log = fs.createWriteStream(logFile, { flags: "w" });
  const service = await rehearsal.startService(
    {
      PORT: process.env.PORT ?? "3100",
      ...(process.env.PUBLIC_BASE_URL ? { PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL } : {}),
      ...(process.env.CONFIRMATIONS ? { CONFIRMATIONS: process.env.CONFIRMATIONS } : {}),
    },
    {
      onLine: (line) => {
        log.write(line + "\n");
        // Warnings and errors (pino levels 40+) and anything that is not a log line also go to the terminal.
        const level = /^\{"level":(\d+)/.exec(line)?.[1];
        if (!level || Number(level) >= 40) console.log(`service: ${line}`);
      },
    },
  );
  service.child.once("exit", (code, signal) => {
    if (stopping) return;
    console.error(`the service exited (${code ?? signal}); its log: ${logFile}. Stopping the chains.`);
    void rehearsal.close().then(() => process.exit(1));
  });
  const { apiKey } = await rehearsal.onboard(service);
  const env = rehearsal.serviceEnv();
  const credentials: RehearsalCredentials = {
    baseUrl: service.url,
    blockTime: rehearsal.blockTimes[11155111],
    apiKey,
    metricsToken: env.METRICS_TOKEN,
    chains: Object.fromEntries(
      rehearsal.chains.map((c) => [
        String(c.chainId),
        {
          rpcUrl: c.url,
          blockTime: rehearsal.blockTimes[c.chainId],
          usdc: c.usdc,
          deployment: rehearsal.deployments[c.chainId],
        },
      ]),
    ),
    accounts: rehearsal.accounts
      .slice(0, REHEARSAL_ACCOUNT_ROLES.length)
      .map((a, i) => ({ address: a.address, privateKey: a.privateKey, role: REHEARSAL_ACCOUNT_ROLES[i] })),
  };
  const credentialsFile = path.join(serviceDir, "dev-credentials.json");
  fs.writeFileSync(credentialsFile, JSON.stringify(credentials, null, 2), { mode: 0o600 });
  const relative = (file: string) => path.relative(process.cwd(), file) || file;
  printServiceBanner(credentials, relative(credentialsFile), "the service and the chains", {
    title: "rehearsal network is up (public test networks as they really are)",
    blocks: [
      ...rehearsal.chains.map(
        (c) =>
          `  blocks ${String(c.chainId).padEnd(9)}every ${rehearsal.blockTimes[c.chainId]} s (${c.network.blockTimeVariable}); base fee from ${formatUnits(c.network.initialBaseFeePerGas, "gwei")} gwei, moved by EIP-1559; Circle's USDC at ${c.usdc}`,
      ),
    ],
    more: [
      `  service        its own process (ENVIRONMENT=sandbox, ${env.DATABASE_URL ? "DATABASE_URL" : `embedded database under ${relative(serviceDir)}`}); log: ${relative(logFile)}`,
      `  metrics        curl -H 'Authorization: Bearer ${env.METRICS_TOKEN}' ${service.url}/metrics`,
      `  deployments    ${relative(deploymentsDir)} (written by scripts/deploy.ts --network sepolia / baseSepolia)`,
      `  demo           DATA_DIR=${relative(dataDir)} npm run demo   (admin: DATA_DIR=${relative(dataDir)} npm run admin -- …)`,
    ],
    accounts: `  accounts (Hardhat test mnemonic; 1,000,000 of Circle's USDC each on both chains; ETH: 10,000 each, but #0 got ${formatUnits(REHEARSAL_FUNDING.deployer, 18)}, #9 ${formatUnits(REHEARSAL_FUNDING.relayer, 18)} on both chains, #8 ${formatUnits(REHEARSAL_FUNDING.settlement, 18)} on 84532, from the faucet #19):`,
  });
  console.log(`up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await new Promise(() => undefined);
}

main().catch(async (error) => {
  console.error(error instanceof Error ? error.message : error);
  await running?.close().catch(() => undefined);
  process.exit(1);
});
