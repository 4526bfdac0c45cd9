import { badRequest } from "../errors";

/** Rows a console list shows per page. */
export const PAGE_SIZE = 50;

/** A page of a list: its rows, the cursors of the pages beside it, and where it stands in the whole. */
export interface ListPage<T> {
  items: T[];
  /** Cursor of the next (older) page, to pass as `before`; null on the last page. */
  next: string | null;
  /** Cursor of the previous (newer) page, to pass as `after`; null on the first page. */
  previous: string | null;
  /** Rows the filters match. */
  total: number;
  /** The 1-based place of the page's first row among them (0 when the page is empty). */
  first: number;
}

/**
 * Lists are paged on the server, newest first, with cursors (a row's time and id): a page costs the same at the
 * ten-thousandth row as at the first, and rows written meanwhile never shift a page. `fetch` reads the page (older
 * than `before`, newer than `after`, or the newest); `count` says how many rows match and how many are newer than the
 * page's first row, which places the page and says whether there are pages on either side.
 */
export async function listPage<T>(
  fetch: (limit: number) => Promise<T[]>,
  count: (first: T | undefined) => Promise<{ total: number; newer: number }>,
  cursorOf: (row: T) => string,
  size = PAGE_SIZE,
): Promise<ListPage<T>> {
  const items = await fetch(size);
  const { total, newer } = await count(items[0]);
  const last = items[items.length - 1];
  return {
    items,
    next: last && newer + items.length < total ? cursorOf(last) : null,
    previous: items.length && newer > 0 ? cursorOf(items[0]) : null,
    total,
    first: items.length ? newer + 1 : 0,
  };
}

/** A time-and-id cursor as `before` and `after` carry it: `<ISO time>~<id>`. */
export const timeCursor = (at: string, id: string) => `${at}~${id}`;

/**
 * Reads a cursor made by timeCursor whose id matches `id` (a txId, a uuid); a malformed one is a 400 naming the field
 * it came in (`before` or `after`).
 */
export function parseTimeCursor(
  text: string | undefined,
  field: "before" | "after",
  id: RegExp,
): { at: string; id: string } | undefined {
  if (text === undefined || text === "") return undefined;
  const [at, rowId, extra] = text.split("~");
  if (!at || !rowId || extra !== undefined || Number.isNaN(Date.parse(at)) || !id.test(rowId))
    throw badRequest(`${field} must be the cursor of a page beside this one (its next or previous)`, { field });
  return { at, id: rowId };
}

/** Reads a cursor that is a row's number (an audit entry's, a delivery's). */
export function parseIdCursor(text: string | undefined, field: "before" | "after"): string | undefined {
  if (text === undefined || text === "") return undefined;
  if (!/^\d{1,18}$/.test(text))
    throw badRequest(`${field} must be the cursor of a page beside this one (its next or previous)`, { field });
  return text;
}

/** Reads a cursor that is an endpoint's id. */
export function parseEndpointCursor(text: string | undefined, field: "before" | "after"): string | undefined {
  if (text === undefined || text === "") return undefined;
  if (!/^wh_[0-9a-z_]{1,64}$/.test(text))
    throw badRequest(`${field} must be the cursor of a page beside this one (its next or previous)`, { field });
  return text;
}

export const TX_ID = /^0x[0-9a-f]{64}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
