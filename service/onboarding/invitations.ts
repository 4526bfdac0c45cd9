import { randomUUID } from "node:crypto";
import { INVITATION_CREDIT_METHOD } from "../model/plans";
import { conflict, outOfCredits } from "../errors";
import type { ApiKeyRecord } from "../store/api-keys";
import type { KycInvestorRecord } from "../store/kyc";
import type { KycLinkRecord } from "../store/kyc-links";
import { linkExpiry, linkUrl, newLinkToken, newNonce, sealLinkToken } from "./links";
import { invitationMail } from "./mailer";
import type { Stores } from "../store/stores";
import type { Config } from "../config";
import type { Logger } from "../logger";
import type { Mailer } from "./mailer";

/** What a KYC invitation uses. */
export type InvitationServices = Pick<Stores, "credits" | "db" | "kyc" | "kycLinks" | "sealer"> & {
  baseUrl: string;
  config: Config;
  logger: Logger;
  mailer?: Mailer;
};

export const INVITATION_LIMIT_MESSAGE = "Invitation credit limit exceeded";

export interface KycLinkResponse {
  email: string;
  needKyc: boolean;
  userCreated: boolean;
  invitationSent: boolean;
  url: string | null;
  kycStatus: KycInvestorRecord["status"];
  expiresAt: string | null;
}

/**
 * POST /create-kyc-link: registers the investor in the key's tokenizer scope and, with needKyc, issues a fresh
 * single-use link (voiding the previous ones). One invitation credit per accepted call; refusals write nothing.
 *
 * | current \ call | needKyc true                       | needKyc false                     |
 * |----------------|------------------------------------|-----------------------------------|
 * | (unknown)      | invited, new link (userCreated)    | none, no link (userCreated)       |
 * | none           | invited, new link                  | none, no link                     |
 * | invited        | invited, fresh link, old voided    | 409 (KYC was requested)           |
 * | submitted      | invited, fresh link (submission discarded) | 409                       |
 * | rejected       | invited, fresh link (a new attempt) | 409                              |
 * | approved       | 409 (already approved)             | 409                               |
 *
 * The e-mail goes out after the records are committed: a mail failure leaves a valid link (returned in `url`) and
 * answers invitationSent false.
 */
export async function createKycLink(
  services: InvitationServices,
  apiKey: ApiKeyRecord,
  input: { email: string; needKyc: boolean },
): Promise<KycLinkResponse> {
  const email = input.email.trim().toLowerCase();
  const { kyc, kycLinks } = services;
  const { investor, link, token, userCreated } = await services.db.transaction(async (q) => {
    // Serializes invitations of one e-mail, so two concurrent calls cannot both create it.
    await q.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`kyc:${email}`]);
    const scope = await kyc.scopeOfKey(apiKey.id, q);
    const found = await kyc.findInScope(scope, apiKey.id, email, q);
    let current = found && (await kyc.lock(q, found.id));
    if (current?.status === "approved") {
      throw conflict(
        `${email} is already approved (wallet ${current.walletAddress}); the operator must reject it before it is onboarded again`,
        {
          field: "email",
          kycStatus: current.status,
        },
      );
    }
    if (current && !input.needKyc && current.needKyc) {
      throw conflict(`${email} was invited with KYC (status ${current.status}); needKyc cannot be withdrawn`, {
        field: "needKyc",
        kycStatus: current.status,
      });
    }
    const spent = await services.credits.spend(q, apiKey.id, INVITATION_CREDIT_METHOD, `kyc:${randomUUID()}`);
    if (!spent.ok) throw outOfCredits(INVITATION_CREDIT_METHOD, INVITATION_LIMIT_MESSAGE);

    const created = !current;
    if (!current) {
      current = await kyc.insert(q, {
        id: randomUUID(),
        apiKeyId: apiKey.id,
        email,
        needKyc: input.needKyc,
        status: input.needKyc ? "invited" : "none",
      });
      await kyc.addEvent(q, current.id, "created", `key:${apiKey.id}`, { needKyc: input.needKyc });
    } else if (input.needKyc) {
      const voided = await kycLinks.voidLinks(q, current.id);
      const previousStatus = current.status;
      current = await kyc.restart(q, current.id, true, "invited");
      await kyc.addEvent(q, current.id, "reinvited", `key:${apiKey.id}`, { previousStatus, voidedLinks: voided });
    }
    let issued: { record: KycLinkRecord; token: string } | undefined;
    if (input.needKyc) {
      const token = newLinkToken();
      const record = await kycLinks.insertLink(q, {
        token,
        tokenSealed: sealLinkToken(services.sealer, token),
        investorId: current.id,
        nonce: newNonce(),
        expiresAt: linkExpiry(services.config.KYC_LINK_TTL_HOURS),
      });
      await kyc.addEvent(q, current.id, "link", `key:${apiKey.id}`, { expiresAt: record.expiresAt });
      issued = { record, token };
    }
    return { investor: current, link: issued?.record, token: issued?.token, userCreated: created };
  });

  const url = link && token ? linkUrl(services.baseUrl, token) : null;
  let invitationSent = false;
  if (link && url && services.mailer) {
    try {
      const { messageId } = await services.mailer.send(invitationMail({ to: email, url, expiresAt: link.expiresAt }));
      await kycLinks.recordInvitation(link.tokenHash, { messageId });
      invitationSent = true;
    } catch (error) {
      services.logger.warn(
        { err: (error as Error).message, investorId: investor.id },
        "KYC invitation e-mail was not sent",
      );
      await kycLinks.recordInvitation(link.tokenHash, { error: (error as Error).message });
    }
  }
  return {
    email,
    needKyc: input.needKyc,
    userCreated,
    invitationSent,
    url,
    kycStatus: investor.status,
    expiresAt: link?.expiresAt ?? null,
  };
}
