// Helpers of the QuestDB store tests that open stores directly (no app): a register's evenly
// spaced rows, and dropping a test's own table from the shared QuestDB server.
import pg from 'pg';
import { pino } from 'pino';
import { afterAll } from 'vitest';
import { createPool, type Pool } from '../../src/store/database.ts';
import { versionsTableOf } from '../../src/store/timeseries/questdb/versions.ts';
import type { ReadingRows } from '../../src/store/timeseries/types.ts';
import { WorkerPool } from '../../src/workerPool.ts';
import { createTestDatabase } from './testApp.ts';

/** `n` readings of one register every 15 minutes from `start`, values 0, 1, 2, … */
export const quarterHourRows = (registerId: number, start: number, n: number): ReadingRows => ({
  registerIds: [registerId],
  offsets: Int32Array.from([0, n]),
  timestamps: Float64Array.from({ length: n }, (_, i) => start + i * 900_000),
  values: Float64Array.from({ length: n }, (_, i) => i),
  resolutions: new Int32Array(n).fill(900),
});

/** Drops `table` and its versions table on the QuestDB at `pgUrl` (nothing when no QuestDB is configured). */
export async function dropQuestDbTable(pgUrl: string | undefined, table: string): Promise<void> {
  if (!pgUrl) return;
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  for (const name of [table, versionsTableOf(table)]) await client.query(`DROP TABLE IF EXISTS ${name}`);
  await client.end();
}

/** A QuestDB store test's setting: the URLs (undefined without a QuestDB), its own table, a
 * worker pool, and platform databases made on demand; all closed, and the table dropped, after
 * the file's tests. */
export function questdbStoreSetting(tablePrefix: string) {
  const httpUrl = process.env.QUESTDB_HTTP_URL;
  const pgUrl = process.env.QUESTDB_PG_URL;
  const table = `${tablePrefix}_${process.pid}`;
  const workers = new WorkerPool(1);
  const pools: Pool[] = [];
  afterAll(async () => {
    for (const pool of pools) await pool.end();
    await workers.close();
    if (httpUrl) await dropQuestDbTable(pgUrl, table);
  });
  return {
    httpUrl,
    pgUrl,
    table,
    workers,
    /** A fresh platform database's pool. */
    async database(): Promise<Pool> {
      const pool = createPool(await createTestDatabase(), 4, pino({ level: 'silent' }));
      pools.push(pool);
      return pool;
    },
  };
}
