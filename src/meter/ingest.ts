// POST /api/readings, after the request is admitted: the body goes to the time-series store,
// which has it parsed, validated and encoded in the worker pool and asks this module for the
// register ids of the (meter, register) externalIds it names: resolved and access-checked in one
// query. The store writes the whole batch atomically; nothing is stored unless everything is valid.
import { HttpError, badRequest, type FieldError } from '../http/errors.ts';
import type { Principal } from '../http/types.ts';
import type { Queryable } from '../store/database.ts';
import type { ParsedSeries, TimeSeriesStore } from '../store/timeseries/types.ts';

const MAX_LISTED = 20;

interface SeriesRow {
  i: number;
  meter: number | null;
  register: number | null;
  virtual: boolean | null;
  elsewhere: boolean;
  access: boolean;
}

/** A (meter, register) pair named by externalIds, as POST /api/readings and the CSV import name them. */
export interface SeriesName {
  meterId: string;
  registerId: string;
}

/** What a named series resolves to: its register id, or why readings cannot be stored for it
 * (`on` says whether the meter or the register field is at fault). */
export type SeriesLookup = { registerId: number } | { on: 'meter' | 'register'; message: string };

/** Resolves series names in one query, with the same rules for the API and the CSV import:
 * unknown meter, no access (when an organization is given), unknown register, register on another
 * meter, virtual register. `numericIds` (the command-line tools): a name that matches no externalId
 * but is a number is taken as the meter's or register's numeric id; an externalId always wins. */
export async function lookupSeries(db: Queryable, series: readonly SeriesName[], organizationId: number | null, numericIds = false): Promise<SeriesLookup[]> {
  const { rows } = await db.query<SeriesRow>(
    `SELECT q.i::int AS i, m.id AS meter, r.id AS register, r.is_virtual AS virtual,
       EXISTS (SELECT 1 FROM registers o WHERE o.external_id = q.register_ext) AS elsewhere,
       (m.id IS NOT NULL AND ($3::int IS NULL OR EXISTS (SELECT 1 FROM meter_organizations mo WHERE mo.meter_id = m.id AND mo.organization_id = $3))) AS access
     FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS q(meter_ext, register_ext, i)
     LEFT JOIN LATERAL (
       SELECT id, 0 AS rank FROM meters WHERE external_id = q.meter_ext
       UNION ALL SELECT id, 1 FROM meters WHERE $4 AND q.meter_ext ~ '^[1-9][0-9]{0,8}$' AND id = q.meter_ext::int
       ORDER BY rank LIMIT 1) m ON true
     LEFT JOIN LATERAL (
       SELECT id, is_virtual, 0 AS rank FROM registers WHERE meter_id = m.id AND external_id = q.register_ext
       UNION ALL SELECT id, is_virtual, 1 FROM registers WHERE $4 AND meter_id = m.id AND q.register_ext ~ '^[1-9][0-9]{0,8}$' AND id = q.register_ext::int
       ORDER BY rank LIMIT 1) r ON true
     ORDER BY q.i`,
    [series.map((s) => s.meterId), series.map((s) => s.registerId), organizationId, numericIds],
  );
  return rows.map((row, k): SeriesLookup => {
    const s = series[k]!;
    // For an organization, another organization's meter and a meter that does not exist get the
    // same refusal, and so do a register on another meter and one that does not exist: the texts
    // must not tell which ids exist elsewhere. Without one (the command-line tools, global
    // administrators), the refusal says which.
    if (organizationId !== null && (row.meter === null || !row.access)) {
      return { on: 'meter', message: `unknown meter ${JSON.stringify(s.meterId)}, or not shared with organization ${organizationId}` };
    }
    if (row.meter === null) return { on: 'meter', message: `unknown meter ${JSON.stringify(s.meterId)}` };
    if (row.register === null) {
      if (organizationId !== null) return { on: 'register', message: `unknown register ${JSON.stringify(s.registerId)} on meter ${JSON.stringify(s.meterId)}` };
      return {
        on: 'register',
        message: row.elsewhere ? `register ${JSON.stringify(s.registerId)} is not on meter ${JSON.stringify(s.meterId)}` : `unknown register ${JSON.stringify(s.registerId)}`,
      };
    }
    if (row.virtual) return { on: 'register', message: `register ${JSON.stringify(s.registerId)} is virtual: its readings are computed, not posted` };
    return { registerId: row.register };
  });
}

/** The 400 of a batch naming meters or registers it may not write (the refusal metric tells it
 * apart from invalid values). */
export class UnknownSeries extends HttpError {}

/** Register ids of the series, or a 400 listing unknown meters/registers (those of meters not
 * shared with the caller's organization alike) and virtual registers. */
export async function resolveSeries(db: Queryable, series: readonly ParsedSeries[], principal: Principal): Promise<number[]> {
  const organizationId = principal.globalAdmin ? null : principal.organizationId;
  const lookups = await lookupSeries(db, series, organizationId);
  const errors: FieldError[] = [];
  const ids: number[] = [];
  const reportedMeters = new Set<string>();
  lookups.forEach((lookup, k) => {
    const s = series[k]!;
    if ('registerId' in lookup) {
      ids.push(lookup.registerId);
      return;
    }
    const problem: FieldError = { path: lookup.on === 'meter' ? s.meterPath : s.registerPath, message: lookup.message };
    // One message per meter problem, however many of its registers are named.
    const key = problem.path === s.meterPath ? `m:${s.meterPath}` : `r:${s.registerPath}`;
    if (!reportedMeters.has(key) && errors.length < MAX_LISTED) errors.push(problem);
    reportedMeters.add(key);
    ids.push(0);
  });
  if (errors.length > 0) throw new UnknownSeries('validation_failed', 'Invalid readings: nothing was stored', { errors });
  return ids;
}

export async function ingestReadings(db: Queryable, store: TimeSeriesStore, principal: Principal, body: Buffer): Promise<number> {
  const outcome = await store.write({ body, resolve: (series) => resolveSeries(db, series, principal) });
  if (outcome.ok) return outcome.readings;
  if (outcome.syntax) throw new HttpError('malformed_json', outcome.errors[0]!.message);
  throw badRequest('Invalid readings: nothing was stored', outcome.errors);
}
