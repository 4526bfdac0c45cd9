import type { EIP1193Provider, RequestArguments } from "hardhat/types";

/**
 * Calls that only read a chain: they may run beside each other. Every other call (a transaction sent, a block mined, a
 * setting changed) changes what later calls see.
 */
const READS = new Set([
  "eth_accounts",
  "eth_blobBaseFee",
  "eth_blockNumber",
  "eth_call",
  "eth_chainId",
  "eth_estimateGas",
  "eth_feeHistory",
  "eth_gasPrice",
  "eth_getBalance",
  "eth_getBlockByHash",
  "eth_getBlockByNumber",
  "eth_getBlockTransactionCountByNumber",
  "eth_getCode",
  "eth_getLogs",
  "eth_getStorageAt",
  "eth_getTransactionByHash",
  "eth_getTransactionCount",
  "eth_getTransactionReceipt",
  "eth_maxPriorityFeePerGas",
  "eth_syncing",
  "hardhat_getAutomine",
  "net_version",
  "web3_clientVersion",
]);

/**
 * `provider` answering calls in the order they arrive, as a node that handles a JSON-RPC batch one call after the
 * other does (geth): a call that changes the chain runs after every call that came before it, and the calls after it
 * run once it is done; reads between two changes run beside each other. Hardhat's JSON-RPC server starts a batch's
 * calls all at once and EDR may answer them in any order: in [eth_sendRawTransaction, eth_getTransactionReceipt] the
 * receipt was missing about one time in four although the send had mined the transaction (automine), and the
 * client had to ask again.
 */
export function callsInOrder(provider: EIP1193Provider): EIP1193Provider {
  /** Settles when the last change queued has run (undefined: none is queued or running). */
  let lastChange: Promise<void> | undefined;
  /** Reads started since that change was queued: the next change waits for them. */
  const reads = new Set<Promise<void>>();

  const request = (args: RequestArguments): Promise<unknown> => {
    if (READS.has(args.method)) {
      const answer = lastChange ? lastChange.then(() => provider.request(args)) : provider.request(args);
      const settled = answer.then(settle, settle);
      reads.add(settled);
      void settled.then(() => reads.delete(settled));
      return answer;
    }
    const before = lastChange ? [lastChange, ...reads] : [...reads];
    reads.clear();
    const answer = before.length ? Promise.all(before).then(() => provider.request(args)) : provider.request(args);
    const settled = answer.then(settle, settle);
    lastChange = settled;
    void settled.then(() => {
      if (lastChange === settled) lastChange = undefined;
    });
    return answer;
  };

  return new Proxy(provider, {
    get(target, property) {
      if (property === "request") return request;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const settle = (): void => undefined;
