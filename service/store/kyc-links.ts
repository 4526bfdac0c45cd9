import { createHash } from "node:crypto";
import type { Db, Queryable } from "./db";
import { iso, isoOrNull } from "./columns";

/**
 * How a link's token is stored and looked up: its SHA-256 (hex). The token is 32 random bytes, so a plain hash is
 * enough: nobody can find a token from its hash, and a database reader cannot open anyone's onboarding page.
 */
export const linkTokenHash = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");

export interface KycLinkRecord {
  tokenHash: string;
  /** The token sealed with the data key (onboarding/links.ts) while the link is open, for kycUrl; null once it is not. */
  tokenSealed: string | null;
  investorId: string;
  nonce: string;
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
  voidedAt: string | null;
  /** Set when too many submissions through the link were refused (onboarding/links.ts MAX_LINK_FAILURES). */
  lockedAt: string | null;
  failedAttempts: number;
  invitationMessageId: string | null;
  invitationSentAt: string | null;
  invitationError: string | null;
}

interface LinkRow {
  token_hash: string;
  token_sealed: string | null;
  investor_id: string;
  nonce: string;
  created_at: Date | string;
  expires_at: Date | string;
  used_at: Date | string | null;
  voided_at: Date | string | null;
  locked_at: Date | string | null;
  failed_attempts: number;
  invitation_message_id: string | null;
  invitation_sent_at: Date | string | null;
  invitation_error: string | null;
}

const toLink = (r: LinkRow): KycLinkRecord => ({
  tokenHash: r.token_hash,
  tokenSealed: r.token_sealed,
  investorId: r.investor_id,
  nonce: r.nonce,
  createdAt: iso(r.created_at),
  expiresAt: iso(r.expires_at),
  usedAt: isoOrNull(r.used_at),
  voidedAt: isoOrNull(r.voided_at),
  lockedAt: isoOrNull(r.locked_at),
  failedAttempts: Number(r.failed_attempts),
  invitationMessageId: r.invitation_message_id,
  invitationSentAt: isoOrNull(r.invitation_sent_at),
  invitationError: r.invitation_error,
});

/**
 * An investor's single-use onboarding links: issued (stored by the token's hash), looked up by token, used, voided,
 * locked after too many refused submissions, and the invitation e-mail's outcome. The investors they are for, and
 * their history, are KycStore's (kyc.ts).
 */
export class KycLinks {
  constructor(private readonly db: Db) {}

  /** A new link, stored by its token's hash (the token itself only sealed, for kycUrl while the link is open). */
  async insertLink(
    q: Queryable,
    l: { token: string; tokenSealed: string | null; investorId: string; nonce: string; expiresAt: Date },
  ): Promise<KycLinkRecord> {
    const [row] = await q.query<LinkRow>(
      "INSERT INTO kyc_links (token_hash, token_sealed, investor_id, nonce, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING *",
      [linkTokenHash(l.token), l.tokenSealed, l.investorId, l.nonce, l.expiresAt.toISOString()],
    );
    return toLink(row);
  }

  /** Voids every unused link of an investor (a newer link, or a decision, replaces them); returns how many. */
  async voidLinks(q: Queryable, investorId: string): Promise<number> {
    const rows = await q.query(
      "UPDATE kyc_links SET voided_at = now(), token_sealed = NULL WHERE investor_id = $1 AND used_at IS NULL AND voided_at IS NULL RETURNING token_hash",
      [investorId],
    );
    return rows.length;
  }

  /** The link a token opens, looked up by the token's hash. */
  async linkByToken(token: string, q: Queryable = this.db, forUpdate = false): Promise<KycLinkRecord | undefined> {
    const [row] = await q.query<LinkRow>(
      `SELECT * FROM kyc_links WHERE token_hash = $1${forUpdate ? " FOR UPDATE" : ""}`,
      [linkTokenHash(token)],
    );
    return row && toLink(row);
  }

  /** The newest link of an investor that is neither used nor voided (it may have expired). */
  async openLink(investorId: string, q: Queryable = this.db): Promise<KycLinkRecord | undefined> {
    const [row] = await q.query<LinkRow>(
      "SELECT * FROM kyc_links WHERE investor_id = $1 AND used_at IS NULL AND voided_at IS NULL ORDER BY created_at DESC LIMIT 1",
      [investorId],
    );
    return row && toLink(row);
  }

  async markLinkUsed(q: Queryable, tokenHash: string): Promise<void> {
    await q.query("UPDATE kyc_links SET used_at = now(), token_sealed = NULL WHERE token_hash = $1", [tokenHash]);
  }

  /**
   * Counts one refused submission through a link; at `maxFailures` the link is locked (and its sealed token dropped).
   * Returns the count and whether the link is now locked.
   */
  async recordLinkFailure(
    tokenHash: string,
    maxFailures: number,
  ): Promise<{ failedAttempts: number; locked: boolean }> {
    const [row] = await this.db.query<{ failed_attempts: number; locked: boolean }>(
      `UPDATE kyc_links SET failed_attempts = failed_attempts + 1,
         locked_at = CASE WHEN failed_attempts + 1 >= $2 THEN COALESCE(locked_at, now()) ELSE locked_at END,
         token_sealed = CASE WHEN failed_attempts + 1 >= $2 THEN NULL ELSE token_sealed END
       WHERE token_hash = $1 RETURNING failed_attempts, locked_at IS NOT NULL AS locked`,
      [tokenHash, maxFailures],
    );
    return { failedAttempts: Number(row?.failed_attempts ?? 0), locked: !!row?.locked };
  }

  async recordInvitation(tokenHash: string, outcome: { messageId: string } | { error: string }): Promise<void> {
    if ("messageId" in outcome) {
      await this.db.query(
        "UPDATE kyc_links SET invitation_message_id = $2, invitation_sent_at = now(), invitation_error = NULL WHERE token_hash = $1",
        [tokenHash, outcome.messageId],
      );
    } else {
      await this.db.query("UPDATE kyc_links SET invitation_error = $2 WHERE token_hash = $1", [
        tokenHash,
        outcome.error.slice(0, 500),
      ]);
    }
  }
}
