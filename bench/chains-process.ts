import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import type { EIP1193Provider, HardhatRuntimeEnvironment } from "hardhat/types";
import { blockTimeMs, switchMining, type LocalChain } from "../scripts/lib/local-chain";
import { testAccounts, type LocalDeployment, type Sandbox, type SandboxOptions } from "../scripts/lib/sandbox";

/**
 * The sandbox's chains in a process of their own, reached over HTTP JSON-RPC as a deployment reaches its nodes (and as
 * `npm start`'s service reaches its chains): the benches that compare the service with the chain measure what a
 * deployment gets, with no chain work sharing the service's event loop. Same deployments and accounts as createSandbox;
 * `provider` and `setBlockTime` of each chain go over HTTP too.
 */
export async function createSandboxProcess(
  hre: HardhatRuntimeEnvironment,
  options: Omit<SandboxOptions, "log" | "ports">,
): Promise<Sandbox & { pid: number }> {
  const child = spawn(
    process.execPath,
    ["-r", "ts-node/register/transpile-only", path.join(__dirname, "chains-child.ts")],
    {
      cwd: path.join(__dirname, ".."),
      env: { ...process.env, TS_NODE_TRANSPILE_ONLY: "true", BENCH_CHAINS: JSON.stringify(options) },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const described = await readyLine(child);
  const [sepolia, baseSepolia] = described.chains.map((c) => remoteChain(c.chainId, c.url, c.port, c.blockTime));
  return {
    sepolia,
    baseSepolia,
    deploymentsDir: options.deploymentsDir,
    deployments: described.deployments,
    accounts: testAccounts(hre),
    close: () => stopChild(child),
    pid: child.pid!,
  };
}

interface Described {
  chains: { chainId: number; url: string; port: number; blockTime: number }[];
  deployments: Record<number, LocalDeployment>;
}

/** The child's JSON line once its chains are up (or its output, when it exits first). */
function readyLine(child: ChildProcess): Promise<Described> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((l) => l.startsWith("{") && l.includes('"ready"'));
      if (line) resolve(JSON.parse(line) as Described);
    });
    child.once("exit", (code) =>
      reject(new Error(`the chains process exited (${code}) before its chains were up:\n${err.slice(-2000)}`)),
    );
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

/** A chain of the child process: its EIP-1193 provider and block-time switch over HTTP JSON-RPC. */
function remoteChain(chainId: number, url: string, port: number, blockTime: number): LocalChain {
  let id = 0;
  const provider = {
    async request({ method, params }: { method: string; params?: unknown[] }) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params: params ?? [] }),
      });
      const answer = (await res.json()) as { result?: unknown; error?: { message: string } };
      if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
      return answer.result;
    },
  } as unknown as EIP1193Provider;
  const chain: LocalChain = {
    chainId,
    url,
    port,
    provider,
    blockTime,
    async setBlockTime(seconds: number) {
      chain.blockTime = (await switchMining(provider, blockTimeMs(seconds))) / 1000;
    },
    close: async () => undefined, // the child process closes its chains when it stops
  };
  return chain;
}
