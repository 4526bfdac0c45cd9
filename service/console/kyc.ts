import { runAdminCommand } from "../operator/commands";
import { badRequest, notFound } from "../errors";
import { KYC_STATUSES, type KycInvestorRecord, type KycStatus } from "../store/kyc";
import type { OperatorRecord } from "../store/operators";
import type { Investor } from "../wire/console-changes";
import type { Services } from "../usecases/services";
import { PAGE_SIZE } from "./paging";

/**
 * The KYC review queue: investors by status (submitted ones, awaiting review, by default), oldest first, with what
 * they submitted, the wallet they proved and the message it signed. A page is PAGE_SIZE records from an offset.
 */
export async function kycQueue(
  services: Services,
  query: { status?: KycStatus; before?: string },
): Promise<{ items: Investor[]; next: string | null }> {
  if (query.status !== undefined && !KYC_STATUSES.includes(query.status))
    throw badRequest(`status must be one of ${KYC_STATUSES.join(", ")}`, { field: "status" });
  if (query.before && !/^\d{1,9}$/.test(query.before))
    throw badRequest("before must be the `next` cursor of an earlier page", { field: "before" });
  const offset = Number(query.before ?? 0);
  const [records, keys] = await Promise.all([
    services.kyc.list({ status: query.status ?? "submitted" }),
    services.apiKeys.list(),
  ]);
  const emails = new Map(keys.map((k) => [k.id, k.email]));
  const items = records.slice(offset, offset + PAGE_SIZE).map((r) => investorView(r, emails.get(r.apiKeyId) ?? null));
  return { items, next: records.length > offset + PAGE_SIZE ? String(offset + PAGE_SIZE) : null };
}

export function investorView(r: KycInvestorRecord, keyEmail: string | null): Investor {
  return {
    id: r.id,
    email: r.email,
    keyId: r.apiKeyId,
    keyEmail,
    status: r.status,
    firstName: r.firstName,
    lastName: r.lastName,
    country: r.country,
    walletAddress: r.walletAddress,
    signedMessage: r.proofMessage,
    submittedAt: r.submittedAt,
    reviewedBy: r.reviewedBy,
    decidedBy: r.decidedBy,
    reviewedAt: r.reviewedAt,
    reason: r.reviewReason,
  };
}

/**
 * Approves or rejects an investor: the admin command's own decision (onboarding/provider.ts applyDecision, the same
 * transitions and checks), written to the audit log as this operator's and recorded as decided by this operator
 * (`decidedBy`, shown in the console; tenants see reviewed by "operator": operators' e-mails stay inside). The
 * decision's event (kyc.approved, kyc.rejected) reaches the inviting key's webhooks and streams; the investor's page
 * shows it.
 */
export async function decideKyc(
  services: Services,
  operator: OperatorRecord,
  investorId: string,
  decision: { approve: true } | { reason: string },
): Promise<Investor> {
  const investor = await services.kyc.get(investorId);
  if (!investor) throw notFound(`No investor ${investorId}`, { field: "id" });
  const target = { email: investor.email, keyId: investor.apiKeyId };
  const command =
    "approve" in decision
      ? ({ command: "kyc.approve", ...target } as const)
      : ({ command: "kyc.reject", ...target, reason: decision.reason } as const);
  await runAdminCommand(services, command, { operations: [], actor: operator.email });
  const decided = (await services.kyc.get(investorId))!;
  const key = await services.apiKeys.get(decided.apiKeyId);
  return investorView(decided, key?.email ?? null);
}
