// Reading register-day blocks out of PostgreSQL. A large read is split into parts (queryParts.ts:
// groups of registers, or whole UTC days of one register) fetched at once on separate
// connections; each block comes back as bytea (hex on the wire, decoded natively by the driver).
import type { Queryable } from '../../database.ts';
import { dayOf } from '../../../../workers/readings/blocks.ts';
import type { StoredBlock } from '../../../../workers/readings/aggregate.ts';
import { splitQuery } from './queryParts.ts';

export interface BlockRow extends StoredBlock {
  id: number;
  n: number;
}

export type BlockColumns = 'data' | 'hours' | 'both';

const DAY = 86_400_000;

/** Blocks of the registers over the UTC days of [start, end), ordered by register and day. */
async function fetchPart(db: Queryable, ids: readonly number[], start: number, end: number, columns: BlockColumns): Promise<BlockRow[]> {
  const data = columns === 'hours' ? 'NULL::bytea AS data' : 'data';
  const hours = columns === 'data' ? 'NULL::bytea AS hours' : 'hours';
  const { rows } = await db.query<BlockRow>(
    `SELECT register_id AS id, day, n, ${data}, ${hours} FROM reading_blocks WHERE register_id = ANY($1::int[]) AND day >= $2 AND day <= $3 ORDER BY register_id, day`,
    [ids, dayOf(start), dayOf(end - 1)],
  );
  return rows;
}

/** Blocks per register id (each in day order), fetched in up to `parts` parts at once. */
export async function fetchBlocks(db: Queryable, ids: readonly number[], start: number, end: number, columns: BlockColumns, parts: number): Promise<Map<number, BlockRow[]>> {
  const split = splitQuery(ids.length, start, end, parts, DAY);
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

/** The data of these blocks (register id, UTC day), set on the rows given. */
export async function fillData(db: Queryable, rows: readonly BlockRow[]): Promise<void> {
  if (rows.length === 0) return;
  const { rows: found } = await db.query<{ id: number; day: number; data: Buffer }>(
    'SELECT b.register_id AS id, b.day, b.data FROM reading_blocks b JOIN unnest($1::int[], $2::int[]) AS k(id, day) ON b.register_id = k.id AND b.day = k.day',
    [rows.map((r) => r.id), rows.map((r) => r.day)],
  );
  const byKey = new Map(found.map((f) => [`${f.id}:${f.day}`, f.data]));
  for (const r of rows) r.data = byKey.get(`${r.id}:${r.day}`) ?? null;
}

/** UTC starts and ends (ms) of the local days of each zone that [start, end) touches, as
 * PostgreSQL computes them (date_trunc('day', … AT TIME ZONE tz) AT TIME ZONE tz), the
 * definition the row store used: same day boundaries on DST days and in gaps at midnight. */
export async function localDays(db: Queryable, zones: readonly string[], start: number, end: number): Promise<Map<string, { starts: Float64Array; ends: Float64Array }>> {
  const { rows } = await db.query<{ tz: string; starts: number[]; ends: number[] }>(
    `SELECT z.tz, array_agg((extract(epoch FROM d.day AT TIME ZONE z.tz) * 1000)::float8 ORDER BY d.day) AS starts,
       array_agg((extract(epoch FROM (d.day + interval '1 day') AT TIME ZONE z.tz) * 1000)::float8 ORDER BY d.day) AS ends
     FROM unnest($1::text[]) AS z(tz) CROSS JOIN LATERAL generate_series(date_trunc('day', $2::timestamptz AT TIME ZONE z.tz),
       date_trunc('day', ($3::timestamptz - interval '1 microsecond') AT TIME ZONE z.tz), interval '1 day') AS d(day)
     GROUP BY z.tz`,
    [zones, new Date(start), new Date(end)],
  );
  return new Map(rows.map((r) => [r.tz, { starts: Float64Array.from(r.starts.map(Number)), ends: Float64Array.from(r.ends.map(Number)) }]));
}
