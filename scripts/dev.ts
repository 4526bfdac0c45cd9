import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import { loadConfig } from "../service/config";
import { startService } from "../service/server";
import { ACCOUNT_ROLES, createSandbox, RELAYER_INDEX, SETTLEMENT_INDEX } from "./lib/sandbox";

/**
 * `npm start`: two local chains with the sandbox's chain ids, the suite deployed on both, the well-known test accounts
 * funded, and the service in sandbox mode on the embedded database. Prints what a newcomer needs and writes it to
 * <DATA_DIR>/sandbox/dev-credentials.json. Ctrl-C stops everything.
 */

async function main() {
  const dataDir = path.resolve(process.env.DATA_DIR ?? ".data");
  const sandboxDir = path.join(dataDir, "sandbox");
  const credentialsFile = path.join(sandboxDir, "dev-credentials.json");
  const sandbox = await createSandbox(hre, {
    deploymentsDir: path.join(sandboxDir, "deployments"),
    ports: { sepolia: Number(process.env.LOCAL_SEPOLIA_PORT ?? 8545), baseSepolia: Number(process.env.LOCAL_BASE_SEPOLIA_PORT ?? 8546) },
    log: (line) => console.log(line),
  });
  const { accounts } = sandbox;
  const chains = [sandbox.sepolia, sandbox.baseSepolia];
  const deployments = Object.fromEntries(chains.map((c) => [String(c.chainId), { rpcUrl: c.url, deployment: sandbox.deployments[c.chainId] }]));

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ENVIRONMENT: "sandbox",
    DATA_DIR: dataDir,
    DEPLOYMENTS_DIR: sandbox.deploymentsDir,
    RELAYER_PRIVATE_KEY: process.env.RELAYER_PRIVATE_KEY ?? accounts[RELAYER_INDEX].privateKey,
    X402_SETTLEMENT_PRIVATE_KEY: process.env.X402_SETTLEMENT_PRIVATE_KEY ?? accounts[SETTLEMENT_INDEX].privateKey,
    X402_PAYMENT_CHAIN_ID: "84532",
  };
  for (const chain of chains) env[`RPC_URL_${chain.chainId}`] = chain.url;
  const config = loadConfig(env);
  const service = await startService(config);
  const { apiKeys, signers } = service.services;

  const previous = fs.existsSync(credentialsFile) ? JSON.parse(fs.readFileSync(credentialsFile, "utf8")) : undefined;
  let apiKey: string | undefined = previous?.apiKey;
  if (!apiKey || !(await apiKeys.verify(apiKey))) {
    apiKey = (await apiKeys.create({ email: "sandbox@localhost", plan: "Enterprise" })).key;
    console.log("created the sandbox API key (Enterprise plan)");
  }
  const userAccounts = accounts.slice(0, ACCOUNT_ROLES.length).filter((_, i) => i !== SETTLEMENT_INDEX && i !== RELAYER_INDEX);
  for (const account of userAccounts) await signers.add(account.address);

  const credentials = {
    baseUrl: service.url,
    apiKey,
    chains: deployments,
    accounts: accounts.slice(0, ACCOUNT_ROLES.length).map((a, i) => ({ address: a.address, privateKey: a.privateKey, role: ACCOUNT_ROLES[i] })),
  };
  fs.mkdirSync(sandboxDir, { recursive: true });
  fs.writeFileSync(credentialsFile, JSON.stringify(credentials, null, 2), { mode: 0o600 });

  printBanner(credentials, credentialsFile);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log("\nstopping…");
    await service.stop();
    await sandbox.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
  await new Promise(() => undefined);
}

function printBanner(
  credentials: { baseUrl: string; apiKey: string; chains: Record<string, { rpcUrl: string }>; accounts: { address: string; role: string }[] },
  file: string,
) {
  const lines = [
    "",
    "Tokenized-Asset Transaction API — sandbox is up",
    `  API            ${credentials.baseUrl}   (try: curl '${credentials.baseUrl}/get-network-info?chainId=aa36a7')`,
    `  API key        ${credentials.apiKey}   (header x-api-key)`,
    ...Object.entries(credentials.chains).map(([id, c]) => `  chain ${id.padEnd(9)}${c.rpcUrl}`),
    "  accounts (Hardhat test mnemonic; each funded with ETH, 1,000,000 USDC and USDT, 100,000 BKN on both chains):",
    ...credentials.accounts.map((a, i) => `    #${i} ${a.address}  ${a.role}`),
    `  everything above, with private keys: ${file}`,
    "  Ctrl-C stops the chains and the service.",
    "",
  ];
  console.log(lines.join("\n"));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
