import path from "node:path";
import hre from "hardhat";
import { blockTimeMs } from "./lib/local-chain";
import {
  localBlockTime,
  onStopSignal,
  printServiceBanner,
  startSandboxChains,
  startSandboxService,
} from "./lib/sandbox-service";

/**
 * `npm start`: `npm run chains` and `npm run service` in one command. Two local chains with the sandbox's chain ids,
 * the suite deployed on both, the well-known test accounts funded (in a child process of their own, reached over HTTP
 * JSON-RPC as a deployment reaches its nodes: no chain work on the service's event loop), and the service in sandbox
 * mode on the embedded database in this process. Prints what a newcomer needs and writes it to
 * <DATA_DIR>/sandbox/dev-credentials.json. Ctrl-C (or SIGTERM) stops both.
 */
async function main() {
  const dataDir = path.resolve(process.env.DATA_DIR ?? ".data");
  const blockTime = localBlockTime(process.env.LOCAL_BLOCK_TIME, blockTimeMs);
  const sandbox = await startSandboxChains(hre, dataDir, blockTime, { ownProcess: true });
  const { service, credentials, credentialsFile } = await startSandboxService({
    dataDir,
    deploymentsDir: sandbox.deploymentsDir,
    blockTime,
    chains: [sandbox.sepolia, sandbox.baseSepolia].map((c) => ({ chainId: c.chainId, url: c.url })),
    accounts: sandbox.accounts,
  });
  printServiceBanner(credentials, credentialsFile, "the chains and the service");
  onStopSignal(async () => {
    await service.stop();
    await sandbox.close();
  });
  await new Promise(() => undefined);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
