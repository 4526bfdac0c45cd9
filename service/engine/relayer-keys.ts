import type { KeySource } from "../signers/key-sources";
import type { ServiceSigner } from "../signers/signer";
import type { RelayerKeyRecord, RelayerKeyState } from "../store/relayer-keys";

/**
 * How a relayer key stands in this instance: `starting` (added; its nonces and delegation are being set up, no batch
 * is prepared for it yet), `active` (new batches are prepared for it), `draining` (no new batch; what was prepared or
 * is in flight for it is still signed, sent, bumped and healed with it).
 */
export type KeyStanding = "starting" | "active" | "draining";

interface HeldKey {
  signer: ServiceSigner;
  standing: KeyStanding;
}

/** What applying the operator's records changed: keys to set up before they take batches, and keys let go. */
export interface RingChanges {
  starting: { chainId: number; signer: ServiceSigner }[];
  removed: { chainId: number; address: string }[];
}

/**
 * The relayer's keys per chain as this instance holds them: the configuration's (RELAYER_PRIVATE_KEY first, then
 * RELAYER_EXTRA_PRIVATE_KEYS), with the operator's records (store/relayer-keys.ts) applied over them: a key added joins
 * as starting, a draining key takes no new batch, a removed key is let go. A record for one chain wins over the record
 * for every chain (chain 0).
 */
export class RelayerKeyRing {
  private readonly held = new Map<number, HeldKey[]>();
  /** Keys this ring opened from records (not the configuration's), by lower-case address: closed once no chain holds them. */
  private readonly opened = new Map<string, ServiceSigner>();

  constructor(configured: Map<number, ServiceSigner[]>) {
    for (const [chainId, signers] of configured)
      this.held.set(
        chainId,
        signers.map((signer) => ({ signer, standing: "active" })),
      );
  }

  has(chainId: number): boolean {
    return this.held.has(chainId);
  }

  chains(): number[] {
    return [...this.held.keys()];
  }

  /** Every key this instance still signs with on `chainId` (starting, active and draining), the configuration's first. */
  all(chainId: number): ServiceSigner[] {
    return (this.held.get(chainId) ?? []).map((k) => k.signer);
  }

  /** The keys new batches are prepared for on `chainId`. */
  active(chainId: number): ServiceSigner[] {
    return (this.held.get(chainId) ?? []).filter((k) => k.standing === "active").map((k) => k.signer);
  }

  find(chainId: number, address: string): ServiceSigner | undefined {
    return this.entry(chainId, address)?.signer;
  }

  standing(chainId: number, address: string): KeyStanding | undefined {
    return this.entry(chainId, address)?.standing;
  }

  /** A starting key whose nonces and delegation are set up takes batches (unless it was drained meanwhile). */
  activate(chainId: number, address: string): void {
    const key = this.entry(chainId, address);
    if (key?.standing === "starting") key.standing = "active";
  }

  /**
   * Brings the ring in line with `records`: keys added are opened with `open` (once per address) and join as
   * starting, states change, removed keys leave. Answers the keys still starting (to be set up) and those that left.
   * A key that cannot be opened here is left out and reported through `failed`; it is tried again next time.
   */
  apply(
    records: RelayerKeyRecord[],
    open: (source: KeySource) => ServiceSigner,
    failed: (record: RelayerKeyRecord, error: Error) => void,
  ): RingChanges {
    const changes: RingChanges = { starting: [], removed: [] };
    for (const chainId of this.chains()) {
      const keys = this.held.get(chainId)!;
      for (const record of decisive(records, chainId)) {
        const at = keys.findIndex((k) => k.signer.address.toLowerCase() === record.address.toLowerCase());
        if (record.state === "removed") {
          if (at >= 0) {
            keys.splice(at, 1);
            changes.removed.push({ chainId, address: record.address });
          }
          continue;
        }
        if (at >= 0) {
          keys[at].standing = nextStanding(keys[at].standing, record.state);
          continue;
        }
        if (!record.source) continue; // a key of another instance's configuration: not this one's to sign with
        const signer = this.openOnce(record, open, failed);
        if (signer) keys.push({ signer, standing: record.state === "draining" ? "draining" : "starting" });
      }
      for (const key of keys) if (key.standing === "starting") changes.starting.push({ chainId, signer: key.signer });
    }
    void this.closeUnheld();
    return changes;
  }

  private openOnce(
    record: RelayerKeyRecord,
    open: (source: KeySource) => ServiceSigner,
    failed: (record: RelayerKeyRecord, error: Error) => void,
  ) {
    const id = record.address.toLowerCase();
    let signer = this.opened.get(id);
    if (signer) return signer;
    try {
      signer = open(record.source!);
    } catch (error) {
      failed(record, error as Error);
      return undefined;
    }
    if (signer.address.toLowerCase() !== id) {
      void signer.close();
      failed(record, new Error(`the key at its source is ${signer.address}, not ${record.address}`));
      return undefined;
    }
    this.opened.set(id, signer);
    return signer;
  }

  private async closeUnheld(): Promise<void> {
    const held = new Set(this.chains().flatMap((chainId) => this.all(chainId).map((s) => s.address.toLowerCase())));
    for (const [id, signer] of this.opened) {
      if (held.has(id)) continue;
      this.opened.delete(id);
      await signer.close();
    }
  }

  /** Lets go of the keys this ring opened (the configuration's are closed with the service's wallets). */
  async close(): Promise<void> {
    this.held.clear();
    await this.closeUnheld();
  }

  private entry(chainId: number, address: string): HeldKey | undefined {
    return this.held.get(chainId)?.find((k) => k.signer.address.toLowerCase() === address.toLowerCase());
  }
}

/** Per address, the record that decides on `chainId`: the chain's own, else the one for every chain. */
export function decisive(records: RelayerKeyRecord[], chainId: number): RelayerKeyRecord[] {
  const byAddress = new Map<string, RelayerKeyRecord>();
  for (const record of records) {
    if (record.chainId !== chainId && record.chainId !== 0) continue;
    const id = record.address.toLowerCase();
    const current = byAddress.get(id);
    if (!current || (current.chainId === 0 && record.chainId === chainId)) byAddress.set(id, record);
  }
  return [...byAddress.values()];
}

/** A held key's standing once its record says `state` (not removed): a starting key stays starting until set up. */
function nextStanding(current: KeyStanding, state: Exclude<RelayerKeyState, "removed">): KeyStanding {
  if (state === "draining") return "draining";
  return current === "draining" ? "active" : current;
}
