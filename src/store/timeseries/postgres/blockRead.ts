// Reading register-day blocks out of PostgreSQL. A large read is split into parts (queryParts.ts:
// groups of registers, or whole UTC days of one register) fetched at once on separate
// connections. Each register's blocks come back as bytea (string_agg of day, length and bytes
// per block, hex on the wire, decoded natively by the driver) and are cut apart here: one result
// row per register, not per register-day — 36,500 rows of 100 register-years cost the driver
// more than their bytes — and over ranges longer than RUN_DAYS one per register and run of days:
// the driver turns each field into a string first, and a string over 128 KiB goes to V8's
// large-object space, ~6 ns a byte against ~0.1 below it (a register-year of hourly rollups is
// 360 kB of hex: 2.1 ms of a request's 15 ms on the event loop, 0.03 ms in runs of 64 days;
// docs/benchmarks.md).
import type { Queryable } from '../../database.ts';
import { dayOf } from '../../../shared/readings/blocks.ts';
import type { StoredBlock } from '../../../shared/readings/aggregate.ts';
import { MIN_REGISTER_DAYS_PER_PART, MIN_ROLLUP_BLOCKS_PER_PART, splitQuery } from './queryParts.ts';

export interface BlockRow extends StoredBlock {
  id: number;
}

export type BlockColumns = 'data' | 'hours' | 'both' | 'days';

const DAY = 86_400_000;

/** Days per result row when a register's range is longer: runs whose hex stays below V8's
 * 128 KiB large-object threshold — always for `hours` (≤ 496 bytes a day: 63.5 kB of hex a run),
 * for `data` and `both` while blocks stay under ~1 kB and ~2 kB (96 quarter-hours with one
 * resolution and updatedAt: 782 bytes of data, 484 of hours). `days` (≤ 88 bytes a day: a
 * register-year is 64 kB of hex at most) is one row per register. Runs cost PostgreSQL a sort
 * of the blocks by run (an incremental sort on the primary key's order), so a range that fits in
 * one run is asked without them: measured, runs of 512 days made the blocks of local days of 100
 * register-years 17% slower and runs of 64 days those of 100 register-months 2–11% (A/B in one
 * process, docs/benchmarks.md). */
const RUN_DAYS: Partial<Record<BlockColumns, number>> = { hours: 64, data: 64, both: 32 };

/** The query of fetchPart for these registers and [start, end): name, text and parameters
 * (exported for the benchmark's EXPLAIN). */
export function blockQuery(columns: BlockColumns, ids: readonly number[], start: number, end: number): { name: string; text: string; values: unknown[] } {
  const first = dayOf(start);
  const last = dayOf(end - 1);
  const runDays = RUN_DAYS[columns];
  const runs = runDays !== undefined && last - first + 1 > runDays;
  return { name: `flex_blocks_${columns}${runs ? '_runs' : ''}`, text: blockQuerySql(columns, runs ? runDays : undefined), values: [ids, first, last] };
}

function blockQuerySql(columns: BlockColumns, runDays: number | undefined): string {
  // `days` without its padding: the k pieces written (4 + 24k of 76 bytes).
  const piece =
    columns === 'both'
      ? 'int4send(length(data)) || data || int4send(length(hours)) || hours'
      : columns === 'days'
        ? 'int4send(4 + 24 * get_byte(days, 3)) || substr(days, 1, 4 + 24 * get_byte(days, 3))'
        : `int4send(length(${columns})) || ${columns}`;
  // Runs by arithmetic shift (runDays a power of two): it rounds days before 1970 down, where
  // integer division would round them towards zero and make the run around day 0 twice as long.
  // Rows in register and day order: each register's blocks are read in day order.
  const run = runDays === undefined ? '' : `, day >> ${Math.log2(runDays)}`;
  return `SELECT register_id AS id, string_agg(int4send(day) || ${piece}, ''::bytea ORDER BY day) AS blob
     FROM reading_blocks WHERE register_id = ANY($1::int[]) AND day >= $2 AND day <= $3 GROUP BY register_id${run}${run && ` ORDER BY register_id${run}`}`;
}

/** Blocks of the registers over the UTC days of [start, end), each register's in day order. */
async function fetchPart(db: Queryable, ids: readonly number[], start: number, end: number, columns: BlockColumns): Promise<BlockRow[]> {
  // Named: prepared once per connection, not parsed and planned on every read.
  const { rows } = await db.query<{ id: number; blob: Buffer }>(blockQuery(columns, ids, start, end));
  const out: BlockRow[] = [];
  for (const { id, blob } of rows) {
    let at = 0;
    const next = () => {
      const length = blob.readInt32BE(at);
      at += 4 + length;
      return blob.subarray(at - length, at);
    };
    while (at < blob.length) {
      const day = blob.readInt32BE(at);
      at += 4;
      if (columns === 'days') {
        out.push({ id, day, data: null, hours: null, days: next() });
        continue;
      }
      const data = columns === 'hours' ? null : next();
      const hours = columns === 'data' ? null : next();
      out.push({ id, day, data, hours });
    }
  }
  return out;
}

/** Blocks per register id (each in day order), fetched in up to `parts` parts at once. */
export async function fetchBlocks(db: Queryable, ids: readonly number[], start: number, end: number, columns: BlockColumns, parts: number): Promise<Map<number, BlockRow[]>> {
  const split = splitQuery(ids.length, start, end, parts, DAY, columns === 'hours' || columns === 'days' ? MIN_ROLLUP_BLOCKS_PER_PART : MIN_REGISTER_DAYS_PER_PART);
  const results = await Promise.all(split.map((p) => fetchPart(db, ids.slice(p.from, p.to), p.start, p.end, columns)));
  const out = new Map<number, BlockRow[]>();
  for (const rows of results)
    for (const row of rows) {
      const list = out.get(row.id);
      if (list) list.push(row);
      else out.set(row.id, [row]);
    }
  return out;
}

/** The data (and with `hours`, the hourly rollups) of these blocks (register id, UTC day), set on the rows given. */
export async function fillData(db: Queryable, rows: readonly BlockRow[], hours = false): Promise<void> {
  if (rows.length === 0) return;
  const { rows: found } = await db.query<{ id: number; day: number; data: Buffer; hours: Buffer | null }>(
    `SELECT b.register_id AS id, b.day, b.data, ${hours ? 'b.hours' : 'NULL::bytea AS hours'} FROM reading_blocks b JOIN unnest($1::int[], $2::int[]) AS k(id, day) ON b.register_id = k.id AND b.day = k.day`,
    [rows.map((r) => r.id), rows.map((r) => r.day)],
  );
  const byKey = new Map(found.map((f) => [`${f.id}:${f.day}`, f]));
  for (const r of rows) {
    const f = byKey.get(`${r.id}:${r.day}`);
    r.data = f?.data ?? null;
    if (hours) r.hours = f?.hours ?? null;
  }
}

export interface LocalDays {
  starts: Float64Array;
  ends: Float64Array;
}

/** Answers of localDays by zone and range, for a while: a daily question otherwise asks
 * PostgreSQL each time for the same days. Kept 10 minutes (a zone's rules change with a tzdata
 * update, which PostgreSQL's backends see only when they start anyway), 500 at most. */
const dayCache = new Map<string, { at: number; days: LocalDays }>();
const DAY_CACHE_MS = 600_000;
const DAY_CACHE_SIZE = 500;

/** UTC starts and ends (ms) of the local days of each zone that [start, end) touches, as
 * PostgreSQL computes them (date_trunc('day', … AT TIME ZONE tz) AT TIME ZONE tz), the
 * definition the row store used: same day boundaries on DST days and in gaps at midnight. */
export async function localDays(db: Queryable, zones: readonly string[], start: number, end: number, inTransaction = false): Promise<Map<string, LocalDays>> {
  const out = new Map<string, LocalDays>();
  const now = Date.now();
  const missing: string[] = [];
  for (const tz of zones) {
    const hit = dayCache.get(`${tz}|${start}|${end}`);
    if (hit && now - hit.at < DAY_CACHE_MS) out.set(tz, hit.days);
    else missing.push(tz);
  }
  if (missing.length === 0) return out;
  // In a write's transaction a zone PostgreSQL does not know (its tzdata older than Node's)
  // must not fail the write: the zones are left out (their blocks get no daily pieces).
  if (inTransaction) await db.query('SAVEPOINT flex_local_days');
  const answer = db.query<{ tz: string; starts: number[]; ends: number[] }>(
    `SELECT z.tz, array_agg((extract(epoch FROM d.day AT TIME ZONE z.tz) * 1000)::float8 ORDER BY d.day) AS starts,
       array_agg((extract(epoch FROM (d.day + interval '1 day') AT TIME ZONE z.tz) * 1000)::float8 ORDER BY d.day) AS ends
     FROM unnest($1::text[]) AS z(tz) CROSS JOIN LATERAL generate_series(date_trunc('day', $2::timestamptz AT TIME ZONE z.tz),
       date_trunc('day', ($3::timestamptz - interval '1 microsecond') AT TIME ZONE z.tz), interval '1 day') AS d(day)
     GROUP BY z.tz`,
    [missing, new Date(start), new Date(end)],
  );
  let rows: { tz: string; starts: number[]; ends: number[] }[];
  try {
    rows = (await answer).rows;
  } catch (err) {
    if (!inTransaction) throw err;
    await db.query('ROLLBACK TO SAVEPOINT flex_local_days');
    // Which zone: one by one (each known one still answers).
    if (missing.length > 1) for (const tz of missing) for (const [z, days] of await localDays(db, [tz], start, end, true)) out.set(z, days);
    return out;
  }
  if (inTransaction) await db.query('RELEASE SAVEPOINT flex_local_days');
  for (const r of rows) {
    const days = { starts: Float64Array.from(r.starts.map(Number)), ends: Float64Array.from(r.ends.map(Number)) };
    out.set(r.tz, days);
    if (dayCache.size >= DAY_CACHE_SIZE) dayCache.delete(dayCache.keys().next().value!);
    dayCache.set(`${r.tz}|${start}|${end}`, { at: now, days });
  }
  return out;
}
