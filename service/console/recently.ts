import type { Services } from "../usecases/services";

const kept = new WeakMap<Services, Map<string, { at: number; value: Promise<unknown> }>>();

/**
 * A figure read at most every `ttlMs` for one service (every page reading it within that time shares one read; a read
 * that fails is forgotten): for what moves slowly and costs a scan, such as a day's activity, a week's totals or a
 * wallet's day of spend. Pages that read themselves again every 15 s then cost one scan per period, not one each.
 */
export function recently<T>(services: Services, key: string, ttlMs: number, read: () => Promise<T>): Promise<T> {
  let figures = kept.get(services);
  if (!figures) kept.set(services, (figures = new Map()));
  const known = figures.get(key);
  if (known && Date.now() - known.at < ttlMs) return known.value as Promise<T>;
  const value = read();
  figures.set(key, { at: Date.now(), value });
  value.catch(() => {
    if (figures.get(key)?.value === value) figures.delete(key);
  });
  return value;
}
