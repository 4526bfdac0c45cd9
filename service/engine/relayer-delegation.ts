import { concat, getAddress, keccak256 } from "ethers";
import { broadcast } from "../chains/broadcast";
import { marketFees } from "../chains/fees";
import type { Chain } from "../chains/registry";
import type { Logger } from "../logger";
import type { ServiceSigner } from "../signers/signer";
import type { Stores } from "../store/stores";

/** The delegation transaction (EIP-7702) is awaited this long at start; without it, payments settle on their own. */
const DELEGATION_WAIT_MS = 60_000;
/** How often the relayer's delegation is looked at again on chain while payments are settled with operations. */
const DELEGATION_RECHECK_MS = 30_000;

/** A relayer key's entry in the per-key maps: its chain and address. */
export const keyOf = (chainId: number, address: string) => `${chainId}:${address.toLowerCase()}`;

/**
 * Which relayer keys run PaidRelayDelegate's code (EIP-7702), so that payments settle inside their operations'
 * transactions: the delegation made once per key at start, and looked at again on chain while payments use it.
 */
export class RelayerDelegation {
  /** Per key (keyOf) whose account runs PaidRelayDelegate's code (EIP-7702), checked on chain: its address. */
  private readonly delegates = new Map<string, string>();
  private readonly delegationCheckedAt = new Map<string, number>();

  constructor(
    private readonly services: Pick<Stores, "walletLocks" | "walletNonces">,
    private readonly log: Logger,
  ) {}

  /** The address of the code the relayer key `sender` of `chainId` delegates to, when it does. */
  of(chainId: number, sender: string): string | undefined {
    return this.delegates.get(keyOf(chainId, sender));
  }

  /**
   * Whether the relayer key `signer` of `chain` still runs the delegate's code, looked at on chain at most every
   * DELEGATION_RECHECK_MS: a relayer key re-delegated elsewhere (or cleared) must not receive settleAndCall calldata,
   * which an account without that code would accept and ignore. Forgets the delegate when it is gone.
   */
  async stillDelegated(chain: Chain, signer: ServiceSigner): Promise<boolean> {
    const key = keyOf(chain.chainId, signer.address);
    const target = this.delegates.get(key);
    if (!target) return false;
    if (Date.now() - (this.delegationCheckedAt.get(key) ?? 0) < DELEGATION_RECHECK_MS) return true;
    const code = (await chain.provider.getCode(signer.address)).toLowerCase();
    this.delegationCheckedAt.set(key, Date.now());
    if (code === concat(["0xef0100", target]).toLowerCase()) return true;
    this.delegates.delete(key);
    this.log.error(
      { chainId: chain.chainId, relayer: signer.address, code: code.slice(0, 48) },
      "the relayer no longer delegates to PaidRelayDelegate; payments are settled on their own",
    );
    return false;
  }

  /**
   * Makes the relayer key `signer` of `chain` delegate to the chain's PaidRelayDelegate (EIP-7702), once: a type-4
   * transaction the relayer sends to itself carries its own authorization (authorization nonce = transaction nonce + 1,
   * so it takes two nonces). Sent only while no relayed transaction holds a nonce (at start, before any is signed), so
   * it can never take a nonce a stored transaction was signed with. Anything that fails leaves the chain without the
   * delegate: its payments are then settled in transactions of their own, as before.
   */
  async ensure(chain: Chain, signer: ServiceSigner): Promise<void> {
    const target = chain.deployment.contracts.PaidRelayDelegate;
    if (!target) return;
    const designator = concat(["0xef0100", target]).toLowerCase();
    const delegated = async () => (await chain.provider.getCode(signer.address)).toLowerCase() === designator;
    if (await delegated()) {
      this.delegates.set(keyOf(chain.chainId, signer.address), getAddress(target));
      return;
    }
    if ((await chain.provider.getCode(target)) === "0x") {
      this.log.warn(
        { chainId: chain.chainId, delegate: target },
        "PaidRelayDelegate has no code on this chain; payments are settled on their own",
      );
      return;
    }
    const release = await this.services.walletLocks.hold(chain.chainId, signer.address);
    let hash: string;
    try {
      // Another instance setting up the same key may have delegated it while this one waited for the lock.
      if (await delegated()) {
        this.delegates.set(keyOf(chain.chainId, signer.address), getAddress(target));
        return;
      }
      const latest = await chain.provider.getTransactionCount(signer.address, "latest");
      const pending = await chain.provider.getTransactionCount(signer.address, "pending");
      const held = await this.services.walletNonces.held(chain.chainId, signer.address, latest);
      if (held.length || pending !== latest) {
        this.log.info(
          { chainId: chain.chainId },
          "relayer has transactions in flight; its delegation (EIP-7702) waits for the next start",
        );
        return;
      }
      const raw = await delegationTransaction(chain, signer, target, latest);
      hash = keccak256(raw);
      const verdict = await broadcast(chain.provider, raw, hash);
      if (verdict.kind === "refused" || verdict.kind === "nonce-used") {
        // Another instance starting at the same time may have taken that nonce with the same delegation.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        if (await delegated()) this.delegates.set(keyOf(chain.chainId, signer.address), getAddress(target));
        else
          this.log.warn(
            { chainId: chain.chainId, verdict: verdict.kind },
            "relayer delegation (EIP-7702) refused; payments are settled on their own",
          );
        return;
      }
      // Both nonces are the chain's now (the transaction's and the authorization's).
      await this.services.walletNonces.syncFloor(chain.chainId, signer.address, latest + 2);
    } finally {
      await release();
    }
    await untilMinedOrTimeout(chain, hash, DELEGATION_WAIT_MS);
    if (await delegated()) {
      this.delegates.set(keyOf(chain.chainId, signer.address), getAddress(target));
      this.log.info(
        { chainId: chain.chainId, relayer: signer.address, delegate: target, hash },
        "relayer delegates to PaidRelayDelegate (EIP-7702): payments settle with their operations",
      );
    } else {
      this.log.warn(
        { chainId: chain.chainId, hash },
        "relayer delegation (EIP-7702) not in effect yet; payments are settled on their own until a later start",
      );
    }
  }
}

/**
 * The type-4 transaction a relayer key sends itself to delegate to `target` (EIP-7702), at `nonce`: its own
 * authorization inside takes the next nonce (authorization nonce = transaction nonce + 1).
 */
async function delegationTransaction(
  chain: Chain,
  signer: ServiceSigner,
  target: string,
  nonce: number,
): Promise<string> {
  const fees = await marketFees(chain);
  const authorization = await signer.authorize({ address: target, nonce: nonce + 1, chainId: chain.chainId });
  return signer.signTransaction({
    type: 4,
    to: signer.address,
    value: 0n,
    data: "0x",
    nonce,
    chainId: chain.chainId,
    gasLimit: 100_000n,
    maxFeePerGas: fees.maxFeePerGas * 2n,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    authorizationList: [authorization],
  });
}

/** Waits until `hash` has a receipt, or `ms` passed. */
async function untilMinedOrTimeout(chain: Chain, hash: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && !(await chain.provider.getTransactionReceipt(hash)))
    await new Promise((resolve) => setTimeout(resolve, 250));
}
