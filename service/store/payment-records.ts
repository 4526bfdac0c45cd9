import type { Sealer } from "../crypto/sealed";

// How payments are held as records: the row read back, its secrets sealed (opened only when read).

export type PaymentStatus = "reserved" | "settling" | "settled" | "released";

export interface PaymentRecord {
  id: string;
  subject: string;
  route: string;
  txId: string | null;
  network: string;
  asset: string;
  payTo: string;
  amount: string;
  payer: string;
  authorizationNonce: string;
  validBefore: number;
  /**
   * The payer's signed payment payload (its EIP-3009 authorization): held sealed only while the payment is reserved or
   * settling, opened when read here (so a dump of the table holds nothing usable); null once settled or released.
   */
  payload: any;
  /** The quote it paid (scheme, network, asset, amount, payTo, maxTimeoutSeconds, extra): nothing in it can move money. */
  requirements: any;
  status: PaymentStatus;
  /** The signed settlement transaction (sealed at rest), kept while settling so a restart can re-send it; null once ended. */
  settleTxRaw: string | null;
  settleTxHash: string | null;
  /** Earlier settlement transactions replaced by the current one (same nonce, higher fees): any of them may be mined. */
  settleTxReplaced: { hash: string; raw: string }[];
  settlement: any;
  releaseReason: string | null;
  /**
   * Settled inside the relayed operation's own transaction (EIP-7702, contracts/payments/PaidRelayDelegate.sol), not
   * by a transaction of its own: its fate is that transaction's.
   */
  settleInOperation: boolean;
}

/** A payment's sealed payload and settlement transaction are bound to the payment (the sealed value's purpose). */
export const payloadPurpose = (id: string) => `payment:${id}`;
export const settlementPurpose = (id: string) => `payment-settlement:${id}`;

/**
 * A payment row as a record. The sealed payload is opened only when `payload` is read (most reads never need it); a
 * value that cannot be opened (DATA_ENCRYPTION_KEY changed) throws then, with a reason the settlement reports.
 */
/** The columns a reservation inserts ($1… in this order), beside its status. */
export const RESERVED_COLUMNS = [
  "id",
  "subject",
  "route",
  "tx_id",
  "network",
  "asset",
  "pay_to",
  "amount",
  "payer",
  "authorization_nonce",
  "valid_before",
  "payload_sealed",
  "requirements",
] as const;

/** What a reservation of `p` inserts under `id` (addresses and nonce lowercased, the quote as JSON text). */
export function reservedRow(
  id: string,
  p: Pick<
    PaymentRecord,
    | "subject"
    | "route"
    | "txId"
    | "network"
    | "asset"
    | "payTo"
    | "amount"
    | "payer"
    | "authorizationNonce"
    | "validBefore"
    | "requirements"
  >,
  payloadSealed: string,
): Record<(typeof RESERVED_COLUMNS)[number], string | number | null> {
  return {
    id,
    subject: p.subject,
    route: p.route,
    tx_id: p.txId,
    network: p.network,
    asset: p.asset.toLowerCase(),
    pay_to: p.payTo.toLowerCase(),
    amount: BigInt(p.amount).toString(),
    payer: p.payer.toLowerCase(),
    authorization_nonce: p.authorizationNonce.toLowerCase(),
    valid_before: p.validBefore,
    payload_sealed: payloadSealed,
    requirements: JSON.stringify(p.requirements),
  };
}

/** A reservation's row as a read gives it: what it inserted (reservedRow) and the columns it leaves to their defaults. */
export function reservedAsRead(written: ReturnType<typeof reservedRow>): Record<string, unknown> {
  return {
    ...written,
    requirements: JSON.parse(written.requirements as string),
    status: "reserved",
    settle_tx_raw: null,
    settle_tx_hash: null,
    settle_tx_replaced: [],
    settlement: null,
    release_reason: null,
    settle_in_operation: false,
  };
}

export function toRecord(r: any, sealer: Sealer): PaymentRecord {
  const record = {
    id: r.id,
    subject: r.subject,
    route: r.route,
    txId: r.tx_id,
    network: r.network,
    asset: r.asset,
    payTo: r.pay_to,
    amount: r.amount,
    payer: r.payer,
    authorizationNonce: r.authorization_nonce,
    validBefore: Number(r.valid_before),
    requirements: r.requirements,
    status: r.status,
    settleTxRaw: r.settle_tx_raw === null ? null : openSettlement(sealer, r.id, r.settle_tx_raw),
    settleTxHash: r.settle_tx_hash,
    settleTxReplaced: (
      (typeof r.settle_tx_replaced === "string" ? JSON.parse(r.settle_tx_replaced) : r.settle_tx_replaced) ?? []
    ).map((e: { hash: string; raw?: string | null }) => ({
      hash: e.hash,
      raw: e.raw ? openSettlement(sealer, r.id, e.raw) : null,
    })),
    settlement: r.settlement,
    releaseReason: r.release_reason,
    settleInOperation: r.settle_in_operation === true,
  } as PaymentRecord;
  let opened: unknown;
  // Enumerable, so a copy of the record (spread) still carries the payload to whoever settles it.
  Object.defineProperty(record, "payload", {
    enumerable: true,
    get() {
      if (opened !== undefined) return opened;
      if (r.payload_sealed) {
        try {
          opened = JSON.parse(sealer.open(r.payload_sealed, payloadPurpose(r.id)));
        } catch {
          throw new Error("the payment's sealed authorization cannot be opened with this DATA_ENCRYPTION_KEY");
        }
      } else {
        // A payload stored in clear before sealing existed (sealClearSecrets seals it at start), or none (ended).
        opened = typeof r.payload === "string" ? JSON.parse(r.payload) : (r.payload ?? null);
      }
      return opened;
    },
  });
  return record;
}

/** A settlement transaction stored before sealing existed is still 0x hex; anything else is sealed. */
function openSettlement(sealer: Sealer, id: string, stored: string): string | null {
  if (stored.startsWith("0x")) return stored;
  try {
    return sealer.open(stored, settlementPurpose(id));
  } catch {
    return null; // unreadable with this key: the settlement is awaited by its hash alone
  }
}

/** A record's fields but its payload (read without opening it: the payload getter unseals). */
export function fieldsOf(p: PaymentRecord): Omit<PaymentRecord, "payload"> {
  const {
    id,
    subject,
    route,
    txId,
    network,
    asset,
    payTo,
    amount,
    payer,
    authorizationNonce,
    validBefore,
    requirements,
    status,
  } = p;
  const { settleTxRaw, settleTxHash, settleTxReplaced, settlement, releaseReason, settleInOperation } = p;
  return {
    id,
    subject,
    route,
    txId,
    network,
    asset,
    payTo,
    amount,
    payer,
    authorizationNonce,
    validBefore,
    requirements,
    status,
    settleTxRaw,
    settleTxHash,
    settleTxReplaced,
    settlement,
    releaseReason,
    settleInOperation,
  };
}
