// Converting an installation's row table (`readings`, one row per reading, migrations 002/003)
// into register-day blocks (004), at start and before the store serves: batch after batch of
// registers, each batch one transaction that inserts the blocks and deletes the rows
// (flex_convert_reading_rows), so the conversion resumes wherever a stop or crash left it, and
// a reading is always in exactly one of the two tables. Progress is logged per batch. When no
// row is left the row table is dropped (on a new installation at once: it is empty). Several
// processes starting together (server, CLI) serialize on an advisory lock. runConversion is the
// loop shared with the conversion of blocks to the compact encoding (convertBlocks.ts). The row
// table becomes blocks of the first format (reading_blocks_v1), which that one then converts.
import type { Logger } from 'pino';
import type { Pool, PoolClient, Queryable } from '../../database.ts';

/** Arbitrary but fixed: the advisory lock key of each conversion, by the table it empties. */
const LOCKS: Record<string, number> = { readings: 727_274_012, reading_block_days_pending: 727_274_013, reading_blocks_v1: 727_274_014 };

export interface ConvertOptions {
  /** Registers per transaction. */
  registersPerBatch?: number;
  /** Stop after this many batches (tests: a conversion cut short). */
  maxBatches?: number;
}

/** A conversion at start of what a table lists (this one and convertBlocks.ts's). */
export interface Conversion {
  /** What is left to convert, one row a `unit`; dropped when a batch finds nothing left.
   * Processes starting together (server, CLI) serialize on an advisory lock (LOCKS). */
  table: string;
  unit: string;
  /** Log messages: at start, per batch (progress), at the end. */
  messages: [string, string, string];
  /** One batch, in its own transaction: how many units it converted, 0 when nothing was left. */
  batch(client: PoolClient): Promise<number>;
  /** In the transaction that drops the table. */
  finish?(client: PoolClient): Promise<void>;
}

/** Runs a conversion batch after batch on one connection, logging progress; true when done (the
 * table is gone), false when stopped after maxBatches. Resumes wherever a stop or crash left it. */
export async function runConversion(pool: Pool, log: Pick<Logger, 'info'>, options: { maxBatches?: number }, c: Conversion): Promise<boolean> {
  const lock = LOCKS[c.table]!;
  const exists = async (db: Queryable) => (await db.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [c.table])).rows[0]!.t !== null;
  if (!(await exists(pool))) return true;
  // One connection for everything (a pool of one must do).
  const client = await pool.connect();
  const transaction = async <T>(fn: () => Promise<T>): Promise<T> => {
    await client.query('BEGIN');
    try {
      const result = await fn();
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  };
  try {
    await client.query('SELECT pg_advisory_lock($1)', [lock]);
    if (!(await exists(client))) return true;
    const total = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${c.table}`)).rows[0]!.n);
    if (total > 0) log.info({ [c.unit]: total }, c.messages[0]);
    let done = 0;
    for (let batch = 0; ; batch += 1) {
      if (options.maxBatches !== undefined && batch >= options.maxBatches) return false;
      const started = Date.now();
      const n = await transaction(() => c.batch(client));
      if (n === 0) break;
      done += n;
      log.info({ [c.unit]: done, of: total, percent: Math.round((1000 * done) / Math.max(total, 1)) / 10, ms: Date.now() - started }, c.messages[1]);
    }
    await transaction(async () => {
      await client.query(`DROP TABLE ${c.table}`);
      await c.finish?.(client);
    });
    if (total > 0) log.info({ [c.unit]: done }, c.messages[2]);
    return true;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [lock]).catch(() => undefined);
    client.release();
  }
}

/** Converts what is left of the row table; true when it is done (the table is gone). */
export async function convertRows(pool: Pool, log: Pick<Logger, 'info'>, options: ConvertOptions = {}): Promise<boolean> {
  return runConversion(pool, log, options, {
    table: 'readings',
    unit: 'readings',
    messages: ['converting stored readings into register-day blocks', 'reading conversion progress', 'readings converted into register-day blocks'],
    batch: async (client) => Number((await client.query<{ n: string }>('SELECT flex_convert_reading_rows($1) AS n', [options.registersPerBatch ?? 100])).rows[0]!.n),
    finish: async (client) => void (await client.query('DROP FUNCTION IF EXISTS flex_ensure_reading_partitions(timestamptz[])')),
  });
}
