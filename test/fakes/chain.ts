import {
  Transaction,
  TransactionReceipt,
  TransactionResponse,
  getAddress,
  keccak256,
  toBeHex,
  type Provider,
} from "ethers";
import type { ChainNode } from "../../service/chains/broadcast";

interface Block {
  number: number;
  hash: string;
  transactions: Transaction[];
}

/** The error a node answers a refused call with, as ethers hands it on (broadcastVerdict reads `error.message`). */
const refusal = (message: string) => Object.assign(new Error(message), { error: { code: -32000, message } });

/**
 * An in-memory chain (service/chains/broadcast.ts ChainNode) that mines on demand: signed transactions wait in its
 * mempool until `mine()` puts every one whose nonce is next for its sender into one block, in order; each then has a
 * receipt (status 1). It keeps nonces per sender and refuses a used one as a node does ("nonce too low"), and bytes it
 * already holds ("known transaction"). It executes nothing: no balances, no gas, no fees, no logs, no reverts.
 * test/contracts-of/chain-node.test.ts holds it to an in-process Hardhat chain with automine off.
 */
export class FakeChain implements ChainNode {
  private readonly blocks: Block[] = [{ number: 0, hash: keccak256(toBeHex(0, 32)), transactions: [] }];
  private readonly mempool = new Map<string, Transaction>();
  private readonly mined = new Map<string, { tx: Transaction; block: Block; index: number }>();
  /** Each sender's next nonce on the latest block (lower-case address). */
  private readonly nonces = new Map<string, number>();
  /** The receipts' and responses' provider: nothing of it is used by what the service reads from them. */
  private readonly asProvider = this as unknown as Provider;

  constructor(readonly chainId: number) {}

  private latestNonce(address: string): number {
    return this.nonces.get(address.toLowerCase()) ?? 0;
  }

  /** The sender's next nonce counting its transactions waiting without a gap. */
  private pendingNonce(address: string): number {
    let next = this.latestNonce(address);
    const waiting = new Set(
      [...this.mempool.values()].filter((tx) => tx.from!.toLowerCase() === address.toLowerCase()).map((tx) => tx.nonce),
    );
    while (waiting.has(next)) next++;
    return next;
  }

  /** JSON-RPC: eth_sendRawTransaction, eth_blockNumber and eth_chainId; anything else is refused as unsupported. */
  send(method: string, params: unknown[] | Record<string, unknown>): Promise<unknown> {
    if (method === "eth_sendRawTransaction") return this.sendRaw(String((params as unknown[])[0]));
    if (method === "eth_blockNumber") return Promise.resolve(toBeHex(this.head()));
    if (method === "eth_chainId") return Promise.resolve(toBeHex(this.chainId));
    return Promise.reject(refusal(`the fake chain does not answer ${method}`));
  }

  private sendRaw(raw: string): Promise<string> {
    const tx = Transaction.from(raw);
    const hash = tx.hash!;
    if (tx.chainId !== BigInt(this.chainId))
      return Promise.reject(
        refusal(`Trying to send a transaction with chain id ${tx.chainId} to chain ${this.chainId}`),
      );
    if (this.mempool.has(hash)) return Promise.reject(refusal(`Known transaction: ${hash}`));
    const expected = this.latestNonce(tx.from!);
    if (tx.nonce < expected)
      return Promise.reject(refusal(`Nonce too low. Expected nonce to be ${expected} but got ${tx.nonce}.`));
    this.mempool.set(hash, tx);
    return Promise.resolve(hash);
  }

  /** Mines one block of every waiting transaction whose nonce comes next for its sender; answers its number. */
  mine(): number {
    const block: Block = { number: this.head() + 1, hash: "", transactions: [] };
    for (let progressed = true; progressed;) {
      progressed = false;
      for (const [hash, tx] of this.mempool) {
        if (tx.nonce !== this.latestNonce(tx.from!)) continue;
        this.mempool.delete(hash);
        this.nonces.set(tx.from!.toLowerCase(), tx.nonce + 1);
        this.mined.set(hash, { tx, block, index: block.transactions.length });
        block.transactions.push(tx);
        progressed = true;
      }
    }
    block.hash = keccak256(toBeHex(block.number, 32));
    this.blocks.push(block);
    return block.number;
  }

  private head(): number {
    return this.blocks.length - 1;
  }

  getBlockNumber(): Promise<number> {
    return Promise.resolve(this.head());
  }

  getTransactionCount(address: string, blockTag: string = "latest"): Promise<number> {
    return Promise.resolve(blockTag === "pending" ? this.pendingNonce(address) : this.latestNonce(address));
  }

  getTransaction(hash: string): Promise<TransactionResponse | null> {
    const mined = this.mined.get(hash.toLowerCase());
    const tx = mined?.tx ?? this.mempool.get(hash.toLowerCase());
    if (!tx) return Promise.resolve(null);
    return Promise.resolve(
      new TransactionResponse(
        {
          blockNumber: mined?.block.number ?? null,
          blockHash: mined?.block.hash ?? null,
          hash: tx.hash!,
          index: mined?.index ?? 0,
          type: tx.type ?? 0,
          to: tx.to,
          from: getAddress(tx.from!),
          nonce: tx.nonce,
          gasLimit: tx.gasLimit,
          gasPrice: tx.gasPrice ?? tx.maxFeePerGas ?? 0n,
          maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
          maxFeePerGas: tx.maxFeePerGas,
          maxFeePerBlobGas: null,
          data: tx.data,
          value: tx.value,
          chainId: tx.chainId,
          signature: tx.signature!,
          accessList: tx.accessList,
          blobVersionedHashes: null,
          authorizationList: null,
        },
        this.asProvider,
      ),
    );
  }

  getTransactionReceipt(hash: string): Promise<TransactionReceipt | null> {
    const mined = this.mined.get(hash.toLowerCase());
    if (!mined) return Promise.resolve(null);
    const { tx, block, index } = mined;
    const gasUsed = 21_000n;
    return Promise.resolve(
      new TransactionReceipt(
        {
          to: tx.to,
          from: getAddress(tx.from!),
          contractAddress: null,
          hash: tx.hash!,
          index,
          blockHash: block.hash,
          blockNumber: block.number,
          logsBloom: "0x" + "00".repeat(256),
          logs: [],
          gasUsed,
          cumulativeGasUsed: gasUsed * BigInt(index + 1),
          gasPrice: tx.maxFeePerGas ?? tx.gasPrice ?? 0n,
          type: tx.type ?? 0,
          status: 1,
          root: null,
          blobGasUsed: null,
        },
        this.asProvider,
      ),
    );
  }
}
