// Regression: QuestDB reads take their rows one by one from a checked-out PostgreSQL-wire
// connection (streamRows in src/store/timeseries/questdb/store.ts). As first written, nothing
// listened for that connection's 'error' event while the read ran, so QuestDB going away mid-read
// (a restart, a network cut) was an uncaught exception that would stop the process. Now the read
// fails with the error, and the next read, once QuestDB is back, answers in full.
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../src/store/database.ts';
import { WorkerPool } from '../../src/workerPool.ts';
import { tcpRelay } from '../support/tcpRelay.ts';
import { createTestDatabase } from '../support/testApp.ts';

const questdbHttp = process.env.QUESTDB_HTTP_URL;
const questdbPg = process.env.QUESTDB_PG_URL;
const table = `regr_lost_${process.pid}`;
const workers = new WorkerPool(1);
const pools: Pool[] = [];

afterAll(async () => {
  for (const p of pools) await p.end();
  await workers.close();
  if (!questdbPg) return;
  const client = new pg.Client({ connectionString: questdbPg });
  await client.connect();
  for (const name of [table, `${table}_versions`]) await client.query(`DROP TABLE IF EXISTS ${name}`).catch(() => undefined);
  await client.end();
});

describe.skipIf(!questdbHttp || !questdbPg)('QuestDB (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => {
  it('a read whose QuestDB connection is lost mid-result fails, and the process goes on', async () => {
    const { QuestDbTimeSeriesStore } = await import('../../src/store/timeseries/questdb/store.ts');
    const log = pino({ level: 'silent' });
    const pool = createPool(await createTestDatabase(), 4, log);
    pools.push(pool);
    const cable = await tcpRelay(new URL(questdbPg!), 8812);
    const pgUrl = new URL(questdbPg!);
    pgUrl.host = `127.0.0.1:${cable.port}`;
    const store = await QuestDbTimeSeriesStore.connect({ httpUrl: questdbHttp!, pgUrl: pgUrl.toString(), table, purgeIntervalMs: 0 }, { pool, workers, log });
    try {
      const n = 100_000;
      const start = Date.UTC(2030, 0, 1);
      const timestamps = Float64Array.from({ length: n }, (_, i) => start + i * 60_000);
      const rows = { registerIds: [1], offsets: Int32Array.from([0, n]), timestamps, values: Float64Array.from({ length: n }, (_, i) => i), resolutions: new Int32Array(n).fill(60) };
      expect(await store.write({ rows, updatedAtMs: Date.now() })).toEqual({ ok: true, readings: n });
      const range = { registerIds: [1], start, end: start + n * 60_000 };
      // Cut once ~64 KB of the ~5 MB answer has come back.
      const cut = cable.cutAfter(64 * 1024);
      await expect(store.readSeries(range)).rejects.toThrow();
      await cut;
      const again = await store.readSeries(range);
      expect(again[0]!.timestamps.length).toBe(n);
      expect(again[0]!.values[n - 1]).toBe(n - 1);
    } finally {
      await store.close();
      cable.close();
    }
  }, 120_000);
});
