// The PostgreSQL write of a whole batch: binary COPY (rows encoded in a worker, or here for rows
// that come in as columns) in one transaction. When none of the batch's (register, time range)
// pairs has stored rows, the COPY goes straight into `readings` (the fast path). Otherwise —
// corrections — it goes into a temporary table merged with INSERT … ON CONFLICT DO UPDATE, which
// replaces values and moves updated_at. A concurrent writer that slips in between the check and
// the COPY makes the fast path fail with a unique violation; the write is then retried on the
// merge path. Either way the batch is all or nothing.
import { from as copyFrom } from 'pg-copy-streams';
import type { Pool, PoolClient, Queryable } from '../../database.ts';
import { sqlState } from '../../retry.ts';
import { encodeCopy, fillRegisterIds } from '../../../../workers/readings/pgCopy.ts';
import { monthsOf } from '../../../../workers/readings/parseReadings.ts';
import type { ReadingRows } from '../types.ts';

export const COPY_SQL = 'COPY readings (register_id, ts, value, resolution, updated_at) FROM STDIN (FORMAT binary)';
/** Whether any register ($1[i]) already has a reading in [$2[i], $3[i]]: corrections take the merge path. */
const OVERLAP_SQL = `SELECT EXISTS (SELECT 1 FROM unnest($1::int[], $2::timestamptz[], $3::timestamptz[]) u(id, lo, hi)
  WHERE EXISTS (SELECT 1 FROM readings r WHERE r.register_id = u.id AND r.ts BETWEEN u.lo AND u.hi)) AS overlap`;
const COPY_CHUNK = 1 << 20;

/** Creates the monthly partitions (UTC month starts) that do not exist yet. Run in a short
 * transaction of its own: creating a partition locks the parent table. */
export async function ensurePartitions(db: Queryable, months: readonly number[]): Promise<void> {
  await db.query('SELECT flex_ensure_reading_partitions($1::timestamptz[])', [months.map((m) => new Date(m))]);
}

export async function overlaps(db: Queryable, registerIds: readonly number[], lows: readonly number[], highs: readonly number[]): Promise<boolean> {
  const { rows } = await db.query<{ overlap: boolean }>(OVERLAP_SQL, [registerIds, lows.map((t) => new Date(t)), highs.map((t) => new Date(t))]);
  return rows[0]!.overlap;
}

async function writeCopy(client: PoolClient, sql: string, payload: Buffer): Promise<void> {
  const stream = client.query(copyFrom(sql));
  await new Promise<void>((resolve, reject) => {
    stream.on('error', reject);
    stream.on('finish', resolve);
    let at = 0;
    const pump = () => {
      while (at < payload.length) {
        const chunk = payload.subarray(at, at + COPY_CHUNK);
        at += chunk.length;
        if (!stream.write(chunk)) return void stream.once('drain', pump);
      }
      stream.end();
    };
    pump();
  });
}

async function merge(client: PoolClient, payload: Buffer): Promise<void> {
  await client.query('CREATE TEMP TABLE readings_incoming (register_id int, ts timestamptz, value float8, resolution int, updated_at timestamptz) ON COMMIT DROP');
  await writeCopy(client, 'COPY readings_incoming (register_id, ts, value, resolution, updated_at) FROM STDIN (FORMAT binary)', payload);
  await client.query(
    `INSERT INTO readings (register_id, ts, value, resolution, updated_at) SELECT register_id, ts, value, resolution, updated_at FROM readings_incoming
     ON CONFLICT (register_id, ts) DO UPDATE SET value = EXCLUDED.value, resolution = EXCLUDED.resolution, updated_at = EXCLUDED.updated_at`,
  );
}

async function transaction(pool: Pool, fn: (client: PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await fn(client);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Writes the rows atomically. `payload` is their COPY encoding (header, rows, trailer) with
 * register ids still 0, when a worker made it; otherwise it is encoded here.
 */
export async function writeRows(pool: Pool, rows: ReadingRows, updatedAtMs: number, payload?: Buffer): Promise<void> {
  if (rows.timestamps.length === 0) return;
  const copy = payload ?? encodeCopy(rows.timestamps, rows.values, rows.resolutions, updatedAtMs);
  fillRegisterIds(copy, rows.offsets, rows.registerIds);
  await ensurePartitions(pool, monthsOf(rows.timestamps));
  const ids: number[] = [];
  const lows: Date[] = [];
  const highs: Date[] = [];
  for (let s = 0; s < rows.registerIds.length; s += 1) {
    const from = rows.offsets[s]!;
    const to = rows.offsets[s + 1]!;
    if (to === from) continue;
    ids.push(rows.registerIds[s]!);
    lows.push(new Date(rows.timestamps[from]!));
    highs.push(new Date(rows.timestamps[to - 1]!));
  }
  try {
    await transaction(pool, async (client) => {
      const { rows: found } = await client.query<{ overlap: boolean }>(OVERLAP_SQL, [ids, lows, highs]);
      if (found[0]!.overlap) await merge(client, copy);
      else await writeCopy(client, COPY_SQL, copy);
    });
  } catch (err) {
    if (sqlState(err) !== '23505') throw err;
    await transaction(pool, (client) => merge(client, copy));
  }
}
