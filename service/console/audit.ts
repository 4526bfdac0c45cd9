import { badRequest } from "../errors";
import type { AuditEntry } from "../store/audit-log";
import type { Services } from "../usecases/services";
import { paged } from "./paging";

/** The audit log, newest first, a page at a time (optionally one operator's): the console's Audit page. */
export async function auditPage(
  services: Services,
  query: { before?: string; actor?: string },
): Promise<{ items: AuditEntry[]; next: string | null }> {
  if (query.before && !/^\d{1,18}$/.test(query.before))
    throw badRequest("before must be the `next` cursor of an earlier page", { field: "before" });
  return paged(
    (limit) => services.auditLog.list({ limit, before: query.before || undefined, actor: query.actor || undefined }),
    (last) => last.id,
  );
}
