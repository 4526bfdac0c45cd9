import type { Sealer } from "../crypto/sealed";
import { emitEvent } from "./outbox";
import type { Db, Queryable } from "./db";
import { KycSealing, type SealedDetails } from "./kyc-sealing";
import { iso, isoOrNull } from "./columns";

/**
 * KYC statuses. none: known without KYC (needKyc false); invited: a live link was issued; submitted: the investor
 * proved a wallet and gave its details, awaiting review; approved / rejected: the provider's decision.
 */
export const KYC_STATUSES = ["none", "invited", "submitted", "approved", "rejected"] as const;
export type KycStatus = (typeof KYC_STATUSES)[number];

export interface KycInvestorRecord {
  id: string;
  apiKeyId: string;
  email: string;
  needKyc: boolean;
  status: KycStatus;
  firstName: string | null;
  lastName: string | null;
  country: string | null;
  walletAddress: string | null;
  proofMessage: string | null;
  submittedAt: string | null;
  reviewedBy: string | null;
  /** Who decided the review (an operator's e-mail, or "admin tool"): operators see it, tenants see reviewedBy. */
  decidedBy: string | null;
  reviewedAt: string | null;
  reviewReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * What an investor submitted through its link: every field is covered by the wallet's signature, which was verified at
 * submission and is not stored (walletAddress is the address it recovered to).
 */
export interface KycSubmissionFacts {
  firstName: string;
  lastName: string;
  country: string;
  walletAddress: string;
  proofMessage: string;
}

interface InvestorRow {
  id: string;
  api_key_id: string;
  /** Clear columns are only ever set by older versions (sealed at the next start: migration 056's CHECK). */
  email: string | null;
  email_sealed: string | null;
  details_sealed: string | null;
  reason_sealed: string | null;
  need_kyc: boolean;
  status: KycStatus;
  first_name: string | null;
  last_name: string | null;
  country: string | null;
  wallet_address: string | null;
  proof_message: string | null;
  submitted_at: Date | string | null;
  reviewed_by: string | null;
  decided_by: string | null;
  reviewed_at: Date | string | null;
  review_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** Columns of kyc_investors a listing returns (the proof's signature stays in the table). */
const INVESTOR_COLUMNS = `id, api_key_id, email, email_sealed, details_sealed, reason_sealed, need_kyc, status, first_name, last_name, country,
  wallet_address, proof_message, submitted_at, reviewed_by, decided_by, reviewed_at, review_reason, created_at, updated_at`;

/** What the clear columns of an older version's row are set back to once it is sealed. */
const NOTHING_IN_CLEAR =
  "email = NULL, first_name = NULL, last_name = NULL, country = NULL, wallet_address = NULL, proof_message = NULL, review_reason = NULL";

/** Scope keys first (the caller's own record wins), then the most recently changed. */
const PREFERENCE = "ORDER BY (api_key_id = $2) DESC, updated_at DESC, id";

/**
 * Onboarding records: investors per (API key, e-mail) and their history; their single-use links are KycLinks'
 * (kyc-links.ts).
 *
 * The key's tokenizer scope: a key and every key that shares one of its tokenizer e-mails (tokenizer_email_keys: the
 * key that first tokenized with an e-mail and the keys the operator bound to it, i.e. the keys that may act on the same
 * tokens). An investor record belongs to the key that first invited the e-mail and is
 * seen by its whole scope; for one token, the scope is the keys that tokenized under that token's tokenizer e-mail.
 */
export class KycStore {
  private readonly sealing: KycSealing;

  constructor(
    private readonly db: Db,
    sealer: Sealer,
  ) {
    this.sealing = new KycSealing(sealer);
  }

  /** A row as the service sees it: its sealed details opened (or an older version's clear ones, until they are sealed). */
  private toInvestor(r: InvestorRow): KycInvestorRecord {
    const details: SealedDetails = r.details_sealed
      ? this.sealing.openDetails(r.id, r.details_sealed)
      : {
          firstName: r.first_name,
          lastName: r.last_name,
          country: r.country,
          walletAddress: r.wallet_address,
          proofMessage: r.proof_message,
        };
    return {
      id: r.id,
      apiKeyId: r.api_key_id,
      email: r.email_sealed ? this.sealing.openEmail(r.id, r.email_sealed) : (r.email ?? ""),
      needKyc: r.need_kyc,
      status: r.status,
      firstName: details.firstName,
      lastName: details.lastName,
      country: details.country,
      walletAddress: details.walletAddress,
      proofMessage: details.proofMessage,
      submittedAt: isoOrNull(r.submitted_at),
      reviewedBy: r.reviewed_by,
      decidedBy: r.decided_by,
      reviewedAt: isoOrNull(r.reviewed_at),
      reviewReason: r.reason_sealed ? this.sealing.openReason(r.id, r.reason_sealed) : r.review_reason,
      createdAt: iso(r.created_at),
      updatedAt: iso(r.updated_at),
    };
  }

  /** The key and every key that shares one of its tokenizer e-mails. */
  async scopeOfKey(keyId: string, q: Queryable = this.db): Promise<string[]> {
    const rows = await q.query<{ api_key_id: string }>(
      `SELECT DISTINCT k2.api_key_id FROM tokenizer_email_keys k1 JOIN tokenizer_email_keys k2 ON k2.email = k1.email
       WHERE k1.api_key_id = $1`,
      [keyId],
    );
    return [...new Set([keyId, ...rows.map((r) => r.api_key_id)])];
  }

  /** The keys a tokenizer e-mail belongs to (the scope of that tokenizer's tokens), plus the caller. */
  async scopeOfTokenizer(tokenizerEmail: string, callerKeyId: string, q: Queryable = this.db): Promise<string[]> {
    const rows = await q.query<{ api_key_id: string }>(
      "SELECT api_key_id FROM tokenizer_email_keys WHERE email = lower($1)",
      [tokenizerEmail],
    );
    return [...new Set([callerKeyId, ...rows.map((r) => r.api_key_id)])];
  }

  /** The investor record of `email` in a scope: the caller's own if it has one, else the most recently changed. */
  async findInScope(
    scope: string[],
    callerKeyId: string,
    email: string,
    q: Queryable = this.db,
  ): Promise<KycInvestorRecord | undefined> {
    const [row] = await q.query<InvestorRow>(
      `SELECT ${INVESTOR_COLUMNS} FROM kyc_investors WHERE api_key_id = ANY($1) AND email_hash = $3 ${PREFERENCE} LIMIT 1`,
      [scope, callerKeyId, this.sealing.emailHash(email)],
    );
    return row && this.toInvestor(row);
  }

  /** Every investor of a scope, one per e-mail (the caller's own record wins), ordered by e-mail. */
  async listInScope(
    scope: string[],
    callerKeyId: string,
    filter: { status?: KycStatus } = {},
  ): Promise<KycInvestorRecord[]> {
    const rows = await this.db.query<InvestorRow>(
      `SELECT * FROM (
         SELECT DISTINCT ON (email_hash) ${INVESTOR_COLUMNS} FROM kyc_investors WHERE api_key_id = ANY($1)
         ORDER BY email_hash, (api_key_id = $2) DESC, updated_at DESC, id
       ) chosen WHERE $3::text IS NULL OR status = $3`,
      [scope, callerKeyId, filter.status ?? null],
    );
    // Ordered by e-mail once opened (the database holds only their keyed hashes).
    return rows.map((r) => this.toInvestor(r)).sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
  }

  /** Every record, for the operator (optionally one status, one e-mail, one key). */
  async list(
    filter: { status?: KycStatus; email?: string; keyId?: string } = {},
    q: Queryable = this.db,
  ): Promise<KycInvestorRecord[]> {
    const rows = await q.query<InvestorRow>(
      `SELECT ${INVESTOR_COLUMNS} FROM kyc_investors
       WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR email_hash = $2) AND ($3::text IS NULL OR api_key_id = $3)
       ORDER BY created_at, id`,
      [filter.status ?? null, filter.email ? this.sealing.emailHash(filter.email) : null, filter.keyId ?? null],
    );
    return rows.map((r) => this.toInvestor(r));
  }

  async get(id: string, q: Queryable = this.db): Promise<KycInvestorRecord | undefined> {
    const [row] = await q.query<InvestorRow>(`SELECT ${INVESTOR_COLUMNS} FROM kyc_investors WHERE id = $1`, [id]);
    return row && this.toInvestor(row);
  }

  /** Locks an investor row for a transition (inside `q`'s transaction). */
  async lock(q: Queryable, id: string): Promise<KycInvestorRecord | undefined> {
    const [row] = await q.query<InvestorRow>(`SELECT ${INVESTOR_COLUMNS} FROM kyc_investors WHERE id = $1 FOR UPDATE`, [
      id,
    ]);
    return row && this.toInvestor(row);
  }

  async insert(
    q: Queryable,
    r: { id: string; apiKeyId: string; email: string; needKyc: boolean; status: KycStatus },
  ): Promise<KycInvestorRecord> {
    const [row] = await q.query<InvestorRow>(
      `INSERT INTO kyc_investors (id, api_key_id, email_hash, email_sealed, need_kyc, status) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${INVESTOR_COLUMNS}`,
      [r.id, r.apiKeyId, this.sealing.emailHash(r.email), this.sealing.sealEmail(r.id, r.email), r.needKyc, r.status],
    );
    return this.toInvestor(row);
  }

  /** A new start (re-invitation, or needKyc false): the previous submission and decision are cleared (kyc_events keeps them). */
  async restart(q: Queryable, id: string, needKyc: boolean, status: "none" | "invited"): Promise<KycInvestorRecord> {
    const [row] = await q.query<InvestorRow>(
      `UPDATE kyc_investors SET need_kyc = $2, status = $3, details_sealed = NULL, reason_sealed = NULL, submitted_at = NULL,
         reviewed_by = NULL, reviewed_at = NULL, updated_at = now()
       WHERE id = $1 RETURNING ${INVESTOR_COLUMNS}`,
      [id, needKyc, status],
    );
    return this.toInvestor(row);
  }

  async submit(q: Queryable, id: string, s: KycSubmissionFacts): Promise<KycInvestorRecord> {
    const [row] = await q.query<InvestorRow>(
      `UPDATE kyc_investors SET status = 'submitted', details_sealed = $2, submitted_at = now(), updated_at = now()
       WHERE id = $1 RETURNING ${INVESTOR_COLUMNS}`,
      [
        id,
        this.sealing.sealDetails(id, {
          firstName: s.firstName,
          lastName: s.lastName,
          country: s.country,
          walletAddress: s.walletAddress,
          proofMessage: s.proofMessage,
        }),
      ],
    );
    const submitted = this.toInvestor(row);
    await emitEvent(q, kycEvent("kyc.submitted", submitted));
    return submitted;
  }

  async decide(
    q: Queryable,
    id: string,
    status: "approved" | "rejected",
    by: string,
    reason: string | null,
    decidedBy: string | null = null,
  ): Promise<KycInvestorRecord> {
    const [row] = await q.query<InvestorRow>(
      `UPDATE kyc_investors SET status = $2, reviewed_by = $3, reviewed_at = now(), reason_sealed = $4, decided_by = $5, updated_at = now()
       WHERE id = $1 RETURNING ${INVESTOR_COLUMNS}`,
      [id, status, by, reason === null ? null : this.sealing.sealReason(id, reason), decidedBy],
    );
    const decided = this.toInvestor(row);
    await emitEvent(q, kycEvent(status === "approved" ? "kyc.approved" : "kyc.rejected", decided));
    return decided;
  }

  /** One line of an investor's history; its personal details (a wallet, a reason) are sealed. */
  async addEvent(
    q: Queryable,
    investorId: string,
    event: string,
    actor: string,
    detail: Record<string, unknown> = {},
  ): Promise<void> {
    const { plain, sealed } = this.sealing.splitDetail(investorId, detail);
    await q.query(
      "INSERT INTO kyc_events (investor_id, event, actor, detail, detail_sealed) VALUES ($1, $2, $3, $4, $5)",
      [investorId, event, actor, JSON.stringify(plain), sealed],
    );
  }

  async events(
    investorId: string,
  ): Promise<{ event: string; actor: string; detail: Record<string, unknown>; at: string }[]> {
    const rows = await this.db.query<{
      event: string;
      actor: string;
      detail: Record<string, unknown> | string;
      detail_sealed: string | null;
      created_at: Date | string;
    }>("SELECT event, actor, detail, detail_sealed, created_at FROM kyc_events WHERE investor_id = $1 ORDER BY id", [
      investorId,
    ]);
    return rows.map((r) => ({
      event: r.event,
      actor: r.actor,
      detail: this.sealing.joinDetail(
        investorId,
        typeof r.detail === "string" ? (JSON.parse(r.detail) as Record<string, unknown>) : r.detail,
        r.detail_sealed,
      ),
      at: iso(r.created_at),
    }));
  }

  /**
   * Seals what an older version stored in clear (migration 056): each investor's e-mail (and its keyed hash), details
   * and reason, and the personal details of its history; then rewrites both tables so no dead row version keeps the
   * clear values. Answers how many rows it sealed (0 once done: the table's CHECK keeps new rows out of clear).
   */
  async sealClearDetails(): Promise<number> {
    const rows = await this.db.query<InvestorRow>(
      `SELECT ${INVESTOR_COLUMNS} FROM kyc_investors
       WHERE email IS NOT NULL OR first_name IS NOT NULL OR last_name IS NOT NULL OR country IS NOT NULL OR wallet_address IS NOT NULL
          OR proof_message IS NOT NULL OR review_reason IS NOT NULL`,
    );
    const history = await this.db.query<{ id: string; investor_id: string; detail: Record<string, unknown> | string }>(
      "SELECT id::text AS id, investor_id, detail FROM kyc_events WHERE detail_sealed IS NULL AND (detail ? 'walletAddress' OR detail ? 'reason')",
    );
    if (!rows.length && !history.length) return 0;
    await this.db.transaction(async (q) => {
      for (const row of rows) {
        const r = this.toInvestor(row);
        await q.query(
          `UPDATE kyc_investors SET email_hash = $2, email_sealed = $3, details_sealed = $4, reason_sealed = $5, ${NOTHING_IN_CLEAR} WHERE id = $1`,
          [
            r.id,
            this.sealing.emailHash(r.email),
            this.sealing.sealEmail(r.id, r.email),
            r.submittedAt || r.walletAddress
              ? this.sealing.sealDetails(r.id, {
                  firstName: r.firstName,
                  lastName: r.lastName,
                  country: r.country,
                  walletAddress: r.walletAddress,
                  proofMessage: r.proofMessage,
                })
              : null,
            r.reviewReason === null ? null : this.sealing.sealReason(r.id, r.reviewReason),
          ],
        );
      }
      for (const h of history) {
        const { plain, sealed } = this.sealing.splitDetail(
          h.investor_id,
          typeof h.detail === "string" ? (JSON.parse(h.detail) as Record<string, unknown>) : h.detail,
        );
        await q.query("UPDATE kyc_events SET detail = $2, detail_sealed = $3 WHERE id = $1::bigint", [
          h.id,
          JSON.stringify(plain),
          sealed,
        ]);
      }
    });
    await this.db.query("CLUSTER kyc_investors USING kyc_investors_pkey");
    await this.db.query("CLUSTER kyc_events USING kyc_events_pkey");
    return rows.length + history.length;
  }
}

/**
 * A KYC event of the inviting key, in the investor's own order (kyc:<investor id>): identifiers and the onboarding's
 * state only, never the investor's e-mail, names, country, wallet or the reason (read them with get-investors or
 * get-investor-info, which show the record's investorId).
 */
function kycEvent(type: "kyc.submitted" | "kyc.approved" | "kyc.rejected", r: KycInvestorRecord) {
  return {
    type,
    apiKeyId: r.apiKeyId,
    orderingKey: `kyc:${r.id}`,
    data: {
      investorId: r.id,
      status: r.status,
      needKyc: r.needKyc,
      submittedAt: r.submittedAt,
      reviewedAt: r.reviewedAt,
      reviewedBy: r.reviewedBy,
    },
  } as const;
}
