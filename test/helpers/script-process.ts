import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { trackProcess } from "./processes";

const ROOT = path.resolve(__dirname, "../..");
const CONFIG_VARIABLES = [
  "ENVIRONMENT",
  "HOST",
  "PUBLIC_BASE_URL",
  "DATABASE_URL",
  "DEPLOYMENTS_DIR",
  "ADMIN_TOKEN",
  "RELAYER_PRIVATE_KEY",
  "X402_ENABLED",
  "X402_SETTLEMENT_PRIVATE_KEY",
  "X402_PAYMENT_CHAIN_ID",
  "X402_PAY_TO",
  "X402_FACILITATOR_URL",
  "X402_DISABLED_CHAINS",
  "HARDHAT_NETWORK",
];

/** <DATA_DIR>/sandbox/dev-credentials.json as the sandbox scripts write it. */
export interface Credentials {
  baseUrl: string;
  apiKey: string;
  chains: Record<string, { rpcUrl: string; deployment: { chainId: number; contracts: Record<string, string> } }>;
  accounts: { address: string; privateKey: string; role?: string }[];
}

/**
 * A sandbox script as npm runs it after compiling (`node -r ts-node/register/transpile-only scripts/<name>.ts`: dev.ts
 * for `npm start`, chains.ts, service.ts), as a child process in its own process group, so SIGINT reaches it as Ctrl-C
 * does. The environment is cleaned of every service variable, then given ephemeral ports and the data directory.
 * Tracked (helpers/processes.ts): `after(stopStartedProcesses)` kills its group whatever happened.
 */
export class ScriptProcess {
  readonly child: ChildProcess;
  stdout = "";
  stderr = "";
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  private readonly exited: Promise<void>;
  /** Resolves once every holder of the stdout/stderr pipes (dev.ts included) has gone. */
  readonly closed: Promise<void>;

  constructor(
    dataDir: string,
    readonly script = "scripts/dev.ts",
    extraEnv: Record<string, string> = {},
  ) {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of Object.keys(env)) {
      if (CONFIG_VARIABLES.includes(name) || /^RPC_URL_\d+$/.test(name) || /^RELAYER_PRIVATE_KEY_\d+$/.test(name))
        delete env[name];
    }
    Object.assign(
      env,
      { LOCAL_SEPOLIA_PORT: "0", LOCAL_BASE_SEPOLIA_PORT: "0", PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "warn" },
      extraEnv,
    );
    this.child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", script], {
      cwd: ROOT,
      env: { ...env, TS_NODE_TRANSPILE_ONLY: "true" },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    // Its whole process group ends with the suite (after(stopStartedProcesses)) or with this Mocha process.
    trackProcess(this.child, { group: true });
    this.child.stdout!.on("data", (c: Buffer) => (this.stdout += c.toString()));
    this.child.stderr!.on("data", (c: Buffer) => (this.stderr += c.toString()));
    this.closed = new Promise((resolve) => this.child.on("close", () => resolve()));
    this.exited = new Promise((resolve) =>
      this.child.on("exit", (code, signal) => {
        this.exit = { code, signal };
        resolve();
      }),
    );
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  /** Waits until `ready()` holds; fails at once if the process ends first. */
  async waitFor(what: string, ready: () => boolean, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!ready()) {
      if (!this.alive)
        throw new Error(`${this.script} exited (${JSON.stringify(this.exit)}) before ${what}\n${this.output()}`);
      if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms\n${this.output()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Sends `signal` to the child's whole process group, as a terminal's Ctrl-C does. */
  signalGroup(signal: NodeJS.Signals) {
    if (this.alive && this.child.pid) {
      try {
        process.kill(-this.child.pid, signal);
      } catch {
        // already gone
      }
    }
  }

  /** The pid of the process running the script (npm runs it directly, without a wrapper that outlives it). */
  scriptPid(): number {
    return this.child.pid!;
  }

  /** Resolves true when the process exited within `ms`. */
  async exitedWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const result = await Promise.race([this.exited.then(() => true), timeout]);
    clearTimeout(timer);
    return result;
  }

  output(): string {
    return `--- stdout ---\n${this.stdout.slice(-4000)}\n--- stderr ---\n${this.stderr.slice(-4000)}`;
  }
}
