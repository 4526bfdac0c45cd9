import { keccak256, type Wallet } from "ethers";
import { broadcast } from "../chains/broadcast";
import { marketFees } from "../chains/fees";
import type { Chain } from "../chains/registry";
import { signTransaction } from "../crypto/secp256k1";
import type { Logger } from "../logger";
import type { Stores } from "../store/stores";

/** What healing a service wallet's nonces uses. */
export type NonceHealingServices = Pick<Stores, "walletLocks" | "walletNonces">;

/**
 * Keeps a service wallet's nonces (a relayer key, the x402 settlement wallet) in line with its chain, under the
 * wallet's lock: a counter that drifted above every nonce still in use (transactions dropped for good, a chain that
 * went back) is rewound to the chain's, in the same database transaction that reads the nonces in use (so no nonce is
 * taken in between); and a nonce below one in use that nothing of ours fills (its transaction ended without reaching
 * the chain) is filled with a zero-value transfer to self, so the later ones can be mined.
 */
export async function healWalletNonces(services: NonceHealingServices, chain: Chain, wallet: Wallet, log: Logger): Promise<void> {
  const release = await services.walletLocks.hold(chain.chainId, wallet.address);
  try {
    const onChain = await chain.provider.getTransactionCount(wallet.address, "latest");
    const { held, rewound } = await services.walletNonces.heal(chain.chainId, wallet.address, onChain);
    if (rewound) log.warn({ chainId: chain.chainId, wallet: wallet.address, next: rewound.next, was: rewound.was }, "wallet nonce counter was ahead of the chain; rewound");
    const highest = held.length ? held[held.length - 1] : onChain - 1;
    const inUse = new Set(held);
    for (let nonce = onChain; nonce < highest; nonce++) if (!inUse.has(nonce)) await fillNonce(chain, wallet, nonce, log);
  } finally {
    await release();
  }
}

/** A nonce nothing of ours will use, below one that is in use: a zero-value transfer to self takes it. */
async function fillNonce(chain: Chain, wallet: Wallet, nonce: number, log: Logger): Promise<void> {
  const fees = await marketFees(chain);
  const filler = await signTransaction(wallet, {
    to: wallet.address,
    value: 0n,
    nonce,
    chainId: chain.chainId,
    type: 2,
    gasLimit: 60_000n, // a call to itself runs its delegate's receive() (EIP-7702), beyond a plain transfer
    maxFeePerGas: fees.maxFeePerGas * 2n,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  });
  const verdict = await broadcast(chain.provider, filler, keccak256(filler));
  if (verdict.kind === "accepted") log.warn({ chainId: chain.chainId, wallet: wallet.address, nonce }, "filled a wallet nonce gap with a no-op transfer");
  else log.error({ chainId: chain.chainId, wallet: wallet.address, nonce, verdict }, "could not fill a wallet nonce gap");
}
