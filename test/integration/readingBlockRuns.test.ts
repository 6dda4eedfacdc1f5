// Blocks are read in runs of days (blockRead.ts: one result row per register and run, each below
// V8's 128 KiB large-object threshold as hex): every block of the range comes back once, in day
// order per register, for every column kind, also across the UTC epoch (day 0: runs cut by
// integer division, which rounds negative days towards zero, made the run around it twice as long
// and over the threshold) and for registers missing different days.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../src/store/database.ts';
import { blockQuery, fetchBlocks, type BlockColumns } from '../../src/store/timeseries/postgres/blockRead.ts';
import { PostgresTimeSeriesStore } from '../../src/store/timeseries/postgres/store.ts';
import { WorkerPool } from '../../src/workerPool.ts';
import { createTestDatabase } from '../support/testApp.ts';

const DAY = 86_400_000;
const IDS = [7, 8, 9];
// A year and a half of quarter-hours from 1969-10-01, across the epoch and several runs of days.
const START = Date.UTC(1969, 9, 1);
const END = Date.UTC(1971, 3, 1);
let pool: Pool;
let store: PostgresTimeSeriesStore;
const workers = new WorkerPool(1, 0);

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), 4, pino({ level: 'silent' }));
  store = new PostgresTimeSeriesStore(pool, workers, 1);
  for (const [k, id] of IDS.entries()) {
    // Each register skips other days, so runs of different registers hold different days.
    const timestamps = Float64Array.from({ length: (END - START) / 900_000 }, (_, i) => START + i * 900_000).filter((t) => Math.floor(t / DAY) % (k + 3) !== 0);
    await store.write({
      rows: {
        registerIds: [id],
        offsets: Int32Array.from([0, timestamps.length]),
        timestamps,
        values: Float64Array.from(timestamps, (_, i) => (i % 97) / 8),
        resolutions: new Int32Array(timestamps.length).fill(900),
      },
      updatedAtMs: Date.UTC(2025, 0, 1),
    });
  }
});
afterAll(async () => {
  await pool?.end();
  await workers.close();
});

const hex = (b: Uint8Array | null | undefined) => (b ? Buffer.from(b).toString('hex') : null);

describe('blocks read in runs of days', () => {
  for (const columns of ['data', 'days'] as BlockColumns[]) {
    it(`every block once, in day order (${columns})`, async () => {
      const start = Date.UTC(1969, 11, 3, 5);
      const end = Date.UTC(1971, 1, 20, 17);
      const got = await fetchBlocks(pool, IDS, start, end, columns, 1);
      const { rows } = await pool.query<{ id: number; day: number; data: Buffer; days: Buffer; updated_max: number }>(
        'SELECT register_id AS id, day, data, days, updated_max FROM reading_blocks WHERE register_id = ANY($1::int[]) AND day >= $2 AND day <= $3 ORDER BY register_id, day',
        [IDS, Math.floor(start / DAY), Math.floor((end - 1) / DAY)],
      );
      for (const id of IDS) {
        const mine = rows.filter((r) => r.id === id);
        const list = got.get(id)!;
        expect(list.map((b) => b.day)).toEqual(mine.map((r) => r.day));
        expect(list.some((b) => b.day < 0) && list.some((b) => b.day > 0)).toBe(true);
        list.forEach((b, i) => {
          const r = mine[i]!;
          expect(hex(b.data)).toBe(columns === 'data' ? hex(r.data) : null);
          if (columns === 'days') {
            expect(hex(b.days)).toBe(hex(r.days));
            expect(b.updatedMax).toBe(r.updated_max);
          }
        });
      }
    });
  }

  it('sends each run below 128 KiB of hex (local days: a row per register), and a range of one run as a row per register', async () => {
    for (const columns of ['data', 'days'] as BlockColumns[]) {
      const { text, values } = blockQuery(columns, IDS, START, Date.UTC(1971, 3, 1));
      const { rows } = await pool.query<{ id: number; bytes: number }>(`SELECT id, length(blob) AS bytes FROM (${text}) s`, values);
      if (columns === 'days') expect(rows).toHaveLength(IDS.length);
      else expect(rows.length).toBeGreaterThan(IDS.length);
      for (const r of rows) expect(2 * r.bytes + 2, columns).toBeLessThan(128 * 1024);
      const month = blockQuery(columns, IDS, Date.UTC(1970, 4, 3), Date.UTC(1970, 5, 3));
      expect((await pool.query(month.text, month.values)).rows, columns).toHaveLength(IDS.length);
    }
  });
});
