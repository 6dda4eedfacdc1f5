// Converting an installation's row table (`readings`, one row per reading, migrations 002/003)
// into register-day blocks (004), at start and before the store serves: batch after batch of
// registers, each batch one transaction that inserts the blocks and deletes the rows
// (flex_convert_reading_rows), so the conversion resumes wherever a stop or crash left it, and
// a reading is always in exactly one of the two tables. Progress is logged per batch. When no
// row is left the row table is dropped (on a new installation at once: it is empty). Several
// processes starting together (server, CLI) serialize on an advisory lock.
import type { Logger } from 'pino';
import type { Pool, Queryable } from '../../database.ts';

/** Arbitrary but fixed: the advisory lock key of the conversion. */
const CONVERSION_LOCK = 727_274_012;

export interface ConvertOptions {
  /** Registers per transaction. */
  registersPerBatch?: number;
  /** Stop after this many batches (tests: a conversion cut short). */
  maxBatches?: number;
}

/** Converts what is left of the row table; true when it is done (the table is gone). */
export async function convertRows(pool: Pool, log: Pick<Logger, 'info'>, options: ConvertOptions = {}): Promise<boolean> {
  const exists = async (db: Queryable) => (await db.query<{ t: string | null }>("SELECT to_regclass('readings')::text AS t")).rows[0]!.t !== null;
  if (!(await exists(pool))) return true;
  // One connection for everything (a pool of one must do).
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [CONVERSION_LOCK]);
    if (!(await exists(client))) return true;
    const total = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM readings')).rows[0]!.n);
    if (total > 0) log.info({ readings: total }, 'converting stored readings into register-day blocks');
    let moved = 0;
    for (let batch = 0; ; batch += 1) {
      if (options.maxBatches !== undefined && batch >= options.maxBatches) return false;
      const started = Date.now();
      await client.query('BEGIN');
      let n: number;
      try {
        n = Number((await client.query<{ n: string }>('SELECT flex_convert_reading_rows($1) AS n', [options.registersPerBatch ?? 100])).rows[0]!.n);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
      if (n === 0) break;
      moved += n;
      log.info({ readings: moved, of: total, percent: Math.round((1000 * moved) / total) / 10, ms: Date.now() - started }, 'reading conversion progress');
    }
    await client.query('BEGIN');
    await client.query('DROP TABLE readings');
    await client.query('DROP FUNCTION IF EXISTS flex_ensure_reading_partitions(timestamptz[])');
    await client.query('COMMIT');
    if (total > 0) log.info({ readings: moved }, 'readings converted into register-day blocks');
    return true;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [CONVERSION_LOCK]).catch(() => undefined);
    client.release();
  }
}
