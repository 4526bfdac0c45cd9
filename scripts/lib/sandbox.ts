import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { HDNodeWallet, JsonRpcProvider, Mnemonic, NonceManager, Wallet, parseUnits } from "ethers";
import type { Deployment } from "../../service/chains/deployments";
import { BKN__factory, USDC__factory, USDT__factory } from "../../typechain-types";
import { deploySuite } from "./deploy-suite";
import { startLocalChain, type LocalChain } from "./local-chain";

/** The sandbox's two chains: Sepolia for tokenization and STOs, Base Sepolia for agents and x402 USDC. */
export const SANDBOX_CHAIN_IDS = { sepolia: 11155111, baseSepolia: 84532 } as const;

/** Roles of the well-known Hardhat accounts in the sandbox (index = account number). */
export const ACCOUNT_ROLES = [
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
export const SETTLEMENT_INDEX = 8;
export const RELAYER_INDEX = 9;
export const FUNDING = { USDC: parseUnits("1000000", 6), USDT: parseUnits("1000000", 6), BKN: parseUnits("100000", 18) };

export interface Sandbox {
  sepolia: LocalChain;
  baseSepolia: LocalChain;
  deploymentsDir: string;
  deployments: Record<number, Deployment>;
  /** The well-known Hardhat accounts with their private keys. */
  accounts: Wallet[];
  close(): Promise<void>;
}

export interface SandboxOptions {
  deploymentsDir: string;
  /** 0 (default) picks free ports. */
  ports?: { sepolia?: number; baseSepolia?: number };
  /** How many accounts get USDC, USDT and BKN (default: the ten with roles). */
  fundAccounts?: number;
  log?: (line: string) => void;
}

/** The well-known Hardhat test accounts (same mnemonic as every Hardhat chain). */
export function testAccounts(hre: HardhatRuntimeEnvironment, count = 20): Wallet[] {
  const cfg = hre.config.networks.hardhat.accounts as { mnemonic: string; path: string };
  const mnemonic = Mnemonic.fromPhrase(cfg.mnemonic);
  return Array.from({ length: count }, (_, i) => new Wallet(HDNodeWallet.fromMnemonic(mnemonic, `${cfg.path}/${i}`).privateKey));
}

/**
 * Starts both local chains in this process, deploys the suite on each (account #0) and funds the accounts with
 * USDC, USDT and BKN. Used by `npm start`, the tests and the benchmarks.
 */
export async function createSandbox(hre: HardhatRuntimeEnvironment, options: SandboxOptions): Promise<Sandbox> {
  const log = options.log ?? (() => undefined);
  const accounts = testAccounts(hre);
  const sepolia = await startLocalChain(hre, { chainId: SANDBOX_CHAIN_IDS.sepolia, port: options.ports?.sepolia ?? 0 });
  const baseSepolia = await startLocalChain(hre, { chainId: SANDBOX_CHAIN_IDS.baseSepolia, port: options.ports?.baseSepolia ?? 0 });
  const deployments: Record<number, Deployment> = {};
  for (const chain of [sepolia, baseSepolia]) {
    const provider = new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true, cacheTimeout: -1 });
    const deployer = new NonceManager(accounts[0].connect(provider));
    const { deployment } = await deploySuite(deployer, { deploymentsDir: options.deploymentsDir, log });
    await fund(deployer, deployment, accounts.slice(0, options.fundAccounts ?? ACCOUNT_ROLES.length));
    provider.destroy();
    deployments[chain.chainId] = deployment;
  }
  return {
    sepolia,
    baseSepolia,
    deploymentsDir: options.deploymentsDir,
    deployments,
    accounts,
    close: async () => {
      await sepolia.close();
      await baseSepolia.close();
    },
  };
}

async function fund(deployer: NonceManager, deployment: Deployment, accounts: Wallet[]) {
  const tokens = [
    [USDC__factory.connect(deployment.contracts.USDC, deployer), FUNDING.USDC],
    [USDT__factory.connect(deployment.contracts.USDT, deployer), FUNDING.USDT],
    [BKN__factory.connect(deployment.contracts.BKN, deployer), FUNDING.BKN],
  ] as const;
  for (const account of accounts) {
    for (const [token, amount] of tokens) {
      if ((await token.balanceOf(account.address)) < amount) await (await token.mint(account.address, amount)).wait();
    }
  }
}
