/** One contract call a method wants made, before the engine turns it into a transaction. */
export interface PlannedCall {
  to: string;
  data: string;
  value?: bigint;
  /** What the call does, e.g. "whitelist 0xabc…" (shown in info and logs). */
  description: string;
  /**
   * Gas ceiling for a call whose outcome depends on an earlier call of the same batch: its own estimate, taken
   * against today's state, would fail or come out too low (e.g. mint before the whitelist is mined).
   */
  gasCeiling?: bigint;
  /**
   * The calldata is completed at send time (service-relayed: it names the payer, known only then), so its gas is
   * estimated when the relayer signs; `gasCeiling` stands in until then.
   */
  completedAtSend?: boolean;
}

/** An unsigned transaction exactly as the API returns it (docs/wire-conventions.md, Unsigned transactions). */
export interface UnsignedTransaction {
  from: string;
  to: string;
  /** Hex; zero is "0x00". */
  value: string;
  nonce: number;
  chainId: number;
  data: string;
  type: 2;
  /** Decimal strings without 0x. */
  maxPriorityFeePerGas: string;
  maxFeePerGas: string;
  /** Hex. */
  gasLimit: string;
}

export type BatchStatus = "prepared" | "sending" | "success" | "rejected";
/** unseen: a client-reported hash that never appeared on the chain (the client may report the right one). */
export type BatchTxStatus = "prepared" | "signed" | "broadcast" | "confirmed" | "reverted" | "refused" | "unseen";

/** An earlier signed form of a transaction, replaced by one with the same nonce and higher fees. */
export interface ReplacedTransaction {
  hash: string;
  signedRaw: string | null;
  maxFeePerGas: string | null;
  maxPriorityFeePerGas: string | null;
  replacedAt: string;
}

/** Why a broadcast transaction is not mined yet, and what would be mined now. */
export interface TransactionWait {
  reason: string;
  /** The latest block's base fee when this was noticed (decimal wei). */
  baseFeePerGas: string;
  /** Fees that would be mined now (decimal wei): a client may sign a replacement with them for the same txId. */
  suggestedMaxFeePerGas: string;
  suggestedMaxPriorityFeePerGas: string;
  since: string;
}

export interface BatchTransaction {
  index: number;
  /** When it was broadcast (or its hash reported), ISO 8601. */
  broadcastAt?: string | null;
  /** The chain's head when it was first broadcast (null when not recorded: a client-reported hash, an older row). */
  broadcastBlock?: number | null;
  unsigned: UnsignedTransaction;
  signedRaw: string | null;
  txHash: string | null;
  status: BatchTxStatus;
  blockNumber: number | null;
  gasUsed: string | null;
  error: string | null;
  /** The block the receipt named (a reorg changes it, or takes the receipt away). */
  blockHash?: string | null;
  /** Earlier signed forms replaced by this one (oldest first). */
  replaced?: ReplacedTransaction[];
  /** Why it waits (see TransactionWait); null when nothing is known to hold it back. */
  waiting?: TransactionWait | null;
  /** Set while a reorg has taken it off the chain after it counted as confirmed. */
  reorgedAt?: string | null;
  /** Reorgs that took it off the chain so far. */
  reorgs?: number;
}

export interface Batch {
  txId: string;
  chainId: number;
  method: string;
  executionMode: "client-signed" | "client-broadcast" | "service-relayed";
  signer: string;
  apiKeyId: string | null;
  status: BatchStatus;
  body: Record<string, unknown>;
  /** Method-specific facts its onConfirmed hook needs (JSON; amounts as strings). */
  plan: Record<string, unknown>;
  info: Record<string, unknown>;
  failedIndex: number | null;
  error: string | null;
  /** What the confirmed batch produced (e.g. the address of a created token). */
  outcome: Record<string, unknown> | null;
  createdAt: string;
  transactions: BatchTransaction[];
}
