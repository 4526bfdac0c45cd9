import type { AuditEntry, AuditFilter } from "../store/audit-log";
import type { Services } from "../usecases/services";
import { listPage, parseIdCursor, type ListPage } from "./paging";
import type { AuditQuery } from "./queries";

/** One field that differs between an entry's before and after. */
export interface AuditChange {
  path: string;
  change: "added" | "removed" | "changed";
  before: string | null;
  after: string | null;
}

export type AuditView = AuditEntry & { changes: AuditChange[]; unchanged: number };

/** Shown of a value at most (the whole entry stays in the JSON's before and after). */
const VALUE_SHOWN = 200;
/** Changes listed per entry at most. */
const CHANGES_SHOWN = 50;

/**
 * The audit log, newest first, a page at a time both ways: by operator, action, target and time. Each entry carries
 * what changed, field by field (before → after), so fifty entries read as fifty short lists, not as raw JSON.
 */
export async function auditPage(services: Services, query: AuditQuery): Promise<ListPage<AuditView>> {
  const filter: AuditFilter = {
    actor: query.actor,
    action: query.action,
    target: query.target,
    from: query.from,
    to: query.to,
  };
  const before = parseIdCursor(query.before, "before");
  const after = parseIdCursor(query.after, "after");
  const page = await listPage(
    (limit) => services.auditLog.list({ ...filter, before, after, limit }),
    (first) => services.auditLog.count(filter, first?.id),
    (row) => row.id,
  );
  return { ...page, items: page.items.map(withChanges) };
}

export function withChanges(entry: AuditEntry): AuditView {
  const { changes, unchanged } = auditChanges(entry.before, entry.after);
  return { ...entry, changes, unchanged };
}

/** The fields of `before` and `after` (objects flattened to paths) that were added, removed or changed. */
export function auditChanges(before: unknown, after: unknown): { changes: AuditChange[]; unchanged: number } {
  const was = flatten(before);
  const is = flatten(after);
  const paths = [...new Set([...was.keys(), ...is.keys()])];
  const changes: AuditChange[] = [];
  let unchanged = 0;
  for (const path of paths) {
    const a = was.get(path);
    const b = is.get(path);
    if (a !== undefined && b !== undefined && a === b) {
      unchanged++;
      continue;
    }
    changes.push({
      path,
      change: a === undefined ? "added" : b === undefined ? "removed" : "changed",
      before: a === undefined ? null : cut(a),
      after: b === undefined ? null : cut(b),
    });
  }
  return { changes: changes.slice(0, CHANGES_SHOWN), unchanged };
}

/** Leaves of a JSON value by path (a.b, a[0]); a value that is not an object is one leaf at "". */
function flatten(value: unknown, path = "", into = new Map<string, string>()): Map<string, string> {
  if (value === undefined || (value === null && !path)) return into;
  if (value === null) return into.set(path, "null");
  if (Array.isArray(value) && value.length && value.every((v) => v !== null && typeof v === "object")) {
    value.forEach((v, i) => flatten(v, `${path}[${i}]`, into));
  } else if (typeof value === "object" && !Array.isArray(value) && Object.keys(value).length) {
    for (const [k, v] of Object.entries(value)) flatten(v, path ? `${path}.${k}` : k, into);
  } else {
    into.set(path, JSON.stringify(value));
  }
  return into;
}

const cut = (text: string) => (text.length > VALUE_SHOWN ? `${text.slice(0, VALUE_SHOWN)}…` : text);
