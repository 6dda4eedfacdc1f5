// A read split into parts (QUERY_PARTS) answers exactly like the same read as one query: by
// registers, by time at bucket boundaries, with unaligned starts, for every bucket kind.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../src/store/database.ts';
import { PostgresTimeSeriesStore } from '../../src/store/timeseries/postgres/store.ts';
import type { BucketQuery } from '../../src/store/timeseries/types.ts';
import { WorkerPool } from '../../src/workerPool.ts';
import { createTestDatabase } from '../support/testApp.ts';

const DAY = 86_400_000;
const START = Date.UTC(2024, 2, 1); // spans the European DST change of 31 March
const DAYS = 70;
// 30 registers × 70 days: reads of rollups split too (MIN_ROLLUP_BLOCKS_PER_PART).
const IDS = Array.from({ length: 30 }, (_, k) => 11 + k);
let pool: Pool;
let whole: PostgresTimeSeriesStore;
let split: PostgresTimeSeriesStore;
// Rows are written as columns: no worker thread is started.
const workers = new WorkerPool(1, 0);

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), 8, pino({ level: 'silent' }));
  whole = new PostgresTimeSeriesStore(pool, workers, 1);
  split = new PostgresTimeSeriesStore(pool, workers, 4);
  const n = (DAYS * DAY) / 900_000;
  for (const [k, id] of IDS.entries()) {
    // Irregular values, a gap of a day in the middle, resolutions that vary.
    const timestamps = Float64Array.from({ length: n }, (_, i) => START + i * 900_000).filter((t) => Math.floor((t - START) / DAY) !== 20 + k);
    await whole.write({
      rows: {
        registerIds: [id],
        offsets: Int32Array.from([0, timestamps.length]),
        timestamps,
        values: Float64Array.from(timestamps, (t, i) => Math.sin(i / 7 + k) * 10 + (t % 7)),
        resolutions: Int32Array.from(timestamps, (_, i) => (i % 5 === 0 ? 300 : 900)),
      },
      updatedAtMs: Date.UTC(2024, 5, 1) + k,
    });
  }
});
afterAll(async () => {
  await pool?.end();
  await workers.close();
});

/** JSON arrays by register id as text (a failing comparison of megabytes of Buffers takes minutes to print). */
const texts = (m: Map<number, Buffer>) => Object.fromEntries([...m].map(([id, json]) => [id, json.toString()]));

describe('split reads', () => {
  const ranges = [
    [START, START + DAYS * DAY],
    [START + 450_000, START + DAYS * DAY - 1_000],
  ] as const;

  it('read readings as stored identically', async () => {
    for (const [start, end] of ranges) {
      for (const registerIds of [IDS, [IDS[1]!]]) {
        const a = await whole.readJson({ registerIds, start, end }, 1_000_000);
        const b = await split.readJson({ registerIds, start, end }, 1_000_000);
        expect(texts(b)).toEqual(texts(a));
        expect(a.size).toBe(registerIds.length);
      }
    }
  });

  it('read buckets identically (epoch buckets and local days)', async () => {
    for (const [start, end] of ranges) {
      for (const resolutionSeconds of [3600, 7200, 86400]) {
        for (const ids of [IDS, [IDS[0]!], [IDS[2]!]]) {
          const q: BucketQuery = {
            registers: ids.map((id) => ({ id, aggregate: id === IDS[1] ? 'avg' : 'sum', timeZone: id === IDS[2] ? 'Asia/Kolkata' : 'Europe/Amsterdam' })),
            start,
            end,
            resolutionSeconds,
          };
          const a = await whole.bucketsJson(q);
          const b = await split.bucketsJson(q);
          expect(texts(b)).toEqual(texts(a));
          expect(a.size).toBe(ids.length);
        }
      }
    }
  });
});
