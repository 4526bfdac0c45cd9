import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import { blockTimeMs } from "./lib/local-chain";
import {
  blockTimeLine,
  chainsFilePath,
  localBlockTime,
  onStopSignal,
  startSandboxChains,
  writePrivateFile,
  type SandboxChainsFile,
} from "./lib/sandbox-service";

/**
 * `npm run chains`: only the sandbox's local chains (11155111 and 84532) with the suite deployed and the test accounts
 * funded, for `npm run service` to run against, so the service can be restarted without losing the chains. Writes
 * <DATA_DIR>/sandbox/chains.json for it. Ctrl-C stops the chains.
 */
async function main() {
  const dataDir = path.resolve(process.env.DATA_DIR ?? ".data");
  const blockTime = localBlockTime(process.env.LOCAL_BLOCK_TIME, blockTimeMs);
  const sandbox = await startSandboxChains(hre, dataDir, blockTime);
  const file: SandboxChainsFile = {
    pid: process.pid,
    blockTime,
    deploymentsDir: sandbox.deploymentsDir,
    chains: Object.fromEntries(
      [sandbox.sepolia, sandbox.baseSepolia].map((c) => [String(c.chainId), { rpcUrl: c.url }]),
    ),
  };
  const chainsFile = chainsFilePath(dataDir);
  writePrivateFile(chainsFile, JSON.stringify(file, null, 2));
  console.log(
    [
      "",
      "Local chains are up (start the service against them with `npm run service`)",
      ...Object.entries(file.chains).map(([id, c]) => `  chain ${id.padEnd(9)}${c.rpcUrl}`),
      blockTimeLine(blockTime),
      `  deployments    ${sandbox.deploymentsDir}`,
      "  Ctrl-C stops the chains.",
      "",
    ].join("\n"),
  );
  onStopSignal(async () => {
    fs.rmSync(chainsFile, { force: true });
    await sandbox.close();
  });
  await new Promise(() => undefined);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
