import { randomBytes } from "node:crypto";
import { getAddress } from "ethers";
import { MESSAGE_TTL_MS, renderMessage, siteOf, verifySignedMessage } from "./wallet-proof";

/**
 * A wallet recovery moves what an investor's lost wallet holds into a new wallet of the same investor. The new wallet
 * proves it is the investor's, and asks for exactly this recovery, by signing a message in the onboarding flow's layout
 * (EIP-4361 through EIP-191 personal_sign) that names the token and the lost wallet:
 *
 *   127.0.0.1:3000 wants you to sign in with your Ethereum account:
 *   0x90F79bf6EB2c4f870365E785982E1f101E93b906
 *
 *   Recover 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 on CTRL into this wallet.
 *
 *   URI: http://127.0.0.1:3000/recovery
 *   ...
 *   Resources:
 *   - urn:recovery:token:0x5FbDB2315678afecb367f032d93F642f64180aa3
 *   - urn:recovery:lost-wallet:0x70997970C51812dc3A010C7d01b50e0d17dc79C8
 */
const PAGE = "/recovery";

export function recoveryStatement(symbol: string, lostWallet: string): string {
  return `Recover ${getAddress(lostWallet)} on ${symbol} into this wallet.`;
}

function recoveryResources(tokenAddress: string, lostWallet: string) {
  return [
    { value: `urn:recovery:token:${getAddress(tokenAddress)}`, field: "newWalletMessage", what: "token" },
    { value: `urn:recovery:lost-wallet:${getAddress(lostWallet)}`, field: "lostWallet", what: "lostWallet" },
  ];
}

export interface RecoveryRequest {
  baseUrl: string;
  chainId: number;
  symbol: string;
  tokenAddress: string;
  lostWallet: string;
  newWallet: string;
}

/** The message the new wallet signs, valid for MESSAGE_TTL_MS from now. */
export function recoveryMessage(r: RecoveryRequest, now = Date.now()): string {
  return renderMessage({
    ...siteOf(r.baseUrl, PAGE),
    address: getAddress(r.newWallet),
    statement: recoveryStatement(r.symbol, r.lostWallet),
    chainId: r.chainId,
    nonce: randomBytes(12).toString("hex"),
    issuedAt: new Date(now).toISOString(),
    expirationTime: new Date(now + MESSAGE_TTL_MS).toISOString(),
    resources: recoveryResources(r.tokenAddress, r.lostWallet).map((res) => res.value),
  });
}

/** Checks the new wallet's signed request for this recovery (400 naming the field at fault otherwise). */
export function verifyRecoveryProof(r: RecoveryRequest & { message: string; signature: string; now?: number }): void {
  verifySignedMessage({
    message: r.message,
    signature: r.signature,
    walletAddress: r.newWallet,
    baseUrl: r.baseUrl,
    page: PAGE,
    chainId: r.chainId,
    statement: recoveryStatement(r.symbol, r.lostWallet),
    statementName: `the request to recover ${getAddress(r.lostWallet)} on ${r.symbol}`,
    resources: recoveryResources(r.tokenAddress, r.lostWallet),
    messageField: "newWalletMessage",
    walletField: "newWallet",
    signatureField: "newWalletSignature",
    now: r.now,
  });
}
