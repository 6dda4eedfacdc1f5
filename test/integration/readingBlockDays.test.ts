// Daily pieces of register-day blocks (migration 006): cut at the local midnights of each
// register's zone (30- and 45-minute offsets, DST days), kept by writes and corrections, and
// computed at start for blocks stored before the migration, resumably and with progress. Local
// days read from the pieces must equal the answers from hourly rollups and readings (the path
// readingBlocksEquivalence.test.ts compares with the former row table), to 1e-9.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../src/store/database.ts';
import { fillMissingDays } from '../../src/store/timeseries/postgres/blockDays.ts';
import { PostgresTimeSeriesStore } from '../../src/store/timeseries/postgres/store.ts';
import type { BucketQuery, Series } from '../../src/store/timeseries/types.ts';
import { WorkerPool } from '../../src/workerPool.ts';
import { createTestDatabase } from '../support/testApp.ts';

const H = 3_600_000;
const workers = new WorkerPool(1);
let pool: Pool;
let store: PostgresTimeSeriesStore;
/** Zone and the UTC offset of its local midnight in the days below (ms into the UTC day). */
const ZONES = [
  ['Asia/Kolkata', 18.5 * H],
  ['Asia/Kathmandu', 18.25 * H],
  ['Australia/Eucla', 15.25 * H],
  ['Europe/Amsterdam', 22 * H], // summer time from 31 March
  ['UTC', 0],
  ['Australia/Lord_Howe', 13.5 * H], // +10:30 after 7 April 02:00 local, +11 before
] as const;
let ids: number[];
const START = Date.UTC(2024, 2, 25);
/** SQL: where a block's second piece starts (its local midnight, ms into the UTC day). */
const CUT = '(get_byte(days, 28) << 24) | (get_byte(days, 29) << 16) | (get_byte(days, 30) << 8) | get_byte(days, 31)';
const END = Date.UTC(2024, 3, 10);

function readings(k: number, from: number, to: number, step: number, shift = 0) {
  const timestamps: number[] = [];
  for (let t = from; t < to; t += step) if ((t / step + k) % 37 !== 0) timestamps.push(t);
  return { timestamps, values: timestamps.map((t, i) => Math.round(Math.sin(t / 7e6 + k) * 1e5) / 1e3 + shift + (i % 3)) };
}

async function write(from: number, to: number, step: number, updatedAtMs: number, shift = 0): Promise<void> {
  const parts = ids.map((_, k) => readings(k, from, to, step, shift));
  const offsets = [0];
  for (const p of parts) offsets.push(offsets.at(-1)! + p.timestamps.length);
  const timestamps = Float64Array.from(parts.flatMap((p) => p.timestamps));
  await store.write({
    rows: { registerIds: ids, offsets: Int32Array.from(offsets), timestamps, values: Float64Array.from(parts.flatMap((p) => p.values)), resolutions: new Int32Array(timestamps.length).fill(step / 1000) },
    updatedAtMs,
  });
}

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), 4, pino({ level: 'silent' }));
  store = new PostgresTimeSeriesStore(pool, workers, 2);
  const { rows } = await pool.query<{ id: number }>("INSERT INTO meters (external_id, name, type) VALUES ('days', 'days', 1) RETURNING id");
  const inserted = await pool.query<{ id: number }>(
    `INSERT INTO registers (meter_id, external_id, name, type, measurement_type, measurement_prefix, default_resolution, update_frequency, time_zone)
     SELECT $1, tz, tz, 1, 1, 3, 900, 900, tz FROM unnest($2::text[]) WITH ORDINALITY AS u(tz, k) ORDER BY k RETURNING id`,
    [rows[0]!.id, ZONES.map(([tz]) => tz)],
  );
  ids = inserted.rows.map((r) => r.id);
  await write(START, END, 900_000, Date.UTC(2025, 0, 1));
  // Corrections: some hours again with other values, and 5-minute readings in between.
  await write(Date.UTC(2024, 2, 30, 17), Date.UTC(2024, 3, 1, 2), 900_000, Date.UTC(2025, 0, 2), 0.25);
  await write(Date.UTC(2024, 3, 6, 12), Date.UTC(2024, 3, 7, 20), 300_000, Date.UTC(2025, 0, 3));
});
afterAll(async () => {
  await pool?.end();
  await workers.close();
});

const questions = (): BucketQuery[] => {
  const registers = ids.map((id, k) => ({ id, aggregate: (k % 2 ? 'avg' : 'sum') as 'sum' | 'avg', timeZone: ZONES[k]![0] }));
  return [
    { registers, start: START - 3 * H, end: END + 3 * H, resolutionSeconds: 86400 },
    { registers, start: Date.UTC(2024, 2, 28), end: Date.UTC(2024, 3, 8), resolutionSeconds: 86400 },
    { registers, start: Date.UTC(2024, 2, 28, 18, 30), end: Date.UTC(2024, 3, 8, 15, 15), resolutionSeconds: 86400 },
  ];
};

async function answers(): Promise<Series[][]> {
  return Promise.all(questions().map((q) => store.bucketSeries(q)));
}

/** Blocks of each register without daily pieces (k = 0). */
async function unfilled(): Promise<number[]> {
  const { rows } = await pool.query<{ id: number; n: number }>('SELECT register_id AS id, count(*) FILTER (WHERE get_byte(days, 3) = 0)::int AS n FROM reading_blocks WHERE register_id = ANY($1::int[]) GROUP BY 1 ORDER BY 1', [ids]);
  return rows.map((r) => r.n);
}

function expectSame(ours: Series[][], theirs: Series[][]): void {
  ours.forEach((question, q) =>
    question.forEach((s, k) => {
      const ref = theirs[q]![k]!;
      expect(Array.from(s.timestamps), `question ${q}, ${ZONES[k]![0]}`).toEqual(Array.from(ref.timestamps));
      expect(Array.from(s.resolutions)).toEqual(Array.from(ref.resolutions));
      expect(Array.from(s.updatedAt)).toEqual(Array.from(ref.updatedAt));
      s.values.forEach((v, i) => expect(Math.abs(v - ref.values[i]!)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(ref.values[i]!))));
    }),
  );
}

describe('daily pieces of register-day blocks', () => {
  it('are cut at each zone’s local midnight and answer local days as the hours do', { timeout: 120_000 }, async () => {
    expect(await unfilled()).toEqual(ids.map(() => 0));
    const { rows } = await pool.query<{ id: number; day: number; k: number; cut: number }>(
      `SELECT register_id AS id, day, get_byte(days, 3) AS k, ${CUT} AS cut
       FROM reading_blocks WHERE register_id = ANY($1::int[]) AND day = $2`,
      [ids, Math.floor(Date.UTC(2024, 3, 8) / 86_400_000)],
    );
    const cuts = ids.map((id) => rows.find((r) => r.id === id)!);
    expect(cuts.map((c) => (c.k === 1 ? 0 : c.cut))).toEqual(ZONES.map(([, cut]) => cut));
    // Amsterdam's DST day: local midnight at 23:00 UTC before, 22:00 after.
    const { rows: dst } = await pool.query<{ day: number; cut: number }>(
      `SELECT day, ${CUT} AS cut FROM reading_blocks WHERE register_id = $1 AND day BETWEEN $2 AND $3 ORDER BY day`,
      [ids[3], Math.floor(Date.UTC(2024, 2, 30) / 86_400_000), Math.floor(Date.UTC(2024, 2, 31) / 86_400_000)],
    );
    expect(dst.map((r) => r.cut)).toEqual([23 * H, 22 * H]);

    const fromPieces = await answers();
    expect(fromPieces[0]!.every((s) => s.timestamps.length >= 16)).toBe(true);
    await pool.query("UPDATE reading_blocks SET days = '\\x00000000' WHERE register_id = ANY($1::int[])", [ids]);
    expectSame(fromPieces, await answers());
  });

  it('are left out, not failing the write, for a zone PostgreSQL does not know', async () => {
    // Zones are checked by Node's ICU, whose tzdata may be newer than the database server's.
    const { rows } = await pool.query<{ id: number }>(
      `INSERT INTO registers (meter_id, external_id, name, type, measurement_type, measurement_prefix, default_resolution, update_frequency, time_zone)
       SELECT meter_id, 'unknown-zone', 'unknown-zone', 1, 1, 3, 900, 900, 'Mars/Olympus_Mons' FROM registers WHERE id = $1 RETURNING id`,
      [ids[0]],
    );
    const id = rows[0]!.id;
    const timestamps = Float64Array.from({ length: 8 }, (_, i) => START + i * 900_000);
    const outcome = await store.write({ rows: { registerIds: [id, ids[0]!], offsets: Int32Array.from([0, 8, 16]), timestamps: Float64Array.from([...timestamps, ...timestamps]), values: new Float64Array(16).fill(2), resolutions: new Int32Array(16).fill(900) }, updatedAtMs: Date.UTC(2025, 0, 5) });
    expect(outcome.ok).toBe(true);
    const { rows: blocks } = await pool.query<{ id: number; k: number }>('SELECT register_id AS id, get_byte(days, 3) AS k FROM reading_blocks WHERE register_id = ANY($1::int[]) AND day = $2 ORDER BY 1', [[id, ids[0]], Math.floor(START / 86_400_000)]);
    expect(blocks).toEqual([{ id: ids[0]!, k: 2 }, { id, k: 0 }].sort((a, b) => a.id - b.id));
    const [stored] = await store.bucketSeries({ registers: [{ id, aggregate: 'sum', timeZone: 'UTC' }], start: START, end: START + 86_400_000, resolutionSeconds: 86400 });
    expect(Array.from(stored!.values)).toEqual([16]);
  });

  it('are computed at start for blocks stored before migration 006, resumably, with progress', { timeout: 120_000 }, async () => {
    await pool.query("UPDATE reading_blocks SET days = '\\x00000000' WHERE register_id = ANY($1::int[])", [ids]);
    const fromHours = await answers();
    await pool.query('CREATE TABLE IF NOT EXISTS reading_block_days_pending (register_id int PRIMARY KEY)');
    await pool.query('INSERT INTO reading_block_days_pending SELECT unnest($1::int[]) ON CONFLICT DO NOTHING', [ids]);
    const progress: Record<string, unknown>[] = [];
    const log = { info: (fields: Record<string, unknown>) => void progress.push(fields) };

    // Cut short after one batch of two registers: theirs are done, the rest still to do.
    expect(await fillMissingDays(pool, log, { registersPerBatch: 2, maxBatches: 1 })).toBe(false);
    expect((await unfilled()).map((n) => n === 0)).toEqual([true, true, false, false, false, false]);
    expect(progress).toContainEqual(expect.objectContaining({ registers: 2, of: ids.length }));
    expectSame(await answers(), fromHours);

    // Resumed: the rest; the list of registers to do is dropped.
    expect(await fillMissingDays(pool, log, { registersPerBatch: 2 })).toBe(true);
    expect(await unfilled()).toEqual(ids.map(() => 0));
    expect((await pool.query("SELECT to_regclass('reading_block_days_pending') AS t")).rows[0].t).toBeNull();
    expect(progress.at(-1)).toMatchObject({ registers: ids.length - 2 });
    expect(await fillMissingDays(pool, log)).toBe(true);
    expectSame(await answers(), fromHours);

    // A correction after the conversion keeps them current.
    await write(Date.UTC(2024, 3, 2, 18), Date.UTC(2024, 3, 3, 1), 900_000, Date.UTC(2025, 0, 4), -3);
    expect(await unfilled()).toEqual(ids.map(() => 0));
    const corrected = await answers();
    await pool.query("UPDATE reading_blocks SET days = '\\x00000000' WHERE register_id = ANY($1::int[])", [ids]);
    expectSame(corrected, await answers());
  });
});
