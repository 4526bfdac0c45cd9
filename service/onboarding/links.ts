import { randomBytes, randomInt } from "node:crypto";
import type { Sealer } from "../crypto/sealed";
import { linkTokenHash, type KycLinkRecord } from "../store/kyc-links";

/** A link token: 32 random bytes, base64url (43 characters). It is the link's only capability. */
export const LINK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newLinkToken(): string {
  return randomBytes(32).toString("base64url");
}

const NONCE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** An EIP-4361 nonce: 17 alphanumerics (≈ 101 bits; the ERC asks for at least 8). */
export function newNonce(): string {
  let nonce = "";
  for (let i = 0; i < 17; i++) nonce += NONCE_ALPHABET[randomInt(NONCE_ALPHABET.length)];
  return nonce;
}

/** Where the investor opens its link: the service's page, the token in the query (never in a path the logs record). */
export function linkUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/$/, "")}/kyc?token=${token}`;
}

export function linkExpiry(ttlHours: number, from = new Date()): Date {
  return new Date(from.getTime() + Math.round(ttlHours * 3_600_000));
}

/** Refused submissions through one link before it is locked (the investor then needs a fresh link). */
export const MAX_LINK_FAILURES = 10;

/**
 * The database holds a link's token only as its hash and, while the link is open, sealed with the
 * data key, so reads can show the live link (kycUrl) to the issuer. The seal is bound to the link (its hash).
 */
export function sealLinkToken(sealer: Sealer, token: string): string {
  return sealer.seal(token, `kyc-link:${linkTokenHash(token)}`);
}

/** The token of an open link, or null (none kept, or not readable with this DATA_ENCRYPTION_KEY). */
export function openLinkToken(sealer: Sealer, link: KycLinkRecord): string | null {
  if (!link.tokenSealed) return null;
  try {
    return sealer.open(link.tokenSealed, `kyc-link:${link.tokenHash}`);
  } catch {
    return null;
  }
}

export type LinkState = "live" | "used" | "voided" | "locked" | "expired";

export function linkState(link: KycLinkRecord, now = Date.now()): LinkState {
  if (link.usedAt) return "used";
  if (link.voidedAt) return "voided";
  if (link.lockedAt) return "locked";
  if (new Date(link.expiresAt).getTime() <= now) return "expired";
  return "live";
}
