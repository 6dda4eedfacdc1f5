// Migrations 004 and 010 on an installation with data: the row table (`readings`, 002/003) is
// converted into register-day blocks of the first format, those into the compact encoding, each
// batch by batch, resumably, with progress, and every reading comes out as it went in (time,
// value, resolution, updatedAt), its daily pieces and hourly sums matching its readings.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../src/store/database.ts';
import { convertBlocks } from '../../src/store/timeseries/postgres/convertBlocks.ts';
import { convertRows } from '../../src/store/timeseries/postgres/convertRows.ts';
import { PostgresTimeSeriesStore } from '../../src/store/timeseries/postgres/store.ts';
import { WorkerPool } from '../../src/workerPool.ts';
import { decodeDataV1 } from '../../src/shared/readings/blocksV1.ts';
import { createTestDatabase } from '../support/testApp.ts';

const workers = new WorkerPool(1);
let pool: Pool;
const REGISTERS = [11, 12, 13, 14, 15];
const START = Date.UTC(2024, 2, 28);
const END = Date.UTC(2024, 3, 12);

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), 4, pino({ level: 'silent' }));
  // The former layout with data: 15-minute readings, a few irregular ones with milliseconds,
  // updatedAt differing within days (corrections), over two months (two partitions).
  await pool.query("SELECT flex_ensure_reading_partitions(ARRAY['2024-03-01Z', '2024-04-01Z']::timestamptz[])");
  await pool.query(
    `INSERT INTO readings (register_id, ts, value, resolution, updated_at)
     SELECT r, t, round((sin(extract(epoch FROM t) / 5000 + r) * 100)::numeric, 3)::float8, 900,
       CASE WHEN extract(hour FROM t) = 13 THEN timestamptz '2025-01-02T00:00:00.123Z' ELSE timestamptz '2025-01-01Z' END
     FROM unnest($1::int[]) r CROSS JOIN generate_series($2::timestamptz, $3::timestamptz - interval '15 minutes', interval '15 minutes') t
     WHERE (r + extract(day FROM t)::int) % 7 <> 0`,
    [REGISTERS, new Date(START), new Date(END)],
  );
  await pool.query(
    `INSERT INTO readings (register_id, ts, value, resolution, updated_at) VALUES
       (11, '2024-03-30T10:07:00.042Z', 1.5, 60, '2025-01-03Z'), (11, '2024-03-30T10:08:30.5Z', -2.25, 77, '2025-01-03Z'), (15, '2024-04-11T23:59:59.999Z', 7, 1, '2025-01-04Z')`,
  );
});
afterAll(async () => {
  await pool?.end();
  await workers.close();
});

interface Row {
  id: number;
  t: number;
  v: number;
  r: number;
  u: number;
}

describe('converting the row table into register-day blocks, then into the compact encoding', () => {
  it('converts resumably with progress, and every reading comes out as it went in', { timeout: 120_000 }, async () => {
    const { rows: before } = await pool.query<Row>(
      `SELECT register_id AS id, (extract(epoch FROM ts) * 1000)::float8 AS t, value AS v, resolution AS r, (extract(epoch FROM updated_at) * 1000)::float8 AS u
       FROM readings ORDER BY register_id, ts`,
    );
    expect(before.length).toBeGreaterThan(5000);
    const progress: unknown[] = [];
    const log = { info: (fields: unknown) => void progress.push(fields) };

    // Cut short after one batch of two registers: those are blocks, the rest still rows.
    expect(await convertRows(pool, log, { registersPerBatch: 2, maxBatches: 1 })).toBe(false);
    const { rows: left } = await pool.query<{ id: number }>('SELECT DISTINCT register_id AS id FROM readings ORDER BY 1');
    expect(left.map((r) => r.id)).toEqual([13, 14, 15]);
    const { rows: blocked } = await pool.query<{ id: number }>('SELECT DISTINCT register_id AS id FROM reading_blocks_v1 ORDER BY 1');
    expect(blocked.map((r) => r.id)).toEqual([11, 12]);
    expect(progress).toContainEqual(expect.objectContaining({ readings: before.filter((r) => r.id <= 12).length, of: before.length }));

    // Resumed: the rest, then the row table is gone.
    expect(await convertRows(pool, log, { registersPerBatch: 2 })).toBe(true);
    expect((await pool.query("SELECT to_regclass('readings') AS t")).rows[0].t).toBeNull();
    expect(progress.at(-1)).toMatchObject({ readings: before.filter((r) => r.id > 12).length });
    expect(await convertRows(pool, log)).toBe(true);

    // The first format as the SQL encoder made it: every reading exactly.
    const { rows: v1 } = await pool.query<{ id: number; day: number; data: Buffer }>('SELECT register_id AS id, day, data FROM reading_blocks_v1 ORDER BY register_id, day');
    expect(v1.flatMap((b) => { const r = decodeDataV1(b.data, b.day); return Array.from(r.times, (t, i) => ({ id: b.id, t, v: r.values[i]!, r: r.resolutions[i]!, u: r.updatedAt[i]! })); })).toEqual(before);

    // Into the compact encoding: cut short after one batch, then resumed; the old table is gone.
    const blocks = v1.length;
    expect(await convertBlocks(pool, log, { blocksPerBatch: 40, maxBatches: 1 })).toBe(false);
    expect(Number((await pool.query('SELECT count(*) AS n FROM reading_blocks_v1')).rows[0].n)).toBe(blocks - 40);
    expect(Number((await pool.query('SELECT count(*) AS n FROM reading_blocks')).rows[0].n)).toBe(40);
    expect(progress).toContainEqual(expect.objectContaining({ blocks: 40, of: blocks }));
    expect(await convertBlocks(pool, log, { blocksPerBatch: 40 })).toBe(true);
    expect((await pool.query("SELECT to_regclass('reading_blocks_v1') AS t")).rows[0].t).toBeNull();
    expect(progress.at(-1)).toMatchObject({ blocks: blocks - 40 });
    expect(await convertBlocks(pool, log)).toBe(true);

    const store = new PostgresTimeSeriesStore(pool, workers);
    const series = await store.readSeries({ registerIds: REGISTERS, start: START, end: END });
    const after = series.flatMap((s) => Array.from(s.timestamps, (t, i) => ({ id: s.registerId, t, v: s.values[i]!, r: s.resolutions[i]!, u: s.updatedAt[i]! })));
    expect(after).toEqual(before);

    // Hourly sums, counts and updatedAt agree with the readings, and local days from the daily
    // pieces the conversion computed agree with local days from the readings.
    const hourly = await store.bucketSeries({ registers: REGISTERS.map((id) => ({ id, aggregate: 'sum', timeZone: 'UTC' })), start: START, end: END, resolutionSeconds: 3600 });
    for (const s of hourly) {
      const mine = before.filter((r) => r.id === s.registerId);
      const hours = new Map<number, { sum: number; u: number }>();
      for (const r of mine) {
        const h = Math.floor(r.t / 3_600_000) * 3_600_000;
        const x = hours.get(h) ?? { sum: 0, u: -Infinity };
        hours.set(h, { sum: x.sum + r.v, u: Math.max(x.u, r.u) });
      }
      expect(Array.from(s.timestamps)).toEqual([...hours.keys()]);
      expect(Array.from(s.updatedAt)).toEqual([...hours.values()].map((x) => x.u));
      [...hours.values()].forEach((x, i) => expect(s.values[i]).toBeCloseTo(x.sum, 9));
    }
    const days = { registers: REGISTERS.map((id) => ({ id, aggregate: 'sum' as const, timeZone: 'UTC' })), start: START, end: END, resolutionSeconds: 86400 };
    const fromPieces = await store.bucketSeries(days);
    await pool.query("UPDATE reading_blocks SET days = '\\x00'::bytea");
    const fromReadings = await store.bucketSeries(days);
    fromPieces.forEach((s, k) => {
      expect(Array.from(s.timestamps)).toEqual(Array.from(fromReadings[k]!.timestamps));
      expect(Array.from(s.updatedAt)).toEqual(Array.from(fromReadings[k]!.updatedAt));
      s.values.forEach((v, i) => expect(v).toBeCloseTo(fromReadings[k]!.values[i]!, 9));
    });

    // The same blocks a write would make: a correction merges into converted blocks.
    await store.write({ rows: { registerIds: [11], offsets: Int32Array.from([0, 1]), timestamps: Float64Array.from([Date.UTC(2024, 2, 30, 10, 7, 0, 42)]), values: Float64Array.from([9]), resolutions: Int32Array.from([60]) }, updatedAtMs: Date.UTC(2025, 1, 1) });
    const [corrected] = await store.readSeries({ registerIds: [11], start: Date.UTC(2024, 2, 30, 10), end: Date.UTC(2024, 2, 30, 10, 15) });
    expect(Array.from(corrected!.values)).toEqual([before.find((r) => r.id === 11 && r.t === Date.UTC(2024, 2, 30, 10))!.v, 9, -2.25]);
  });
});
