/**
 * What the service's database did per kind of work, read from its /metrics (tak_db_round_trips_total,
 * tak_db_statements_total, tak_db_seconds_total: service/store/db-work.ts), so that a bench can divide what a run added
 * by the operations it ran.
 */
export interface DbWorkFigures {
  trips: number;
  statements: number;
  ms: number;
}

export type DbWorkByKind = Record<string, DbWorkFigures>;

const SERIES: [string, keyof DbWorkFigures, number][] = [
  ["tak_db_round_trips_total", "trips", 1],
  ["tak_db_statements_total", "statements", 1],
  ["tak_db_seconds_total", "ms", 1000],
];

export async function readDbWork(serviceUrl: string): Promise<DbWorkByKind> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const byKind: DbWorkByKind = {};
  for (const [name, field, scale] of SERIES) {
    for (const match of text.matchAll(new RegExp(`^${name}\\{work="([^"]*)"\\} ([0-9.e+-]+)$`, "gm"))) {
      byKind[match[1]] ??= { trips: 0, statements: 0, ms: 0 };
      byKind[match[1]][field] = Number(match[2]) * scale;
    }
  }
  return byKind;
}

/** Per operation, what `after` added to `before` for each of `kinds` (summed over several services' readings). */
export function perOperation(
  before: DbWorkByKind[],
  after: DbWorkByKind[],
  kinds: string[],
  operations: number,
): Record<string, DbWorkFigures> {
  const result: Record<string, DbWorkFigures> = {};
  const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;
  for (const kind of kinds) {
    const delta = { trips: 0, statements: 0, ms: 0 };
    after.forEach((a, i) => {
      for (const field of ["trips", "statements", "ms"] as const)
        delta[field] += (a[kind]?.[field] ?? 0) - (before[i]?.[kind]?.[field] ?? 0);
    });
    const n = Math.max(1, operations);
    result[kind] = {
      trips: round(delta.trips / n, 2),
      statements: round(delta.statements / n, 2),
      ms: round(delta.ms / n, 2),
    };
  }
  return result;
}

/** The two requests of a paid relayed operation (x402 agentCreateToken prepared, then sent with its payment). */
export const PAID_RELAYED_KINDS = ["POST /x402/token/create", "POST /send-transactions"];

/** One line: "POST /x402/token/create: 4 trips / 5 statements / 3.1 ms awaited; …; together: …". */
export function describeDbWork(figures: Record<string, DbWorkFigures>): string {
  const round = (v: number) => Math.round(v * 100) / 100;
  const total = { trips: 0, statements: 0, ms: 0 };
  for (const f of Object.values(figures))
    for (const field of ["trips", "statements", "ms"] as const) total[field] = round(total[field] + f[field]);
  const one = (f: DbWorkFigures) => `${f.trips} trips / ${f.statements} statements / ${f.ms} ms awaited`;
  return [...Object.entries(figures).map(([kind, f]) => `${kind}: ${one(f)}`), `together: ${one(total)}`].join("; ");
}
