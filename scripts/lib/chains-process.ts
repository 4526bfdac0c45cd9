import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import type { EIP1193Provider, HardhatRuntimeEnvironment } from "hardhat/types";
import { blockTimeMs, switchMining, type LocalChain } from "./local-chain";
import { testAccounts, type LocalDeployment, type Sandbox, type SandboxOptions } from "./sandbox";

/**
 * The sandbox's chains in a process of their own (chains-child.ts), reached over HTTP JSON-RPC as a deployment reaches
 * its nodes: `npm start` runs them so, and so do the benches that compare the service with the chain, so that no chain
 * work shares the service's event loop. Same deployments and accounts as createSandbox; `provider` and `setBlockTime`
 * of each chain go over HTTP too. The child's set-up lines go to `log`; it ends with `close()`, and by itself when
 * this process is gone (its IPC channel closes).
 */
export async function createSandboxProcess(
  hre: HardhatRuntimeEnvironment,
  options: SandboxOptions,
): Promise<Sandbox & { pid: number }> {
  const { log, ...childOptions } = options;
  const child = spawn(
    process.execPath,
    ["-r", "ts-node/register/transpile-only", path.join(__dirname, "chains-child.ts")],
    {
      cwd: path.join(__dirname, "..", ".."),
      env: { ...process.env, TS_NODE_TRANSPILE_ONLY: "true", TAK_SANDBOX_CHAINS: JSON.stringify(childOptions) },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    },
  );
  const described = await readyLine(child, log);
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

/** The child's JSON line once its chains are up (or its output, when it exits first); its other lines go to `log`. */
function readyLine(child: ChildProcess, log?: (line: string) => void): Promise<Described> {
  return new Promise((resolve, reject) => {
    let pending = "";
    let err = "";
    let ready = false;
    child.stderr!.on("data", (chunk: Buffer) => {
      err = (err + chunk.toString()).slice(-20_000);
      if (ready) process.stderr.write(chunk); // after the start, whatever goes wrong in the chains is shown
    });
    child.stdout!.on("data", (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) {
        if (!ready && line.startsWith("{") && line.includes('"ready"')) {
          ready = true;
          resolve(JSON.parse(line) as Described);
        } else log?.(line);
      }
    });
    child.once("exit", (code) => {
      if (!ready)
        reject(new Error(`the chains process exited (${code}) before its chains were up:\n${err.slice(-2000)}`));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
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
