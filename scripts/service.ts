import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import { JsonRpcProvider } from "ethers";
import { testAccounts } from "./lib/sandbox";
import {
  chainsFilePath,
  onStopSignal,
  printServiceBanner,
  startSandboxService,
  type SandboxChainsFile,
} from "./lib/sandbox-service";

/**
 * `npm run service`: the sandbox service alone, against the chains `npm run chains` runs (read from
 * <DATA_DIR>/sandbox/chains.json). Restart it as often as needed: batches in flight resume, the chains and every record
 * stay. Ctrl-C stops the service only.
 */
async function main() {
  const dataDir = path.resolve(process.env.DATA_DIR ?? ".data");
  const chainsFile = chainsFilePath(dataDir);
  if (!fs.existsSync(chainsFile))
    throw new Error(
      `No local chains: ${chainsFile} is missing. Run \`npm run chains\` first (or \`npm start\` for both).`,
    );
  const file = JSON.parse(fs.readFileSync(chainsFile, "utf8")) as SandboxChainsFile;
  for (const [chainId, { rpcUrl }] of Object.entries(file.chains)) {
    const provider = new JsonRpcProvider(rpcUrl, Number(chainId), { staticNetwork: true });
    try {
      await provider.getBlockNumber();
    } catch {
      throw new Error(`The local chain ${chainId} at ${rpcUrl} does not answer: is \`npm run chains\` still running?`);
    } finally {
      provider.destroy();
    }
  }
  const { service, credentials, credentialsFile } = await startSandboxService({
    dataDir,
    deploymentsDir: file.deploymentsDir,
    blockTime: file.blockTime,
    chains: Object.entries(file.chains).map(([chainId, c]) => ({ chainId: Number(chainId), url: c.rpcUrl })),
    accounts: testAccounts(hre),
  });
  printServiceBanner(credentials, credentialsFile, "the service (the chains keep running)");
  onStopSignal(() => service.stop());
  await new Promise(() => undefined);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
