import path from "node:path";
import { subtask } from "hardhat/config";
import { TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD, TASK_TEST_GET_TEST_FILES } from "hardhat/builtin-tasks/task-names";
import type { HardhatUserConfig } from "hardhat/config";
import "@nomicfoundation/hardhat-toolbox";
import { etherscanConfig } from "./scripts/lib/verify-config";
import { longestFirst, selectedTiers, tierOf } from "./test/tiers";

/** The compiler comes from the `solc` npm package: Hardhat cannot download compilers on offline machines. */
const SOLC_VERSION = "0.8.28";

subtask(TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD).setAction(async (args: { solcVersion: string }, _hre, runSuper) => {
  if (args.solcVersion !== SOLC_VERSION) return runSuper(args);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require("solc");
  return {
    compilerPath: path.join(path.dirname(require.resolve("solc/package.json")), "soljson.js"),
    isSolcJs: true,
    version: SOLC_VERSION,
    longVersion: solc.version(),
  };
});

/**
 * `hardhat test` with no files runs the tiers TEST_TIER names (test/tiers.ts), or `fast`, which is `npm test`, the
 * longest files first.
 */
subtask(TASK_TEST_GET_TEST_FILES).setAction(async (args: { testFiles: string[] }, _hre, runSuper) => {
  const files: string[] = await runSuper(args);
  if (args.testFiles.length) return files;
  const tiers = selectedTiers();
  return longestFirst(
    files.filter((file) => tiers.includes(tierOf(file))),
    __dirname,
  );
});

/**
 * Test files run in TEST_JOBS worker processes (default 3: most of the suite waits on the child processes and chains it
 * starts, so three workers keep two cores busy; `npm test` took 4 m 26 s on two, 3 m 30 s on three). TEST_JOBS=1 runs
 * them in this process, one after another.
 * Against another network (`--network localhost`) the files always run here in order: they share that one node and
 * its snapshots, and Mocha's workers would not be given the network (they read HARDHAT_NETWORK only).
 */
function testWorkers(): { parallel?: boolean; jobs?: number } {
  const jobs = Number(process.env.TEST_JOBS ?? 3);
  if (!Number.isInteger(jobs) || jobs < 1)
    throw new Error(`TEST_JOBS must be a whole number of workers, not ${process.env.TEST_JOBS}`);
  const otherNetwork = process.argv.includes("--network") || (process.env.HARDHAT_NETWORK ?? "hardhat") !== "hardhat";
  return jobs > 1 && !otherNetwork ? { parallel: true, jobs } : {};
}

/** TEST_TIMINGS=<file> records each test file's time there (test/helpers/file-timings.ts). */
const fileTimings = () =>
  process.env.TEST_TIMINGS ? { require: [path.join(__dirname, "test/helpers/file-timings.ts")] } : {};

/**
 * A network's RPC URL for the deploy and verify scripts: RPC_URL_<chainId>, the variable the service reads (its first
 * URL when it lists several), so one .env serves both.
 */
const rpcUrl = (chainId: number) => (process.env[`RPC_URL_${chainId}`] ?? "").split(",")[0].trim();

/** A deployer key for the public testnets, read from the environment; never committed. */
const deployerAccounts = process.env.DEPLOYER_PRIVATE_KEY ? [process.env.DEPLOYER_PRIVATE_KEY] : [];

const config: HardhatUserConfig = {
  solidity: {
    version: SOLC_VERSION,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: "cancun",
      /** Storage layouts in the build info, for OpenZeppelin's upgrades-core (test/contracts/tokenization/storage-layout.test.ts). */
      outputSelection: { "*": { "*": ["storageLayout"] } },
    },
  },
  networks: {
    hardhat: { chainId: 31337 },
    /** A standalone `npx hardhat node` on any port (HARDHAT_NODE_URL); the contract suite runs on it with `--network localhost`. */
    localhost: { url: process.env.HARDHAT_NODE_URL ?? "http://127.0.0.1:8545", chainId: 31337 },
    localSepolia: { url: process.env.SEPOLIA_LOCAL_RPC_URL ?? "http://127.0.0.1:8545", chainId: 11155111 },
    localBaseSepolia: { url: process.env.BASE_SEPOLIA_LOCAL_RPC_URL ?? "http://127.0.0.1:8546", chainId: 84532 },
    sepolia: { url: rpcUrl(11155111), chainId: 11155111, accounts: deployerAccounts },
    baseSepolia: { url: rpcUrl(84532), chainId: 84532, accounts: deployerAccounts },
    base: { url: rpcUrl(8453), chainId: 8453, accounts: deployerAccounts },
  },
  mocha: { timeout: 120_000, ...testWorkers(), ...fileTimings() },
  typechain: { outDir: "typechain-types", target: "ethers-v6" },
  gasReporter: { enabled: false },
  /** `npx hardhat run scripts/verify.ts --network sepolia|baseSepolia` (ETHERSCAN_API_KEY); see scripts/lib/verify-config.ts. */
  etherscan: etherscanConfig(),
  sourcify: { enabled: false },
};

export default config;
