import { TtlCache } from "./ttl-cache";

/**
 * Database records kept for `ttlMs`, for reads outside transactions. A write in this process marks its key changed:
 * the entry goes, and the key is read from the database only for the next `ttlMs` (the write may not be committed yet,
 * and a read racing it must not put the old record back). Another process's writes show within `ttlMs`.
 */
export class RecordCache<V> {
  private readonly records: TtlCache<string, V>;
  private readonly changed: TtlCache<string, true>;

  constructor(ttlMs: number, maxEntries = 10_000) {
    this.records = new TtlCache(ttlMs, maxEntries);
    this.changed = new TtlCache(ttlMs, maxEntries);
  }

  /** The kept record, else `load`'s (kept unless undefined or recently changed). */
  async read(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    if (!this.changed.get(key)) {
      const kept = this.records.get(key);
      if (kept !== undefined) return kept;
    }
    const record = await load();
    if (record !== undefined && !this.changed.get(key)) this.records.set(key, record);
    return record;
  }

  markChanged(key: string): void {
    this.changed.set(key, true);
    this.records.delete(key);
  }
}
