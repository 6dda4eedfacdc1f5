// The instants settlement answers are given for (docs/products.md, "Versions and asOf").
//
// Settlement lines, validations and settlement responses are versioned by the writer's instant
// (migration 003: taken once per database transaction under a shared advisory lock, rounded up
// to the millisecond). A reader answers "as of" an instant no writer can still record at:
// settlement_read_instant() is the earlier of now and the start of the oldest transaction still
// writing, rounded down to the millisecond. The versions are then read in a LATER statement (a
// fresh snapshot, in which every writer of that instant has committed): the same request with
// the same asOf gives the same bytes, whenever it is asked again.
import { badRequest } from '../http/errors.ts';
import type { Queryable } from '../store/database.ts';

export interface Instants {
  /** The latest instant an answer may be given for now (UTC ms). */
  now: number;
  /** When versions began (UTC ms): nothing can be answered for an earlier instant. */
  historyStart: number;
}

/** Run in a statement of its own, before the statement that reads versions. */
export const INSTANTS_SQL = `SELECT (extract(epoch FROM settlement_read_instant()) * 1000)::float8 AS now,
  (SELECT (extract(epoch FROM starts_at) * 1000)::float8 FROM settlement_history) AS "historyStart"`;

export async function readInstants(db: Queryable): Promise<Instants> {
  const { rows } = await db.query<Instants>(INSTANTS_SQL);
  return rows[0]!;
}

/** The instant to answer for: `requested` (UTC ms) if it is neither later than now nor before
 * the history began, else a 400 naming the limit; `now` when none was asked for. */
export function answerInstant(instants: Instants, requested: number | undefined, path = 'query.asOf'): number {
  if (requested === undefined) return instants.now;
  if (requested > instants.now) throw badRequest(`${path.replace('query.', '')} is later than now`, [{ path, message: `must not be later than ${iso(instants.now)}` }]);
  if (requested < instants.historyStart) {
    throw badRequest(`Settlement history starts at ${iso(instants.historyStart)}`, [{ path, message: `must not be earlier than ${iso(instants.historyStart)}, when settlement versions began` }]);
  }
  return requested;
}

export const iso = (ms: number) => new Date(ms).toISOString();

/** SQL: a timestamptz column as ISO 8601 UTC with milliseconds, like Date#toISOString. */
export const isoSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
