import type { JsonRpcProvider } from "ethers";

/** How old a Hardhat node's answer may be: tests and benches switch its mining at run time. */
const HARDHAT_RECHECK_MS = 1_000;
/** After a failed check: one at a time, and asked again after this long. */
const FAILED_RECHECK_MS = 10_000;

/**
 * Whether a node takes a transaction whose nonce is ahead of its sender's next one (it queues it until the gap is
 * filled, as every public network's nodes do) or refuses it ("nonce too high": Hardhat while it mines each transaction
 * at once). A wallet's broadcasts leave in waves only to a node that queues (chains/nonce-order.ts): a node that
 * refuses runs a batch's calls in any order. Asked of the node itself: its client (web3_clientVersion, once), and a
 * Hardhat node whether it automines (hardhat_getAutomine, again after HARDHAT_RECHECK_MS).
 */
export class NonceQueueing {
  private known?: boolean;
  private hardhat?: boolean;
  private nextCheck = 0;
  private asking?: Promise<void>;

  constructor(private readonly node: Pick<JsonRpcProvider, "send">) {}

  /** The node's last answer without waiting (none yet, or a failed check: it does not queue); asks again when due. */
  queuesAhead(): boolean {
    if (Date.now() >= this.nextCheck) void this.check();
    return this.known ?? false;
  }

  /** Asks the node now (or joins the question under way); resolves once it answered. */
  check(): Promise<void> {
    this.asking ??= this.ask().finally(() => (this.asking = undefined));
    return this.asking;
  }

  private async ask(): Promise<void> {
    try {
      this.hardhat ??= /hardhat/i.test(String(await this.node.send("web3_clientVersion", [])));
      this.known = this.hardhat ? (await this.node.send("hardhat_getAutomine", [])) !== true : true;
      this.nextCheck = this.hardhat ? Date.now() + HARDHAT_RECHECK_MS : Infinity;
    } catch {
      this.known = undefined;
      this.nextCheck = Date.now() + FAILED_RECHECK_MS;
    }
  }
}

const perNode = new WeakMap<object, NonceQueueing>();

/** The one NonceQueueing of a chain's provider. */
export function nonceQueueingOf(node: Pick<JsonRpcProvider, "send">): NonceQueueing {
  let queueing = perNode.get(node);
  if (!queueing) perNode.set(node, (queueing = new NonceQueueing(node)));
  return queueing;
}

/** Whether `node` takes a nonce ahead of the account's now, as NonceOrder.register asks it. */
export function queuesAheadOf(node: Pick<JsonRpcProvider, "send">): () => boolean {
  const queueing = nonceQueueingOf(node);
  return () => queueing.queuesAhead();
}
