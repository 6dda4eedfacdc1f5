// Daily pieces of register-day blocks: cut at the local midnights of each register's zone (30-
// and 45-minute offsets, DST days), kept by writes and corrections, rebuilt when a register's
// zone changes. Local days read from the pieces must equal the answers from the readings (the
// path readingBlocksEquivalence.test.ts compares with the former row table), to 1e-9.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDays } from '../../src/shared/readings/blocks.ts';
import { recompute } from '../../src/store/timeseries/postgres/blockDays.ts';
import { createPool, withTransaction, type Pool } from '../../src/store/database.ts';
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
/** Pieces of the registers' blocks of these UTC days: k and where the second starts (ms into the day). */
async function pieces(registerIds: readonly number[], firstDay: number, lastDay: number): Promise<{ id: number; day: number; k: number; cut: number }[]> {
  const { rows } = await pool.query<{ id: number; day: number; days: Buffer; updated_max: number }>(
    'SELECT register_id AS id, day, days, updated_max FROM reading_blocks WHERE register_id = ANY($1::int[]) AND day BETWEEN $2 AND $3 ORDER BY register_id, day',
    [registerIds, firstDay, lastDay],
  );
  return rows.map((r) => {
    const p = readDays(r.days, r.day, r.updated_max);
    return { id: r.id, day: r.day, k: p.k, cut: p.k > 1 ? p.starts[1]! - r.day * 86_400_000 : 0 };
  });
}
const NOT_COMPUTED = "'\\x00'::bytea";
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
  const { rows } = await pool.query<{ id: number; n: number }>('SELECT register_id AS id, count(*) FILTER (WHERE get_byte(days, 0) & 3 = 0)::int AS n FROM reading_blocks WHERE register_id = ANY($1::int[]) GROUP BY 1 ORDER BY 1', [ids]);
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
  it('are cut at each zone’s local midnight and answer local days as the readings do', { timeout: 120_000 }, async () => {
    expect(await unfilled()).toEqual(ids.map(() => 0));
    const day = Math.floor(Date.UTC(2024, 3, 8) / 86_400_000);
    const rows = await pieces(ids, day, day);
    const cuts = ids.map((id) => rows.find((r) => r.id === id)!);
    expect(cuts.map((c) => (c.k === 1 ? 0 : c.cut))).toEqual(ZONES.map(([, cut]) => cut));
    // Amsterdam's DST day: local midnight at 23:00 UTC before, 22:00 after.
    const dst = await pieces([ids[3]!], Math.floor(Date.UTC(2024, 2, 30) / 86_400_000), Math.floor(Date.UTC(2024, 2, 31) / 86_400_000));
    expect(dst.map((r) => r.cut)).toEqual([23 * H, 22 * H]);

    const fromPieces = await answers();
    expect(fromPieces[0]!.every((s) => s.timestamps.length >= 16)).toBe(true);
    await pool.query(`UPDATE reading_blocks SET days = ${NOT_COMPUTED} WHERE register_id = ANY($1::int[])`, [ids]);
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
    const blocks = (await pieces([id, ids[0]!], Math.floor(START / 86_400_000), Math.floor(START / 86_400_000))).map((b) => ({ id: b.id, k: b.k }));
    expect(blocks).toEqual([{ id: ids[0]!, k: 2 }, { id, k: 0 }].sort((a, b) => a.id - b.id));
    const [stored] = await store.bucketSeries({ registers: [{ id, aggregate: 'sum', timeZone: 'UTC' }], start: START, end: START + 86_400_000, resolutionSeconds: 86400 });
    expect(Array.from(stored!.values)).toEqual([16]);
  });

  it('are kept by corrections and rebuilt for a register whose zone changes', { timeout: 120_000 }, async () => {
    await withTransaction(pool, (tx) => recompute(tx, ids));
    expect(await unfilled()).toEqual(ids.map(() => 0));
    // A correction keeps them current.
    await write(Date.UTC(2024, 3, 2, 18), Date.UTC(2024, 3, 3, 1), 900_000, Date.UTC(2025, 0, 4), -3);
    expect(await unfilled()).toEqual(ids.map(() => 0));
    const corrected = await answers();
    await pool.query(`UPDATE reading_blocks SET days = ${NOT_COMPUTED} WHERE register_id = ANY($1::int[])`, [ids]);
    expectSame(corrected, await answers());
    // Kolkata's register moves to Kathmandu (+05:45): its pieces are cut at the new midnight.
    await withTransaction(pool, async (tx) => {
      await tx.query("UPDATE registers SET time_zone = 'Asia/Kathmandu' WHERE id = $1", [ids[0]]);
      await store.timeZoneChanged(tx, ids[0]!);
    });
    const day = Math.floor(Date.UTC(2024, 3, 8) / 86_400_000);
    expect((await pieces([ids[0]!], day, day))[0]).toMatchObject({ k: 2, cut: 18.25 * H });
    // Questions asked in the new zone: the rebuilt pieces answer as the readings do.
    const registers = [{ id: ids[0]!, aggregate: 'sum' as const, timeZone: 'Asia/Kathmandu' }];
    const fromPieces = await Promise.all(questions().map((q) => store.bucketSeries({ ...q, registers })));
    expect(fromPieces[0]![0]!.timestamps.length).toBeGreaterThan(0);
    await pool.query(`UPDATE reading_blocks SET days = ${NOT_COMPUTED} WHERE register_id = $1`, [ids[0]]);
    const fromReadings = await Promise.all(questions().map((q) => store.bucketSeries({ ...q, registers })));
    expectSame(fromPieces, fromReadings);
  });
});
