import hre from "hardhat";
import { createSandbox } from "../scripts/lib/sandbox";

/**
 * The sandbox's two chains in a process of their own (bench/chains-process.ts starts it): created as the tests and
 * `npm start` create them, described on stdout as one JSON line, stopped on SIGTERM. Options come as BENCH_CHAINS (JSON).
 */
async function main() {
  const options = JSON.parse(process.env.BENCH_CHAINS ?? "{}") as {
    deploymentsDir: string;
    blockTime?: number;
    idleBlockTime?: number;
    fundAccounts?: number;
  };
  const sandbox = await createSandbox(hre, options);
  process.stdout.write(
    JSON.stringify({
      ready: true,
      chains: [sandbox.sepolia, sandbox.baseSepolia].map((c) => ({
        chainId: c.chainId,
        url: c.url,
        port: c.port,
        blockTime: c.blockTime,
      })),
      deployments: sandbox.deployments,
    }) + "\n",
  );
  const stop = () => void sandbox.close().finally(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("disconnect", stop);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
