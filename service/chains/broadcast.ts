import type { JsonRpcProvider } from "ethers";
import { broadcastVerdict, type BroadcastVerdict } from "./rpc-errors";

/** A predecessor nonce is not in the node yet (another request or instance took it a moment earlier). */
const NONCE_AHEAD_WAIT_MS = 3_000;

let nonceAheadRetries = 0;
/** How many times this process re-sent a transaction the node refused as "nonce too high" (exposed in /metrics). */
export const nonceAheadRetryCount = () => nonceAheadRetries;

/**
 * The part of a chain's RPC provider that takes signed transactions and answers for them: nonces, the transactions
 * it holds, their receipts, its head. What broadcast() asks of a node; an in-memory one (test/fakes/) passes the same
 * contract tests as an in-process Hardhat chain.
 */
export type ChainNode = Pick<
  JsonRpcProvider,
  "send" | "getTransaction" | "getTransactionReceipt" | "getTransactionCount" | "getBlockNumber"
>;

/**
 * Sends signed bytes and says what the node made of them. "accepted" also when the node
 * refused them but has the transaction anyway ("already known", an answer lost on the way, or mined already). A nonce
 * ahead of the account's next one is retried for a short while: transactions signed concurrently by one service
 * wallet can reach the node out of order, and nodes that do not queue them (Hardhat automine) refuse the early one.
 * Passing RPC failures were already retried by the provider; they come back as "transient", never as a refusal.
 */
export async function broadcast(
  provider: ChainNode,
  signedRaw: string,
  hash: string,
  refusedAhead?: () => void,
): Promise<BroadcastVerdict> {
  const deadline = Date.now() + NONCE_AHEAD_WAIT_MS;
  // Short waits: the predecessor is usually one commit away (another instance's), and every wait here holds this
  // wallet's later nonces too.
  for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
    try {
      await provider.send("eth_sendRawTransaction", [signedRaw]);
      return { kind: "accepted" };
    } catch (error) {
      const verdict = broadcastVerdict(error);
      if (verdict.kind === "accepted") return verdict;
      const [known, receipt] = await Promise.all([
        provider.getTransaction(hash).catch(() => null),
        provider.getTransactionReceipt(hash).catch(() => null),
      ]);
      if (known || receipt) return { kind: "accepted" };
      if (verdict.kind !== "nonce-ahead" || Date.now() > deadline) return verdict;
      nonceAheadRetries++;
      refusedAhead?.();
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
