import { keccak256 } from "ethers";
import { broadcast } from "../chains/broadcast";
import { marketFees } from "../chains/fees";
import type { Chain } from "../chains/registry";
import type { Logger } from "../logger";
import type { ServiceSigner } from "../signers/signer";
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
export async function healWalletNonces(
  services: NonceHealingServices,
  chain: Chain,
  signer: ServiceSigner,
  log: Logger,
): Promise<void> {
  const release = await services.walletLocks.hold(chain.chainId, signer.address);
  try {
    const onChain = await chain.provider.getTransactionCount(signer.address, "latest");
    const { held, rewound } = await services.walletNonces.heal(chain.chainId, signer.address, onChain);
    if (rewound)
      log.warn(
        { chainId: chain.chainId, wallet: signer.address, next: rewound.next, was: rewound.was },
        "wallet nonce counter was ahead of the chain; rewound",
      );
    const highest = held.length ? held[held.length - 1] : onChain - 1;
    const inUse = new Set(held);
    for (let nonce = onChain; nonce < highest; nonce++)
      if (!inUse.has(nonce)) await fillNonce(chain, signer, nonce, log);
  } finally {
    await release();
  }
}

/** A nonce nothing of ours will use, below one that is in use: a zero-value transfer to self takes it. */
async function fillNonce(chain: Chain, signer: ServiceSigner, nonce: number, log: Logger): Promise<void> {
  const fees = await marketFees(chain);
  const filler = await signer.signTransaction({
    to: signer.address,
    value: 0n,
    nonce,
    chainId: chain.chainId,
    type: 2,
    gasLimit: 60_000n, // a call to itself runs its delegate's receive() (EIP-7702), beyond a plain transfer
    maxFeePerGas: fees.maxFeePerGas * 2n,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  });
  const verdict = await broadcast(chain.provider, filler, keccak256(filler));
  if (verdict.kind === "accepted")
    log.warn(
      { chainId: chain.chainId, wallet: signer.address, nonce },
      "filled a wallet nonce gap with a no-op transfer",
    );
  else
    log.error({ chainId: chain.chainId, wallet: signer.address, nonce, verdict }, "could not fill a wallet nonce gap");
}
