import { badRequest, conflict, notFound } from "../errors";
import type { Db } from "../store/db";
import type { KycInvestorRecord, KycStore } from "../store/kyc";
import type { KycLinks } from "../store/kyc-links";

/** Which investor a decision is about: its e-mail, and the inviting key when several keys invited that e-mail. */
export interface KycTarget {
  email: string;
  keyId?: string;
}

/** A decision, and who made it (`by`: an operator's e-mail, or "admin tool"; operators see it, tenants do not). */
export type KycDecision = ({ decision: "approve" } | { decision: "reject"; reason: string }) & { by?: string };

/**
 * Who decides a KYC outcome. This service ships the operator's provider: submissions wait until the operator runs
 * `npm run admin -- kyc approve|reject`. A vendor integration implements the same interface and takes the operator's
 * place: `submitted` hands the submission to the vendor (e.g. opens a verification session for the wallet and the
 * details, and records the vendor's reference as a kyc_events row), and the vendor's webhook route, after checking the
 * vendor's signature on the callback, calls `decide` (through `applyDecision`, which enforces the transitions).
 *
 * Transitions a provider may make: submitted → approved; invited | submitted | approved → rejected (with a reason).
 */
export interface KycProvider {
  /** Recorded as reviewed_by and as the actor of the decision's event. */
  readonly name: string;
  /** Called after a submission is stored (status submitted), outside its transaction. */
  submitted(investor: KycInvestorRecord): Promise<void>;
  /** Records a decision and returns the updated record. */
  decide(target: KycTarget, decision: KycDecision): Promise<KycInvestorRecord>;
}

/** The operator's provider: nothing happens at submission; the operator's commands decide. */
export class OperatorKycProvider implements KycProvider {
  readonly name = "operator";

  constructor(
    private readonly db: Db,
    private readonly store: KycStore,
    private readonly links: KycLinks,
  ) {}

  async submitted(): Promise<void> {
    // The submission waits in `npm run admin -- kyc list --status submitted` for the operator's review.
  }

  decide(target: KycTarget, decision: KycDecision): Promise<KycInvestorRecord> {
    return applyDecision(this.db, this.store, this.links, this.name, target, decision);
  }
}

const REASON_MAX = 500;

/** The one implementation of a decision's transition, whichever provider decides. Writes nothing when refused. */
export async function applyDecision(
  db: Db,
  store: KycStore,
  links: KycLinks,
  actor: string,
  target: KycTarget,
  d: KycDecision,
): Promise<KycInvestorRecord> {
  const email = (target.email ?? "").trim().toLowerCase();
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw badRequest("email must be an e-mail address", { field: "email" });
  let reason: string | null = null;
  if (d.decision === "reject") {
    reason = (d.reason ?? "").trim();
    if (!reason || reason.length > REASON_MAX)
      throw badRequest(`--reason is required (1 to ${REASON_MAX} characters)`, { field: "reason" });
  }
  const candidates = await store.list({ email, keyId: target.keyId });
  if (!candidates.length)
    throw notFound(`No investor ${email} was invited${target.keyId ? ` under key ${target.keyId}` : ""}`, {
      field: "email",
    });
  if (candidates.length > 1) {
    throw badRequest(
      `${candidates.length} keys invited ${email}; name one with --key-id (${candidates.map((c) => c.apiKeyId).join(", ")})`,
      {
        field: "keyId",
        keyIds: candidates.map((c) => c.apiKeyId),
      },
    );
  }
  return db.transaction(async (q) => {
    const current = (await store.lock(q, candidates[0].id))!;
    if (d.decision === "approve") {
      if (current.status !== "submitted") {
        throw conflict(
          `${email} is ${current.status}: only a submitted investor (wallet proven, details given) can be approved`,
          { status: current.status },
        );
      }
      const approved = await store.decide(q, current.id, "approved", actor, null, d.by ?? null);
      await store.addEvent(q, current.id, "approved", actor, { walletAddress: current.walletAddress });
      return approved;
    }
    if (!["invited", "submitted", "approved"].includes(current.status)) {
      throw conflict(`${email} is ${current.status}: only an invited, submitted or approved investor can be rejected`, {
        status: current.status,
      });
    }
    await links.voidLinks(q, current.id);
    const rejected = await store.decide(q, current.id, "rejected", actor, reason, d.by ?? null);
    await store.addEvent(q, current.id, "rejected", actor, { reason, previousStatus: current.status });
    return rejected;
  });
}
