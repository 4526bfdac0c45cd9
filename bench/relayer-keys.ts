import { toQuantity, Wallet, parseEther } from "ethers";
import { RELAYER_INDEX, type Sandbox } from "../scripts/lib/sandbox";

/**
 * How many keys the relayer sends relayed operations with in the volume, paid-relay and scale-out parts: its own and
 * BENCH_RELAYER_KEYS − 1 more (RELAYER_EXTRA_PRIVATE_KEYS), default 4. One key's transactions reach the chain one nonce
 * after the other; 1 measures the relayer with a single key.
 */
export const BENCH_RELAYER_KEYS = Math.max(1, Number(process.env.BENCH_RELAYER_KEYS ?? 4));

const extraKeys = new WeakMap<Sandbox, Wallet[]>();

/** Creates the relayer's extra keys for this sandbox and gives each 100 ETH on both chains (once per sandbox). */
export async function fundRelayerKeys(sandbox: Sandbox): Promise<void> {
  if (extraKeys.has(sandbox)) return;
  const keys = Array.from({ length: BENCH_RELAYER_KEYS - 1 }, () => new Wallet(Wallet.createRandom().privateKey));
  for (const chain of [sandbox.sepolia, sandbox.baseSepolia]) {
    for (const key of keys)
      await chain.provider.request({
        method: "hardhat_setBalance",
        params: [key.address, toQuantity(parseEther("100"))],
      });
  }
  extraKeys.set(sandbox, keys);
}

/** RELAYER_EXTRA_PRIVATE_KEYS for a service on this sandbox, when fundRelayerKeys gave it any. */
export function relayerKeysEnv(sandbox: Sandbox): Record<string, string> {
  const keys = extraKeys.get(sandbox) ?? [];
  return keys.length ? { RELAYER_EXTRA_PRIVATE_KEYS: keys.map((k) => k.privateKey).join(",") } : {};
}

/** Every address the relayer sends from on this sandbox, its own first. */
export function relayerAddresses(sandbox: Sandbox): string[] {
  return [sandbox.accounts[RELAYER_INDEX].address, ...(extraKeys.get(sandbox) ?? []).map((k) => k.address)];
}
