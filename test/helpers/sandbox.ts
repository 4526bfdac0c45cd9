import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import hre from "hardhat";
import { HDNodeWallet, JsonRpcProvider, Mnemonic, NonceManager, Wallet, parseUnits } from "ethers";
import { deploySuite } from "../../scripts/lib/deploy-suite";
import { startLocalChain, type LocalChain } from "../../scripts/lib/local-chain";
import type { Deployment } from "../../service/chains/deployments";
import { BKN__factory, USDC__factory, USDT__factory } from "../../typechain-types";

/** Two in-process chains with the sandbox chain ids on ephemeral ports, the suite deployed and accounts funded. */
export interface Sandbox {
  sepolia: LocalChain;
  baseSepolia: LocalChain;
  deploymentsDir: string;
  deployments: Record<number, Deployment>;
  /** The well-known Hardhat accounts with private keys: #0 deployer, #8 x402 settlement, #9 relayer. */
  accounts: Wallet[];
}

export const SETTLEMENT_INDEX = 8;
export const RELAYER_INDEX = 9;

let shared: Promise<Sandbox> | undefined;

/** One sandbox per test process, shared by every test file (each file starts its own service and database). */
export function getSandbox(): Promise<Sandbox> {
  shared ??= createSandbox();
  return shared;
}

export function testAccounts(count = 20): Wallet[] {
  const cfg = hre.config.networks.hardhat.accounts as { mnemonic: string; path: string };
  const mnemonic = Mnemonic.fromPhrase(cfg.mnemonic);
  return Array.from({ length: count }, (_, i) => new Wallet(HDNodeWallet.fromMnemonic(mnemonic, `${cfg.path}/${i}`).privateKey));
}

async function createSandbox(): Promise<Sandbox> {
  const sepolia = await startLocalChain(hre, { chainId: 11155111 });
  const baseSepolia = await startLocalChain(hre, { chainId: 84532 });
  const deploymentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-deployments-"));
  const accounts = testAccounts();
  const deployments: Record<number, Deployment> = {};
  for (const chain of [sepolia, baseSepolia]) {
    const provider = new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true });
    const deployer = new NonceManager(accounts[0].connect(provider));
    const { deployment } = await deploySuite(deployer, { deploymentsDir });
    const usdc = USDC__factory.connect(deployment.contracts.USDC, deployer);
    const usdt = USDT__factory.connect(deployment.contracts.USDT, deployer);
    const bkn = BKN__factory.connect(deployment.contracts.BKN, deployer);
    for (const account of accounts.slice(0, 10)) {
      await (await usdc.mint(account.address, parseUnits("1000000", 6))).wait();
      await (await usdt.mint(account.address, parseUnits("1000000", 6))).wait();
      await (await bkn.mint(account.address, parseUnits("100000", 18))).wait();
    }
    provider.destroy();
    deployments[chain.chainId] = deployment;
  }
  return { sepolia, baseSepolia, deploymentsDir, deployments, accounts };
}

/** A JSON-RPC provider on one of the sandbox chains. */
export function providerFor(chain: LocalChain): JsonRpcProvider {
  return new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true, pollingInterval: 100, cacheTimeout: -1 });
}
