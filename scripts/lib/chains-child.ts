import hre from "hardhat";
import { createSandbox, type SandboxOptions } from "./sandbox";

/**
 * The sandbox's two chains in a process of their own (chains-process.ts starts it, for `npm start` and the benches):
 * created as the tests and `npm run chains` create them, their set-up's lines on stdout, then one JSON line describing
 * them; stopped on SIGTERM or SIGINT (Ctrl-C signals the whole group), or when the process that started it is gone.
 * Options come as TAK_SANDBOX_CHAINS (JSON).
 */
async function main() {
  const options = JSON.parse(process.env.TAK_SANDBOX_CHAINS ?? "{}") as Omit<SandboxOptions, "log">;
  const sandbox = await createSandbox(hre, { ...options, log: (line) => console.log(line) });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void sandbox.close().finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on("disconnect", stop);
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
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
