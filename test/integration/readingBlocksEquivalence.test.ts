// Register-day blocks and their rollups answer exactly as the row table did: random
// readings (irregular times, gaps, duplicates inside a batch, DST days, zones at 30- and
// 45-minute offsets, corrections over several batches) go into the store and, with the same
// semantics, into a table of the former layout (one row per reading); every question is then
// asked of both — the store through its rollups and blocks, the reference with the SQL the row
// store used (bucket queries of the former postgres/bucketSql.ts, before blocks) — and
// the answers must match: same buckets, times, lengths and updatedAt, values to 1e-9. Local days
// come from the blocks' daily pieces (migration 006) where they fit; the registers' zones then
// change, first without the rebuild (stale pieces must be refused) and then with it.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, withTransaction, type Pool } from '../../src/store/database.ts';
import { PostgresTimeSeriesStore } from '../../src/store/timeseries/postgres/store.ts';
import type { BucketQuery, Series } from '../../src/store/timeseries/types.ts';
import { WorkerPool } from '../../src/workerPool.ts';
import { blockPieces } from '../support/blockPieces.ts';
import { createTestDatabase } from '../support/testApp.ts';

const log = pino({ level: 'silent' });
const workers = new WorkerPool(1);
let pool: Pool;
let store: PostgresTimeSeriesStore;

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), 4, log);
  store = new PostgresTimeSeriesStore(pool, workers, 2);
  await pool.query(`CREATE TABLE ref_readings (register_id int NOT NULL, ts timestamptz NOT NULL, value float8 NOT NULL, resolution int NOT NULL,
    updated_at timestamptz NOT NULL, PRIMARY KEY (register_id, ts))`);
  // The registers, with their zones: writes compute the blocks' daily pieces for them.
  const { rows } = await pool.query<{ id: number }>("INSERT INTO meters (external_id, name, type) VALUES ('equivalence', 'equivalence', 1) RETURNING id");
  const ids = SEEDS.flatMap((seed) => ZONES.map((_, k) => seed * 100 + k));
  await pool.query(
    `INSERT INTO registers (id, meter_id, external_id, name, type, measurement_type, measurement_prefix, default_resolution, update_frequency, time_zone)
     SELECT id, $1, id::text, id::text, 1, 1, 3, 900, 900, tz FROM unnest($2::int[], $3::text[]) AS u(id, tz)`,
    [rows[0]!.id, ids, ids.map((id) => ZONES[id % 100]!)],
  );
});
afterAll(async () => {
  await pool?.end();
  await workers.close();
});

/** mulberry32: the same data for a seed on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const H = 3_600_000;
const ZONES = ['UTC', 'Europe/Oslo', 'Asia/Kolkata', 'Asia/Kathmandu', 'America/St_Johns', 'Australia/Lord_Howe', 'America/Santiago', 'Pacific/Chatham', 'Australia/Eucla'];
const SEEDS = [1, 2, 3];
/** Two windows around DST changes (Europe spring, then autumn: Oslo, St John's, Santiago, Lord Howe, Chatham). */
const WINDOWS = [
  [Date.UTC(2024, 2, 27, 5), Date.UTC(2024, 3, 9, 17)],
  [Date.UTC(2024, 8, 3), Date.UTC(2024, 8, 10)],
  [Date.UTC(2024, 9, 24, 22), Date.UTC(2024, 10, 5, 3)],
] as const;

interface Reading {
  t: number;
  v: number;
  r: number;
}

function readingsOf(random: () => number, from: number, to: number): Reading[] {
  const kind = Math.floor(random() * 4);
  const step = [300_000, 900_000, 3_600_000, 0][kind]!;
  const out: Reading[] = [];
  let t = from + (step === 0 ? Math.floor(random() * 60_000) : 0);
  while (t < to) {
    if (random() < 0.02) t += Math.floor(random() * 20) * (step || 600_000); // a gap
    if (t >= to) break;
    out.push({ t, v: Math.round((random() * 2000 - 200) * 1000) / 1000, r: step ? step / 1000 : 1 + Math.floor(random() * 1200) });
    t += step || 1 + Math.floor(random() * 1_500_000);
  }
  return out;
}

function body(registerId: number, readings: readonly Reading[]): Buffer {
  const items = readings.map((x) => `{"timestamp":"${new Date(x.t).toISOString()}","value":${x.v},"resolution":${x.r}}`);
  return Buffer.from(`{"meters":[{"id":"M${registerId}","registers":[{"id":"${registerId}","values":[${items.join(',')}]}]}]}`);
}

/** Writes a batch to the store (a body) and to the reference (last duplicate wins, upsert). */
async function write(batches: { id: number; readings: Reading[] }[], updatedAtMs: number): Promise<void> {
  for (const { id, readings } of batches) {
    const outcome = await store.write({ body: body(id, readings), resolve: async (series) => series.map((s) => Number(s.registerId)), updatedAtMs });
    expect(outcome.ok).toBe(true);
    const last = new Map<number, Reading>();
    for (const r of readings) last.set(r.t, r);
    const rows = [...last.values()];
    await pool.query(
      `INSERT INTO ref_readings SELECT $1, to_timestamp(t / 1000.0), v, r, to_timestamp($5 / 1000.0) FROM unnest($2::float8[], $3::float8[], $4::int[]) AS u(t, v, r)
       ON CONFLICT (register_id, ts) DO UPDATE SET value = EXCLUDED.value, resolution = EXCLUDED.resolution, updated_at = EXCLUDED.updated_at`,
      [id, rows.map((r) => r.t), rows.map((r) => r.v), rows.map((r) => r.r), updatedAtMs],
    );
  }
}

// The row store's bucket SQL (before blocks), over the reference table, for a whole request.
const EPOCH = `b AS (
    SELECT r.register_id AS id, date_bin(make_interval(secs => $4), r.ts, timestamptz '1970-01-01T00:00:00Z') AS bucket,
      CASE WHEN q.summed THEN sum(r.value) ELSE avg(r.value) END AS value, max(r.updated_at) AS updated
    FROM ref_readings r JOIN q ON q.id = r.register_id WHERE r.ts >= $5 AND r.ts < $6 GROUP BY 1, 2, q.summed),
  e AS (SELECT b.id, b.bucket, $4::int AS seconds, b.value, b.updated FROM b)`;
const DAYS = `d AS (
    SELECT q.id, q.summed, day AT TIME ZONE q.tz AS bucket, (day + make_interval(days => $4 / 86400)) AT TIME ZONE q.tz AS bucket_end
    FROM q CROSS JOIN LATERAL generate_series(date_trunc('day', $5::timestamptz AT TIME ZONE q.tz), date_trunc('day', ($6::timestamptz - interval '1 microsecond') AT TIME ZONE q.tz), interval '1 day') AS day),
  e AS (
    SELECT d.id, d.bucket, date_part('epoch', d.bucket_end - d.bucket)::int AS seconds, a.value, a.updated
    FROM d CROSS JOIN LATERAL (
      SELECT CASE WHEN d.summed THEN sum(r.value) ELSE avg(r.value) END AS value, max(r.updated_at) AS updated, count(*) AS n
      FROM ref_readings r WHERE r.register_id = d.id AND r.ts >= greatest(d.bucket, $5) AND r.ts < least(d.bucket_end, $6)) a
    WHERE a.n > 0)`;

async function reference(q: BucketQuery): Promise<Series[]> {
  const { rows } = await pool.query<{ id: number; t: number; seconds: number; value: number; u: number }>(
    `WITH q AS (SELECT * FROM unnest($1::int[], $2::bool[], $3::text[]) AS q(id, summed, tz)), ${q.resolutionSeconds === 86400 ? DAYS : EPOCH}
     SELECT id, (extract(epoch FROM bucket) * 1000)::float8 AS t, seconds, value, (extract(epoch FROM updated) * 1000)::float8 AS u FROM e ORDER BY id, bucket`,
    [q.registers.map((r) => r.id), q.registers.map((r) => r.aggregate === 'sum'), q.registers.map((r) => r.timeZone), q.resolutionSeconds, new Date(q.start), new Date(q.end)],
  );
  return q.registers.map((r) => {
    const mine = rows.filter((x) => x.id === r.id);
    return {
      registerId: r.id,
      timestamps: Float64Array.from(mine, (x) => x.t),
      values: Float64Array.from(mine, (x) => x.value),
      resolutions: Int32Array.from(mine, (x) => x.seconds),
      updatedAt: Float64Array.from(mine, (x) => x.u),
    };
  });
}

async function referenceRows(ids: readonly number[], start: number, end: number): Promise<Series[]> {
  const { rows } = await pool.query<{ id: number; t: number; value: number; resolution: number; u: number }>(
    `SELECT register_id AS id, (extract(epoch FROM ts) * 1000)::float8 AS t, value, resolution, (extract(epoch FROM updated_at) * 1000)::float8 AS u
     FROM ref_readings WHERE register_id = ANY($1::int[]) AND ts >= $2 AND ts < $3 ORDER BY register_id, ts`,
    [ids, new Date(start), new Date(end)],
  );
  return ids.map((id) => {
    const mine = rows.filter((x) => x.id === id);
    return { registerId: id, timestamps: Float64Array.from(mine, (x) => x.t), values: Float64Array.from(mine, (x) => x.value), resolutions: Int32Array.from(mine, (x) => x.resolution), updatedAt: Float64Array.from(mine, (x) => x.u) };
  });
}

function expectSame(ours: readonly Series[], theirs: readonly Series[], what: string): number {
  let compared = 0;
  expect(ours.map((s) => s.registerId)).toEqual(theirs.map((s) => s.registerId));
  ours.forEach((s, k) => {
    const ref = theirs[k]!;
    const label = `${what}, register ${s.registerId}`;
    expect(Array.from(s.timestamps), label).toEqual(Array.from(ref.timestamps));
    expect(Array.from(s.resolutions), label).toEqual(Array.from(ref.resolutions));
    expect(Array.from(s.updatedAt), label).toEqual(Array.from(ref.updatedAt));
    for (let i = 0; i < s.values.length; i += 1) {
      const a = s.values[i]!;
      const b = ref.values[i]!;
      if (Math.abs(a - b) > 1e-9 * Math.max(1, Math.abs(b))) expect.fail(`${label}, bucket ${new Date(s.timestamps[i]!).toISOString()}: ${a} vs ${b}`);
    }
    compared += s.values.length;
  });
  return compared;
}

describe('register-day blocks answer as the row table did', () => {
  for (const seed of SEEDS) {
    it(`random readings, seed ${seed}`, { timeout: 120_000 }, async () => {
      const random = rng(seed);
      const ids = ZONES.map((_, k) => seed * 100 + k);
      const registers = ids.map((id, k) => ({ id, aggregate: (random() < 0.5 ? 'sum' : 'avg') as 'sum' | 'avg', timeZone: ZONES[k]! }));
      // First load: each register's readings of every window, in random batches, with duplicates.
      const U1 = Date.UTC(2025, 0, 1);
      const batches: { id: number; readings: Reading[] }[] = [];
      for (const id of ids)
        for (const [from, to] of WINDOWS) {
          const all = readingsOf(random, from, to);
          for (let at = 0; at < all.length; ) {
            const n = 1 + Math.floor(random() * 3000);
            const part = all.slice(at, at + n);
            // Duplicates: some readings sent twice, the later copy with another value (it wins).
            for (let d = 0; d < 3 && part.length > 0; d += 1) {
              const x = part[Math.floor(random() * part.length)]!;
              part.splice(Math.floor(random() * part.length), 0, { ...x, v: x.v + 1 });
              part.push({ ...x, v: x.v - 7.5 });
            }
            batches.push({ id, readings: part.sort(() => random() - 0.5) });
            at += n;
          }
        }
      await write(batches, U1);
      // Corrections: runs of existing readings with new values, some new readings in gaps.
      for (const [k, U] of [Date.UTC(2025, 0, 2), Date.UTC(2025, 0, 3, 12, 0, 0, 7)].entries()) {
        const fixes: { id: number; readings: Reading[] }[] = [];
        for (const id of ids) {
          const [from, to] = WINDOWS[(k + id) % WINDOWS.length]!;
          const { rows } = await pool.query<{ t: number; r: number }>(
            'SELECT (extract(epoch FROM ts) * 1000)::float8 AS t, resolution AS r FROM ref_readings WHERE register_id = $1 AND ts >= $2 AND ts < $3 ORDER BY ts',
            [id, new Date(from), new Date(to)],
          );
          const begin = Math.floor(random() * rows.length);
          const run = rows.slice(begin, begin + 1 + Math.floor(random() * 400)).map((x) => ({ t: x.t, r: x.r, v: Math.round(random() * 1e6) / 1e3 }));
          const added = Array.from({ length: 20 }, () => ({ t: from + Math.floor(random() * (to - from)), r: 900, v: random() * 10 }));
          fixes.push({ id, readings: [...run, ...added] });
        }
        await write(fixes, U);
      }

      let compared = 0;
      const whole = { start: WINDOWS[0][0] - 5 * H, end: WINDOWS[2][1] + 5 * H };
      const ranges = [
        whole,
        { start: Date.UTC(2024, 2, 30), end: Date.UTC(2024, 3, 2) },
        { start: WINDOWS[2][0] + 1234567, end: WINDOWS[2][1] - 7654321 },
        { start: Date.UTC(2024, 9, 26, 18, 30), end: Date.UTC(2024, 10, 3, 21, 15) },
      ];
      for (const range of ranges) {
        for (const resolutionSeconds of [3600, 7200, 86400, 900, 1800, 10800, 604800]) {
          const q: BucketQuery = { registers, ...range, resolutionSeconds };
          compared += expectSame(await store.bucketSeries(q), await reference(q), `resolution ${resolutionSeconds} over ${new Date(range.start).toISOString()}`);
          const avg: BucketQuery = { ...q, registers: registers.map((r) => ({ ...r, aggregate: 'avg' })) };
          if (resolutionSeconds === 3600) compared += expectSame(await store.bucketSeries(avg), await reference(avg), 'hourly averages');
        }
        compared += expectSame(await store.readSeries({ registerIds: ids, ...range }), await referenceRows(ids, range.start, range.end), 'readings as stored');
      }
      expect(compared).toBeGreaterThan(10_000);
      // Every block has its daily pieces: the local days above came from them where they fit.
      expect((await blockPieces(pool, ids)).filter((b) => b.k === 0)).toHaveLength(0);

      // Zones change: first only the register rows (pieces of the former zones must not be
      // summed into the new zones' days), then with the rebuild a PUT of the register does.
      const moved = registers.map((r, k) => ({ ...r, timeZone: ZONES[(k + 2) % ZONES.length]! }));
      await pool.query('UPDATE registers SET time_zone = u.tz FROM unnest($1::int[], $2::text[]) AS u(id, tz) WHERE registers.id = u.id', [ids, moved.map((r) => r.timeZone)]);
      for (const rebuilt of [false, true]) {
        if (rebuilt) for (const id of ids) await withTransaction(pool, (tx) => store.timeZoneChanged(tx, id));
        for (const range of ranges) {
          const q: BucketQuery = { registers: moved, ...range, resolutionSeconds: 86400 };
          compared += expectSame(await store.bucketSeries(q), await reference(q), `local days after a zone change${rebuilt ? ', rebuilt' : ''}`);
        }
      }
      const cuts = (await blockPieces(pool, ids)).filter((b) => b.k === 2);
      // The second piece starts at the new zone's local midnight (Kolkata's is 18:30 UTC).
      const kolkata = moved.findIndex((r) => r.timeZone === 'Asia/Kolkata');
      expect(cuts.filter((c) => c.id === ids[kolkata]).every((c) => c.cut === 18.5 * H)).toBe(true);
      expect(cuts.some((c) => c.id === ids[kolkata])).toBe(true);

      // changedSince: the same answer as a scan of the rows.
      const queries = Array.from({ length: 60 }, () => {
        const start = whole.start + Math.floor(random() * (whole.end - whole.start));
        const end = start + Math.floor(random() * 3 * 86_400_000) + 1;
        const since = [U1 - 1, U1, Date.UTC(2025, 0, 2), Date.UTC(2025, 0, 3, 12, 0, 0, 7), Date.UTC(2025, 0, 4)][Math.floor(random() * 5)]!;
        return { registerIds: [ids[Math.floor(random() * ids.length)]!], start, end, since };
      });
      const expected = await Promise.all(
        queries.map(async (q) => {
          const { rowCount } = await pool.query('SELECT 1 FROM ref_readings WHERE register_id = ANY($1::int[]) AND ts >= $2 AND ts < $3 AND updated_at > $4 LIMIT 1', [
            q.registerIds,
            new Date(q.start),
            new Date(q.end),
            new Date(q.since),
          ]);
          return rowCount === 1;
        }),
      );
      expect(await store.changedSince(queries)).toEqual(expected);
      expect(expected.some(Boolean) && expected.some((x) => !x)).toBe(true);
    });
  }
});
