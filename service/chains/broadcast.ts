import type { JsonRpcProvider } from "ethers";

/** A predecessor nonce is not in the node yet (another request or instance took it a moment earlier). */
const NONCE_AHEAD = /nonce too high|transactions can't be queued/i;
const NONCE_AHEAD_WAIT_MS = 60_000;

let nonceAheadRetries = 0;
/** How many times this process re-sent a transaction the node refused as "nonce too high" (exposed in /metrics). */
export const nonceAheadRetryCount = () => nonceAheadRetries;

/**
 * Sends signed bytes. Returns undefined when the node has the transaction (now, or already: "already known", or
 * mined), else the node's refusal. A nonce ahead of the account's next one is retried for a while: transactions
 * signed concurrently by one service wallet can reach the node out of order, and nodes that do not queue them
 * (Hardhat automine) refuse the early one.
 */
export async function sendRaw(provider: JsonRpcProvider, signedRaw: string, hash: string): Promise<string | undefined> {
  const deadline = Date.now() + NONCE_AHEAD_WAIT_MS;
  // Short waits: the predecessor is usually one commit away (another instance's), and every wait here holds this
  // wallet's later nonces too.
  for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
    try {
      await provider.send("eth_sendRawTransaction", [signedRaw]);
      return undefined;
    } catch (error) {
      const [known, receipt] = await Promise.all([
        provider.getTransaction(hash).catch(() => null),
        provider.getTransactionReceipt(hash).catch(() => null),
      ]);
      if (known || receipt) return undefined;
      const e = error as { error?: { message?: string }; shortMessage?: string; message?: string };
      const refusal = e.error?.message ?? e.shortMessage ?? e.message ?? String(error);
      if (!NONCE_AHEAD.test(refusal) || Date.now() > deadline) return refusal;
      nonceAheadRetries++;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
