// Validated flexibility transactions whose readings were corrected after their figures were
// computed: a reading of the actual register, of the reference register (unless the resource
// uses a zero reference) or of a source of a virtual reference, in the transaction's period,
// updated after the readings the figures came from (`readings_updated_at`, else `validated_at`).
//
// The readings live behind the time-series store (PostgreSQL or QuestDB), so this is two steps:
// the validated transactions of the window are listed here page by page (oldest end first),
// and the store's changedSince() answers each page in one call. Nothing is locked while
// scanning: the job then claims the ids found (validationJob.ts), and only if their
// `validation_attempts` is still the one seen here (nobody re-validated them meanwhile). Final
// settlement lines (agreement.ts) are left out: their figures no longer change.
import { DeliveryValidationStatus } from '../codes.ts';
import { notFinal } from './agreement.ts';
import type { Queryable } from '../store/database.ts';
import type { ChangeQuery, TimeSeriesStore } from '../store/timeseries/types.ts';

/** Transactions listed per page, each asked of the store in one call. */
const PAGE = 1000;

export interface Corrected {
  ids: number[];
  /** validation_attempts of each id when it was found. */
  attempts: number[];
  /** Whether every validated transaction of the window was looked at. */
  exhausted: boolean;
}

interface Candidate {
  id: number;
  attempts: number;
  start: number;
  end: number;
  since: number;
  registers: number[];
}

const ms = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

// The keyset (end, id) pages through the window in the claim order: $1 the window (ms), $2/$3
// the last (end ms, id) seen (-infinity and 0 on the first page), $4 the page size. Written as
// `end >= $2 AND (end > $2 OR id > $3)` rather than a row comparison so that the partial index
// flexibility_transactions_validated ("end") serves it. Transactions without any register
// (nothing to correct) are left out here rather than asked about.
const CANDIDATES_SQL = `WITH k AS (SELECT coalesce(to_timestamp($2::float8 / 1000), '-infinity') AS after_end)
  SELECT t.id, t.validation_attempts AS attempts, ${ms('t.start')} AS start, ${ms('t."end"')} AS "end",
    ${ms('coalesce(t.readings_updated_at, t.validated_at)')} AS since,
    array_remove(ARRAY[r.actual_register_id, CASE WHEN NOT r.use_zero_reference THEN r.reference_register_id END], NULL) || coalesce(v.source_registers, '{}') AS registers
  FROM k, flexibility_transactions t JOIN grid_resources r ON r.id = t.resource_id
  LEFT JOIN virtual_definitions v ON v.register_id = r.reference_register_id
  WHERE t.delivery_validation_status = ${DeliveryValidationStatus.Validated} AND ${notFinal('t')} AND t."end" > now() - ($1::float8 * interval '1 millisecond')
    AND t."end" >= k.after_end AND (t."end" > k.after_end OR t.id > $3::int)
    AND (r.actual_register_id IS NOT NULL OR (NOT r.use_zero_reference AND r.reference_register_id IS NOT NULL) OR v.source_registers IS NOT NULL)
  ORDER BY t."end", t.id LIMIT $4`;

/** Up to `limit` validated transactions of the last `windowMs` whose readings changed. */
export async function findCorrected(db: Queryable, store: TimeSeriesStore, windowMs: number, limit: number): Promise<Corrected> {
  const found: Corrected = { ids: [], attempts: [], exhausted: false };
  let after: { end: number | null; id: number } = { end: null, id: 0 };
  let skipped = false;
  for (;;) {
    const { rows } = await db.query<Candidate>(CANDIDATES_SQL, [windowMs, after.end, after.id, PAGE]);
    const queries: ChangeQuery[] = rows.map((c) => ({ registerIds: c.registers, start: c.start, end: c.end, since: c.since }));
    const changed = queries.length > 0 ? await store.changedSince(queries) : [];
    rows.forEach((c, i) => {
      if (!changed[i]) return;
      if (found.ids.length >= limit) skipped = true;
      else {
        found.ids.push(c.id);
        found.attempts.push(c.attempts);
      }
    });
    if (rows.length < PAGE) {
      found.exhausted = !skipped;
      return found;
    }
    if (found.ids.length >= limit) return found;
    const last = rows[rows.length - 1]!;
    after = { end: last.end, id: last.id };
  }
}
