/**
 * A bounded in-memory map whose entries expire `ttlMs` after they were set (Infinity: never; they only leave when the
 * map is full, oldest first). Each service process has its own: what it caches must be either immutable or safe to
 * serve for `ttlMs` after another process changed it.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number }>();

  constructor(
    readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key); // re-inserted last: the oldest entry is the first one to go
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
    const now = Date.now();
    this.entries.set(key, { value, expires: now + this.ttlMs });
    // Entries set earlier expire earlier: each set drops up to two expired ones from the front, so the map holds about
    // what was set within one ttl, not maxEntries entries that nobody reads again.
    for (let i = 0; i < 2; i++) {
      const oldest = this.entries.entries().next().value;
      if (!oldest || oldest[1].expires > now) break;
      this.entries.delete(oldest[0]);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches (e.g. every cached verification of one revoked key). */
  deleteWhere(matches: (value: V, key: K) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
