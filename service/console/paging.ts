import { badRequest } from "../errors";

/** Rows a console list shows per page. */
export const PAGE_SIZE = 50;

/**
 * Lists are paged on the server, newest first, with a cursor (the last row's time and id): a page costs the same at
 * the ten-thousandth row as at the first, and rows written meanwhile never shift a page. The store is asked for one
 * row more than a page, which says whether there is a next one.
 */
export async function paged<T>(
  fetch: (limit: number) => Promise<T[]>,
  cursorOf: (last: T) => string,
  size = PAGE_SIZE,
): Promise<{ items: T[]; next: string | null }> {
  const rows = await fetch(size + 1);
  const items = rows.slice(0, size);
  return { items, next: rows.length > size ? cursorOf(items[items.length - 1]) : null };
}

/** A time-and-id cursor as `before` carries it: `<ISO time>~<id>`. */
export const timeCursor = (at: string, id: string) => `${at}~${id}`;

/** Reads a `before` cursor made by timeCursor; a malformed one is a 400 naming `before`. */
export function parseTimeCursor(text: string | undefined): { at: string; id: string } | undefined {
  if (text === undefined || text === "") return undefined;
  const [at, id, extra] = text.split("~");
  if (!at || !id || extra !== undefined || Number.isNaN(Date.parse(at)) || !/^[0-9A-Za-z_-]{1,100}$/.test(id)) {
    throw badRequest("before must be the `next` cursor of an earlier page", { field: "before" });
  }
  return { at, id };
}
