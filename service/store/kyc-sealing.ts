import type { Sealer } from "../crypto/sealed";

/**
 * How an investor's personal details are kept at rest (migration 056): sealed with the data key, each bound to its
 * record (a value moved to another row cannot be opened there), and the e-mail also as a keyed hash, the only thing a
 * query looks it up by. Rows an older version wrote in clear are read as they are until the next start seals them.
 */
export class KycSealing {
  constructor(private readonly sealer: Sealer) {}

  /** The keyed hash an investor's e-mail (lower-cased) is looked up by. */
  emailHash(email: string): string {
    return this.sealer.keyedHash(email.trim().toLowerCase(), "kyc-email");
  }

  sealEmail(investorId: string, email: string): string {
    return this.sealer.seal(email.trim().toLowerCase(), `kyc-investor:${investorId}:email`);
  }

  openEmail(investorId: string, sealed: string): string {
    return this.sealer.open(sealed, `kyc-investor:${investorId}:email`);
  }

  sealDetails(investorId: string, details: SealedDetails): string {
    return this.sealer.seal(JSON.stringify(details), `kyc-investor:${investorId}:details`);
  }

  openDetails(investorId: string, sealed: string): SealedDetails {
    return JSON.parse(this.sealer.open(sealed, `kyc-investor:${investorId}:details`)) as SealedDetails;
  }

  sealReason(investorId: string, reason: string): string {
    return this.sealer.seal(reason, `kyc-investor:${investorId}:reason`);
  }

  openReason(investorId: string, sealed: string): string {
    return this.sealer.open(sealed, `kyc-investor:${investorId}:reason`);
  }

  /** A history entry's personal fields (a wallet, a reason), sealed for its investor; the rest stays readable. */
  splitDetail(
    investorId: string,
    detail: Record<string, unknown>,
  ): { plain: Record<string, unknown>; sealed: string | null } {
    const personal = Object.fromEntries(Object.entries(detail).filter(([k]) => PERSONAL_DETAIL_KEYS.includes(k)));
    const plain = Object.fromEntries(Object.entries(detail).filter(([k]) => !PERSONAL_DETAIL_KEYS.includes(k)));
    return {
      plain,
      sealed: Object.keys(personal).length
        ? this.sealer.seal(JSON.stringify(personal), `kyc-event:${investorId}:detail`)
        : null,
    };
  }

  joinDetail(investorId: string, plain: Record<string, unknown>, sealed: string | null): Record<string, unknown> {
    return sealed
      ? {
          ...plain,
          ...(JSON.parse(this.sealer.open(sealed, `kyc-event:${investorId}:detail`)) as Record<string, unknown>),
        }
      : plain;
  }
}

/** What an investor submitted, sealed in one value. */
export interface SealedDetails {
  firstName: string | null;
  lastName: string | null;
  country: string | null;
  walletAddress: string | null;
  proofMessage: string | null;
}

/** The keys of a history entry's detail that are personal data. */
export const PERSONAL_DETAIL_KEYS = ["walletAddress", "reason"];
