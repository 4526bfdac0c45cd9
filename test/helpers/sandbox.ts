import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import hre from "hardhat";
import { JsonRpcProvider } from "ethers";
import type { LocalChain } from "../../scripts/lib/local-chain";
import {
  createSandbox,
  testAccounts as accountsOf,
  type Sandbox,
  type SandboxOptions,
} from "../../scripts/lib/sandbox";

export { RELAYER_INDEX, SETTLEMENT_INDEX, type Sandbox } from "../../scripts/lib/sandbox";

let shared: Promise<Sandbox> | undefined;

/** One sandbox per test process (chains on ephemeral ports), shared by every test file; each file starts its own service. */
export function getSandbox(): Promise<Sandbox> {
  shared ??= createSandbox(hre, { deploymentsDir: fs.mkdtempSync(path.join(os.tmpdir(), "tak-deployments-")) });
  return shared;
}

/**
 * A sandbox of the caller's own (fresh chains on ephemeral ports, its own deployments directory), for tests that
 * need chains nobody else has moved in time or switched to interval mining. The caller closes it.
 */
export async function createOwnSandbox(
  options: Omit<SandboxOptions, "deploymentsDir" | "ports"> = {},
): Promise<Sandbox> {
  const deploymentsDir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-deployments-"));
  const sandbox = await createSandbox(hre, { ...options, deploymentsDir });
  return {
    ...sandbox,
    close: async () => {
      await sandbox.close();
      fs.rmSync(deploymentsDir, { recursive: true, force: true });
    },
  };
}

/** The well-known Hardhat test accounts with private keys. */
export const testAccounts = (count?: number) => accountsOf(hre, count);

/** A JSON-RPC provider on one of the sandbox chains (no read cache: tests read right after writing). */
export function providerFor(chain: LocalChain): JsonRpcProvider {
  return new JsonRpcProvider(chain.url, chain.chainId, { staticNetwork: true, pollingInterval: 100, cacheTimeout: -1 });
}
