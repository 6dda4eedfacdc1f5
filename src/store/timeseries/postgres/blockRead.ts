// Reading register-day blocks out of PostgreSQL. A large read is split into parts (queryParts.ts:
// groups of registers, or whole UTC days of one register) fetched at once on separate
// connections. Each register's blocks come back as bytea (string_agg of day, length and bytes
// per block, hex on the wire, decoded natively by the driver) and are cut apart here: one result
// row per register, not per register-day — 36,500 rows of 100 register-years cost the driver
// more than their bytes — and over ranges longer than RUN_DAYS one per register and run of days:
// the driver turns each field into a string first, and a string over 128 KiB goes to V8's
// large-object space, ~6 ns a byte against ~0.1 below it (docs/benchmarks.md).
import type { Queryable } from '../../database.ts';
import { dayOf } from '../../../shared/readings/blocks.ts';
import type { StoredBlock } from '../../../shared/readings/aggregate.ts';
import { MIN_REGISTER_DAYS_PER_PART, MIN_ROLLUP_BLOCKS_PER_PART, splitQuery } from './queryParts.ts';

export interface BlockRow extends StoredBlock {
  id: number;
}

/** What a read needs of each block: its readings, or its daily pieces (with updated_max). */
export type BlockColumns = 'data' | 'days';

const DAY = 86_400_000;

/** SQL of a block's data and history as cut apart by `blocksWithHistory` (and the asOf rows of
 * fetchPart): length and bytes of the data, then of the history (length 0: none). */
export const DATA_AND_HISTORY_SQL = "int4send(length(data)) || data || int4send(coalesce(length(history), 0)) || coalesce(history, ''::bytea)";

export interface BlockWithHistory {
  id: number;
  day: number;
  data: Uint8Array;
  history: Uint8Array | null;
}

/** The blocks of result rows `{id, blob}` whose blob is string_agg of `int4send(day) ||
 * DATA_AND_HISTORY_SQL`, in the blob's order. */
export function blocksWithHistory(rows: readonly { id: number; blob: Buffer }[]): BlockWithHistory[] {
  const out: BlockWithHistory[] = [];
  for (const { id, blob } of rows)
    for (let at = 0; at < blob.length; ) {
      const day = blob.readInt32BE(at);
      const length = blob.readInt32BE(at + 4);
      const data = blob.subarray(at + 8, at + 8 + length);
      at += 8 + length;
      const historyLength = blob.readInt32BE(at);
      out.push({ id, day, data, history: historyLength > 0 ? blob.subarray(at + 4, at + 4 + historyLength) : null });
      at += 4 + historyLength;
    }
  return out;
}

/** Days per result row when a register's range is longer: runs whose hex stays below V8's
 * 128 KiB large-object threshold while blocks stay under ~250 bytes (a day of quarter hours with
 * three decimals is ~100). `days` (≤ 60 bytes a day) is one row per register. Runs cost
 * PostgreSQL a sort of the blocks by run (an incremental sort on the primary key's order), so a
 * range that fits in one run is asked without them. */
const RUN_DAYS: Partial<Record<BlockColumns, number>> = { data: 256 };

/** The query of fetchPart for these registers and [start, end): name, text and parameters
 * (exported for the benchmark's EXPLAIN). With `asOf`, blocks written after that instant come
 * with their data and history instead (flagged), to be rebuilt as they were then. */
export function blockQuery(columns: BlockColumns, ids: readonly number[], start: number, end: number, asOf?: number): { name: string; text: string; values: unknown[] } {
  const first = dayOf(start);
  const last = dayOf(end - 1);
  const runDays = RUN_DAYS[columns];
  const runs = runDays !== undefined && last - first + 1 > runDays;
  const asOfMode = asOf !== undefined;
  return {
    name: `flex_blocks_${columns}${runs ? '_runs' : ''}${asOfMode ? '_asof' : ''}`,
    text: blockQuerySql(columns, runs ? runDays : undefined, asOfMode),
    values: asOfMode ? [ids, first, last, asOf] : [ids, first, last],
  };
}

function blockQuerySql(columns: BlockColumns, runDays: number | undefined, asOf: boolean): string {
  let piece = columns === 'days' ? 'float8send(updated_max) || int4send(length(days)) || days' : 'int4send(length(data)) || data';
  if (asOf)
    piece = `CASE WHEN updated_max > $4 THEN '\\x01'::bytea || ${DATA_AND_HISTORY_SQL}
      ELSE '\\x00'::bytea || ${piece} END`;
  // Runs by arithmetic shift (runDays a power of two): it rounds days before 1970 down, where
  // integer division would round them towards zero and make the run around day 0 twice as long.
  // Rows in register and day order: each register's blocks are read in day order.
  const run = runDays === undefined ? '' : `, day >> ${Math.log2(runDays)}`;
  return `SELECT register_id AS id, string_agg(int4send(day) || ${piece}, ''::bytea ORDER BY day) AS blob
     FROM reading_blocks WHERE register_id = ANY($1::int[]) AND day >= $2 AND day <= $3 GROUP BY register_id${run}${run && ` ORDER BY register_id${run}`}`;
}

/** Blocks of the registers over the UTC days of [start, end), each register's in day order;
 * with `asOf`, those written after it with their data and history (`asOf`: rebuilt when read). */
async function fetchPart(db: Queryable, ids: readonly number[], start: number, end: number, columns: BlockColumns, asOf: number | undefined): Promise<BlockRow[]> {
  // Named: prepared once per connection, not parsed and planned on every read.
  const { rows } = await db.query<{ id: number; blob: Buffer }>(blockQuery(columns, ids, start, end, asOf));
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
      if (asOf !== undefined && blob[at++] === 1) {
        const data = next();
        const history = next();
        out.push({ id, day, data: null, asOf: { at: asOf, data, history } });
        continue;
      }
      if (columns === 'days') {
        const updatedMax = blob.readDoubleBE(at);
        at += 8;
        out.push({ id, day, data: null, days: next(), updatedMax });
        continue;
      }
      out.push({ id, day, data: next() });
    }
  }
  return out;
}

/** Blocks per register id (each in day order), fetched in up to `parts` parts at once. */
export async function fetchBlocks(db: Queryable, ids: readonly number[], start: number, end: number, columns: BlockColumns, parts: number, asOf?: number): Promise<Map<number, BlockRow[]>> {
  const split = splitQuery(ids.length, start, end, parts, DAY, columns === 'days' ? MIN_ROLLUP_BLOCKS_PER_PART : MIN_REGISTER_DAYS_PER_PART);
  const results = await Promise.all(split.map((p) => fetchPart(db, ids.slice(p.from, p.to), p.start, p.end, columns, asOf)));
  const out = new Map<number, BlockRow[]>();
  for (const rows of results)
    for (const row of rows) {
      const list = out.get(row.id);
      if (list) list.push(row);
      else out.set(row.id, [row]);
    }
  return out;
}

/** The data of these blocks (register id, UTC day), set on the rows given; with `asOf`, a block
 * written since (after the first read) is rebuilt as recorded then. */
export async function fillData(db: Queryable, rows: BlockRow[], asOf?: number): Promise<void> {
  if (rows.length === 0) return;
  const { rows: found } = await db.query<{ id: number; day: number; data: Buffer; history: Buffer | null; updated_max: number }>(
    `SELECT b.register_id AS id, b.day, b.data, ${asOf === undefined ? 'NULL::bytea AS history, 0::float8 AS updated_max' : 'b.history, b.updated_max'}
     FROM reading_blocks b JOIN unnest($1::int[], $2::int[]) AS k(id, day) ON b.register_id = k.id AND b.day = k.day`,
    [rows.map((r) => r.id), rows.map((r) => r.day)],
  );
  const byKey = new Map(found.map((f) => [`${f.id}:${f.day}`, f]));
  for (const r of rows) {
    const f = byKey.get(`${r.id}:${r.day}`);
    if (f && asOf !== undefined && f.updated_max > asOf) {
      r.data = null;
      r.asOf = { at: asOf, data: f.data, history: f.history ?? Buffer.alloc(0) };
    } else r.data = f?.data ?? null;
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
