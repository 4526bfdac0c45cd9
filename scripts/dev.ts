import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import { HDNodeWallet, JsonRpcProvider, Mnemonic, NonceManager, Wallet, parseUnits } from "ethers";
import { loadConfig } from "../service/config";
import { startService } from "../service/server";
import { BKN__factory, USDC__factory, USDT__factory } from "../typechain-types";
import { deploySuite } from "./lib/deploy-suite";
import { startLocalChain, type LocalChain } from "./lib/local-chain";

/**
 * `npm start`: two local chains with the sandbox's chain ids, the suite deployed on both, the well-known test accounts
 * funded, and the service in sandbox mode on the embedded database. Prints what a newcomer needs and writes it to
 * <DATA_DIR>/sandbox/dev-credentials.json. Ctrl-C stops everything.
 */

const LOCAL_CHAINS = [
  { chainId: 11155111, label: "Sepolia (tokenization, STO)", port: Number(process.env.LOCAL_SEPOLIA_PORT ?? 8545) },
  { chainId: 84532, label: "Base Sepolia (x402 USDC)", port: Number(process.env.LOCAL_BASE_SEPOLIA_PORT ?? 8546) },
];

/** Roles of the well-known Hardhat accounts in the sandbox. */
const ACCOUNT_ROLES = [
  "deployer (owns the local USDC, USDT, BKN)",
  "issuer / tokenizer",
  "investor",
  "investor",
  "investor",
  "investor",
  "spare",
  "spare",
  "x402 settlement wallet and payee (service-held)",
  "relayer (service-held)",
];
const SETTLEMENT_INDEX = 8;
const RELAYER_INDEX = 9;
const FUNDING = { USDC: parseUnits("1000000", 6), USDT: parseUnits("1000000", 6), BKN: parseUnits("100000", 18) };

function testAccounts(count: number): Wallet[] {
  const accounts = hre.config.networks.hardhat.accounts as { mnemonic: string; path: string };
  const mnemonic = Mnemonic.fromPhrase(accounts.mnemonic);
  return Array.from({ length: count }, (_, i) => {
    const hd = HDNodeWallet.fromMnemonic(mnemonic, `${accounts.path}/${i}`);
    return new Wallet(hd.privateKey);
  });
}

async function fundAccounts(chain: LocalChain, deployer: Wallet, contracts: { USDC: string; USDT: string; BKN: string }, accounts: Wallet[]) {
  const provider = new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true });
  const signer = new NonceManager(deployer.connect(provider));
  const usdc = USDC__factory.connect(contracts.USDC, signer);
  const usdt = USDT__factory.connect(contracts.USDT, signer);
  const bkn = BKN__factory.connect(contracts.BKN, signer);
  for (const account of accounts) {
    const a = account.address;
    if ((await usdc.balanceOf(a)) < FUNDING.USDC) await (await usdc.mint(a, FUNDING.USDC)).wait();
    if ((await usdt.balanceOf(a)) < FUNDING.USDT) await (await usdt.mint(a, FUNDING.USDT)).wait();
    if ((await bkn.balanceOf(a)) < FUNDING.BKN) await (await bkn.mint(a, FUNDING.BKN)).wait();
  }
  provider.destroy();
}

async function main() {
  const dataDir = path.resolve(process.env.DATA_DIR ?? ".data");
  const sandboxDir = path.join(dataDir, "sandbox");
  const deploymentsDir = path.join(sandboxDir, "deployments");
  const credentialsFile = path.join(sandboxDir, "dev-credentials.json");
  const accounts = testAccounts(ACCOUNT_ROLES.length);
  const deployer = accounts[0];

  const chains: LocalChain[] = [];
  for (const spec of LOCAL_CHAINS) {
    const chain = await startLocalChain(hre, { chainId: spec.chainId, port: spec.port });
    chains.push(chain);
    console.log(`chain ${spec.chainId} (${spec.label}) at ${chain.url}`);
  }

  const deployments: Record<string, { rpcUrl: string; deployment: unknown }> = {};
  for (const chain of chains) {
    const provider = new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true });
    const { deployment } = await deploySuite(new NonceManager(deployer.connect(provider)), {
      deploymentsDir,
      log: (line) => console.log(line),
    });
    provider.destroy();
    await fundAccounts(chain, deployer, deployment.contracts, accounts);
    deployments[String(chain.chainId)] = { rpcUrl: chain.url, deployment };
  }

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ENVIRONMENT: "sandbox",
    DATA_DIR: dataDir,
    DEPLOYMENTS_DIR: deploymentsDir,
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
  const userAccounts = accounts.filter((_, i) => i !== SETTLEMENT_INDEX && i !== RELAYER_INDEX);
  for (const account of userAccounts) await signers.add(account.address);

  const credentials = {
    baseUrl: service.url,
    apiKey,
    chains: Object.fromEntries(Object.entries(deployments).map(([id, d]) => [id, d])),
    accounts: accounts.map((a, i) => ({ address: a.address, privateKey: a.privateKey, role: ACCOUNT_ROLES[i] })),
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
    for (const chain of chains) await chain.close();
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
