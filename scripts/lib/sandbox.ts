import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { HDNodeWallet, JsonRpcProvider, Mnemonic, NonceManager, Wallet, parseUnits } from "ethers";
import type { Deployment } from "../../service/chains/deployments";
import { BKN__factory } from "../../typechain-types/factories/contracts/payments/BKN__factory";
import { USDC__factory } from "../../typechain-types/factories/contracts/payments/USDC__factory";
import { USDT__factory } from "../../typechain-types/factories/contracts/payments/USDT__factory";
import { deploySuite } from "./deploy-suite";
import { setupRamsRoles } from "./rams-roles";
import { blockTimeMs, startLocalChain, type LocalChain } from "./local-chain";

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
  "spare; RAMS compliance-provider owner (grant / revoke principal) on Sepolia",
  "spare; RAMS enforcer (freeze / unfreeze agents) on Sepolia",
  "x402 settlement wallet and payee (service-held)",
  "relayer (service-held)",
];
export const SETTLEMENT_INDEX = 8;
export const RELAYER_INDEX = 9;
/** RAMS roles on the Sepolia chain; #0, the deployer, is the registry admin (the admin cannot also be the enforcer). */
export const RAMS_COMPLIANCE_OWNER_INDEX = 6;
export const RAMS_ENFORCER_INDEX = 7;
export const FUNDING = {
  USDC: parseUnits("1000000", 6),
  USDT: parseUnits("1000000", 6),
  BKN: parseUnits("100000", 18),
};

/** A local chain's deployment: the suite deploys its own payment assets there, so both always exist. */
export type LocalDeployment = Deployment & { contracts: Deployment["contracts"] & { USDC: string; USDT: string } };

export interface Sandbox {
  sepolia: LocalChain;
  baseSepolia: LocalChain;
  deploymentsDir: string;
  deployments: Record<number, LocalDeployment>;
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
  /**
   * Seconds between blocks once the sandbox is up (`LOCAL_BLOCK_TIME`): 0 (default) mines each transaction at once;
   * more mines on an interval, like a real network. Deploying and funding always run with instant mining.
   */
  blockTime?: number;
  /** Under instant mining, an empty block once the chain has been idle this many seconds (default 1; 0 = never). */
  idleBlockTime?: number;
  log?: (line: string) => void;
}

/** The well-known Hardhat test accounts (same mnemonic as every Hardhat chain). */
export function testAccounts(hre: HardhatRuntimeEnvironment, count = 20): Wallet[] {
  const cfg = hre.config.networks.hardhat.accounts as { mnemonic: string; path: string };
  const mnemonic = Mnemonic.fromPhrase(cfg.mnemonic);
  return Array.from(
    { length: count },
    (_, i) => new Wallet(HDNodeWallet.fromMnemonic(mnemonic, `${cfg.path}/${i}`).privateKey),
  );
}

/**
 * Starts both local chains in this process, deploys the suite on each (account #0) and funds the accounts with
 * USDC, USDT and BKN, then switches to interval mining when `blockTime` asks for it. Both chains keep the wall
 * clock's time (see {@link startLocalChain}); under instant mining an idle chain still gets an empty block every
 * `idleBlockTime` seconds, so its latest block never falls behind the clock either. Used by `npm start`, the tests
 * and the benchmarks.
 */
export async function createSandbox(hre: HardhatRuntimeEnvironment, options: SandboxOptions): Promise<Sandbox> {
  const log = options.log ?? (() => undefined);
  blockTimeMs(options.blockTime ?? 0); // a bad block time fails before anything starts
  const accounts = testAccounts(hre);
  const idleBlockTime = options.idleBlockTime ?? 1;
  const sepolia = await startLocalChain(hre, {
    chainId: SANDBOX_CHAIN_IDS.sepolia,
    port: options.ports?.sepolia ?? 0,
    idleBlockTime,
  });
  const baseSepolia = await startLocalChain(hre, {
    chainId: SANDBOX_CHAIN_IDS.baseSepolia,
    port: options.ports?.baseSepolia ?? 0,
    idleBlockTime,
  });
  const deployments: Record<number, LocalDeployment> = {};
  // Both chains are set up side by side: start-up is faster, and both end it at the same moment.
  await Promise.all(
    [sepolia, baseSepolia].map(async (chain) => {
      const provider = new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true, cacheTimeout: -1 });
      try {
        const deployer = new NonceManager(accounts[0].connect(provider));
        const { deployment } = await deploySuite(deployer, {
          deploymentsDir: options.deploymentsDir,
          paymentAssets: "local",
          log,
        });
        const local = deployment as LocalDeployment;
        await fund(deployer, local, accounts.slice(0, options.fundAccounts ?? ACCOUNT_ROLES.length));
        if (chain.chainId === SANDBOX_CHAIN_IDS.sepolia) {
          await setupRamsRoles(
            deployer,
            deployment,
            {
              enforcer: accounts[RAMS_ENFORCER_INDEX].address,
              complianceOwner: accounts[RAMS_COMPLIANCE_OWNER_INDEX].address,
            },
            log,
          );
        }
        deployments[chain.chainId] = local;
      } finally {
        provider.destroy();
      }
    }),
  );
  if (options.blockTime) {
    for (const chain of [sepolia, baseSepolia]) await chain.setBlockTime(options.blockTime);
    log(`local chains mine a block every ${options.blockTime} s`);
  } else {
    // Hand both chains over with a head stamped now (one may have waited for the other to finish its set-up).
    for (const chain of [sepolia, baseSepolia]) await chain.provider.request({ method: "evm_mine", params: [] });
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

async function fund(deployer: NonceManager, deployment: LocalDeployment, accounts: Wallet[]) {
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
