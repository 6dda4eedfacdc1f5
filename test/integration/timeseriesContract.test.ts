// One contract, every configured time-series backend. PostgreSQL always runs; QuestDB runs when
// QUESTDB_HTTP_URL and QUESTDB_PG_URL point at a server and is reported as skipped otherwise.
// QuestDB applies writes asynchronously (WAL), so reads are polled.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualRegisters } from '../../src/meter/virtualRegisters.ts';
import { readingsRoutes } from '../../src/meter/readingsRoutes.ts';
import { compile, createValidators } from '../../src/http/validation.ts';
import { createPool, type Pool } from '../../src/store/database.ts';
import { PostgresTimeSeriesStore } from '../../src/store/timeseries/postgres/store.ts';
import { TooManyPoints, type ParsedSeries, type ReadingRows, type TimeSeriesStore } from '../../src/store/timeseries/types.ts';
import { WorkerPool } from '../../src/workerPool.ts';
import { createTestDatabase } from '../support/testApp.ts';

const log = pino({ level: 'silent' });
const questdbHttp = process.env.QUESTDB_HTTP_URL;
const questdbPg = process.env.QUESTDB_PG_URL;
const workers = new WorkerPool(1);
let pool: Pool;
const pools: Pool[] = [];
/** The published response schema of GET /api/readings, from the route table. */
let validateResponse: (data: unknown) => boolean;

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), 4, log);
  const store = new PostgresTimeSeriesStore(pool, workers);
  const routes = readingsRoutes({ db: pool, store, virtual: new VirtualRegisters(pool, store, workers), maxPoints: 1000, rateLimit: [] });
  const route = routes.find((r) => r.method === 'GET' && r.path === '/api/readings')!;
  validateResponse = compile(createValidators().body, route.responses[200]!.schema!, 'GET /api/readings response');
});
afterAll(async () => {
  for (const p of [pool, ...pools]) await p?.end();
  await workers.close();
  if (questdbHttp && questdbPg) {
    // The QuestDB table of this run (the server may be shared).
    const { default: pgClient } = await import('pg');
    const client = new pgClient.Client({ connectionString: questdbPg });
    await client.connect();
    for (const name of [`contract_${process.pid}`, `contract_${process.pid}_versions`]) await client.query(`DROP TABLE IF EXISTS ${name}`);
    await client.end();
  }
});

const MINUTE = 60_000;
const Q = 15 * MINUTE;

function rows(registerId: number, start: number, values: number[], step = 900): ReadingRows {
  return {
    registerIds: [registerId],
    offsets: Int32Array.from([0, values.length]),
    timestamps: Float64Array.from(values, (_, i) => start + i * step * 1000),
    values: Float64Array.from(values),
    resolutions: new Int32Array(values.length).fill(step),
  };
}

function body(meter: string, register: string, start: number, values: (number | string)[]): Buffer {
  const items = values.map((v, i) => `{"timestamp":"${new Date(start + i * Q).toISOString()}","value":${v},"resolution":900}`);
  return Buffer.from(`{"meters":[{"id":"${meter}","registers":[{"id":"${register}","values":[${items.join(',')}]}]}]}`);
}

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  let value = await read();
  while (!ok(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    value = await read();
  }
  return value;
}

function contract(name: string, open: () => Promise<TimeSeriesStore>) {
  describe(`time-series contract: ${name}`, () => {
    const base = Date.UTC(2031, 0, 1);
    const hour = { start: base, end: base + 3_600_000 };
    let store: TimeSeriesStore;
    const id = 1_000_000 + Math.floor(Math.random() * 1_000_000);
    const other = id + 1;
    const values = async (registerId: number, range = hour) => [...(await store.readSeries({ registerIds: [registerId], ...range }))[0]!.values];

    it('writes rows and reads them back as stored', async () => {
      store = await open();
      expect(await store.write({ rows: rows(id, base, [1, 2, 3, 4]), updatedAtMs: Date.UTC(2031, 0, 2) })).toEqual({ ok: true, readings: 4 });
      const json = await eventually(() => store.readJson({ registerIds: [id], ...hour }, 100), (m) => m.has(id));
      expect(JSON.parse(json.get(id)!.toString())).toEqual([1, 2, 3, 4].map((v, i) => ({
        timestamp: new Date(base + i * Q).toISOString(),
        periodTo: new Date(base + (i + 1) * Q).toISOString(),
        updatedAt: '2031-01-02T00:00:00.000Z',
        value: v,
        resolution: 900,
      })));
      expect(await store.hasReadings(id)).toBe(true);
    });

    it('replaces values and moves updatedAt on a correction', async () => {
      await store.write({ rows: rows(id, base + Q, [20, 30]), updatedAtMs: Date.UTC(2031, 0, 3) });
      const series = await eventually(async () => (await store.readSeries({ registerIds: [id], ...hour }))[0]!, (s) => s.values[1] === 20);
      expect([...series.values]).toEqual([1, 20, 30, 4]);
      expect(series.updatedAt[1]).toBe(Date.UTC(2031, 0, 3));
      expect(series.updatedAt[0]).toBe(Date.UTC(2031, 0, 2));
    });

    it('finds readings changed since an instant', async () => {
      const corrected = Date.UTC(2031, 0, 3);
      const answers = await store.changedSince([
        { registerIds: [id], ...hour, since: corrected - 1 },
        { registerIds: [id], ...hour, since: corrected },
        { registerIds: [other, id], start: base + 3 * Q, end: base + 4 * Q, since: Date.UTC(2031, 0, 2) },
        { registerIds: [other, id], start: base + 3 * Q, end: base + 4 * Q, since: Date.UTC(2031, 0, 2) - 1 },
        { registerIds: [id], start: base + 3 * Q, end: base + 3 * Q, since: 0 },
        { registerIds: [], ...hour, since: 0 },
      ]);
      expect(answers).toEqual([true, false, false, true, false, false]);
    });

    it('writes a body with the ids its resolver gives, the last duplicate winning', async () => {
      const seen: ParsedSeries[] = [];
      const resolve = async (series: readonly ParsedSeries[]) => {
        seen.push(...series);
        return series.map(() => other);
      };
      const outcome = await store.write({ body: body('M', 'R', base, [5, 6, 7, 8]), resolve });
      expect(outcome).toEqual({ ok: true, readings: 4 });
      expect(seen.map((s) => [s.meterId, s.registerId])).toEqual([['M', 'R']]);
      expect(await eventually(() => values(other), (v) => v.length === 4)).toEqual([5, 6, 7, 8]);
      // Two entries of one register in one body: the later value of a timestamp wins.
      const twice = `{"meters":[{"id":"M","registers":[{"id":"R","values":[{"timestamp":"${new Date(base).toISOString()}","value":50,"resolution":900}]},
        {"id":"R","values":[{"timestamp":"${new Date(base).toISOString()}","value":51,"resolution":900}]}]}]}`;
      expect(await store.write({ body: Buffer.from(twice), resolve })).toEqual({ ok: true, readings: 1 });
      expect(await eventually(() => values(other), (v) => v[0] === 51)).toEqual([51, 6, 7, 8]);
    });

    it('stores nothing of a refused body or a series its resolver refuses', async () => {
      const never = async () => [other];
      const bad = await store.write({ body: body('M', 'R', base + 2 * 3_600_000, [1, '"x"']), resolve: never });
      expect(bad).toMatchObject({ ok: false, syntax: false, errors: [{ path: 'meters[0].registers[0].values[1].value' }] });
      expect(await store.write({ body: Buffer.from('{"meters":['), resolve: never })).toMatchObject({ ok: false, syntax: true });
      const refuse = async () => {
        throw new Error('no access');
      };
      await expect(store.write({ body: body('M', 'R', base + 2 * 3_600_000, [1, 2]), resolve: refuse })).rejects.toThrow('no access');
      // Give an asynchronous backend time to show anything it might have taken.
      await new Promise((r) => setTimeout(r, name === 'postgres' ? 0 : 1000));
      expect(await values(other, { start: base + 2 * 3_600_000, end: base + 3 * 3_600_000 })).toEqual([]);
    });

    it('sums or averages into buckets, and day buckets follow a time zone', async () => {
      const sums = await store.bucketSeries({ registers: [{ id, aggregate: 'sum', timeZone: 'UTC' }], ...hour, resolutionSeconds: 3600 });
      expect([...sums[0]!.values]).toEqual([55]);
      const avgs = JSON.parse((await store.bucketsJson({ registers: [{ id, aggregate: 'avg', timeZone: 'UTC' }], ...hour, resolutionSeconds: 1800 })).get(id)!.toString());
      expect(avgs.map((b: { value: number }) => b.value)).toEqual([10.5, 17]);
      expect(avgs[0]).toMatchObject({ periodTo: new Date(base + 1_800_000).toISOString(), resolution: 1800 });
      // A summed and an averaged register in one question (one SAMPLE BY on QuestDB): each its own aggregate.
      const both = await store.bucketSeries({ registers: [{ id, aggregate: 'sum', timeZone: 'UTC' }, { id: other, aggregate: 'avg', timeZone: 'UTC' }], ...hour, resolutionSeconds: 3600 });
      const otherAlone = await store.bucketSeries({ registers: [{ id: other, aggregate: 'avg', timeZone: 'UTC' }], ...hour, resolutionSeconds: 3600 });
      expect(both.map((s) => s.registerId)).toEqual([id, other]);
      expect([...both[0]!.values]).toEqual([55]);
      expect(otherAlone[0]!.values.length).toBe(1);
      expect([...both[1]!.values]).toEqual([...otherAlone[0]!.values]);
      const days = await store.bucketSeries({ registers: [{ id, aggregate: 'sum', timeZone: 'Asia/Tokyo' }], start: base - 86_400_000, end: base + 86_400_000, resolutionSeconds: 86400 });
      // 2031-01-01T00:00Z is 09:00 in Tokyo: the local day started at 2030-12-31T15:00Z.
      expect([...days[0]!.timestamps]).toEqual([Date.UTC(2030, 11, 31, 15)]);
      expect([...days[0]!.resolutions]).toEqual([86400]);
    });

    it('starts day buckets at local midnight in half- and quarter-hour zones and across their DST changes', async () => {
      // 15-minute readings over Chatham's (+12:45 → +13:45, 2031-09-28) and Lord Howe's (+10:30 →
      // +11, a 23.5-hour day, 2031-10-05) summer-time starts; Kolkata +05:30, Kathmandu +05:45.
      const zones = ['Asia/Kolkata', 'Asia/Kathmandu', 'Pacific/Chatham', 'Australia/Lord_Howe'];
      const from = Date.UTC(2031, 8, 25);
      const n = 12 * 96;
      const ids = zones.map((_, k) => id + 10 + k);
      for (const zid of ids) await store.write({ rows: rows(zid, from, Array.from({ length: n }, (_, i) => (i % 13) + zid - id)), updatedAtMs: from });
      await eventually(() => values(ids.at(-1)!, { start: from, end: from + n * Q }), (v) => v.length === n);
      const answer = await store.bucketSeries({ registers: ids.map((zid, k) => ({ id: zid, aggregate: 'sum', timeZone: zones[k]! })), start: from, end: from + n * Q, resolutionSeconds: 86400 });
      zones.forEach((zone, k) => {
        // The oracle: readings grouped by their local date (Intl); a day's start is its first
        // reading (every local midnight of these zones is on a quarter hour).
        const day = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
        const groups = new Map<string, { start: number; sum: number }>();
        for (let i = 0; i < n; i += 1) {
          const ts = from + i * Q;
          const g = groups.get(day.format(ts)) ?? groups.set(day.format(ts), { start: ts, sum: 0 }).get(day.format(ts))!;
          g.sum += (i % 13) + ids[k]! - id;
        }
        const expected = [...groups.values()];
        const got = answer[k]!;
        expect(got.timestamps.length, zone).toBe(expected.length);
        expect([...got.values], zone).toEqual(expected.map((g) => g.sum));
        // Whole days: the bucket starts at the local midnight, and its length is the local day's.
        expect([...got.timestamps].slice(1), zone).toEqual(expected.slice(1).map((g) => g.start));
        for (let d = 1; d + 1 < expected.length; d += 1) expect(got.resolutions[d], `${zone} day ${d}`).toBe((expected[d + 1]!.start - expected[d]!.start) / 1000);
      });
      const lordHowe = answer[3]!;
      expect([...lordHowe.resolutions]).toContain(84_600); // 23.5 hours
    });

    it('answers in the published response schema of GET /api/readings', async () => {
      // Odd numbers, and a 25-hour local day (the end of summer time in Amsterdam, 2031-10-26).
      const dst = Date.UTC(2031, 9, 25, 22);
      await store.write({ rows: rows(id, dst, [1e21, -1e-7, 0, 123456789.123, -0.5, 2 ** 53]), updatedAtMs: dst });
      const days = { start: dst, end: dst + 2 * 86_400_000 };
      await eventually(() => values(id, days), (v) => v.length === 6);
      const answers = [
        await store.readJson({ registerIds: [id, other], ...hour }, 100),
        await store.readJson({ registerIds: [id], ...days }, 100),
        await store.bucketsJson({ registers: [{ id, aggregate: 'avg', timeZone: 'UTC' }], ...days, resolutionSeconds: 3600 }),
        await store.bucketsJson({ registers: [{ id, aggregate: 'sum', timeZone: 'Europe/Amsterdam' }, { id: other, aggregate: 'avg', timeZone: 'UTC' }], ...days, resolutionSeconds: 86400 }),
      ];
      for (const answer of answers) {
        const response = JSON.parse(`[${[...answer].map(([registerId, json]) => `{"registerId":${registerId},"readings":${json}}`).join(',')}]`);
        expect(response.length).toBeGreaterThan(0);
        expect(validateResponse(response)).toBe(true);
      }
      const day = JSON.parse(answers[3]!.get(id)!.toString());
      expect(day[0]).toMatchObject({ timestamp: '2031-10-25T22:00:00.000Z', periodTo: '2031-10-26T23:00:00.000Z', resolution: 86400 });
      expect(JSON.parse(answers[1]!.get(id)!.toString()).map((r: { value: number }) => r.value)).toEqual([1e21, -1e-7, 0, 123456789.123, -0.5, 2 ** 53]);
    });

    it('keeps every version of a reading and answers as recorded at an earlier instant', async () => {
      const vid = id + 20;
      const day = { start: base, end: base + 86_400_000 };
      const [t1, t2, t3] = [Date.UTC(2031, 1, 1), Date.UTC(2031, 1, 2), Date.UTC(2031, 1, 3)];
      await store.write({ rows: rows(vid, base, [1, 2, 3, 4]), updatedAtMs: t1 });
      await eventually(() => values(vid), (v) => v.length === 4);
      // The first reading posted again unchanged (no new version), the second changed.
      await store.write({ rows: rows(vid, base, [1, 20, 3]), updatedAtMs: t2 });
      await eventually(() => values(vid), (v) => v[1] === 20);
      await store.write({ rows: { ...rows(vid, base + Q, [200]), timestamps: Float64Array.of(base + Q, base + 4 * Q), values: Float64Array.of(200, 5), resolutions: Int32Array.of(900, 900), offsets: Int32Array.of(0, 2) }, updatedAtMs: t3 });
      const now = await eventually(async () => (await store.readSeries({ registerIds: [vid], ...day }))[0]!, (s) => s.values.length === 5);
      expect([...now.values]).toEqual([1, 200, 3, 4, 5]);
      expect([...now.updatedAt]).toEqual([t1, t3, t1, t1, t3]);
      const asOf = async (at: number) => (await store.readSeries({ registerIds: [vid], ...day, asOf: at }))[0]!;
      expect([...(await asOf(t1 - 1)).values]).toEqual([]);
      expect([...(await asOf(t1)).values]).toEqual([1, 2, 3, 4]);
      const atT2 = await asOf(t2);
      expect([...atT2.values]).toEqual([1, 20, 3, 4]);
      expect([...atT2.updatedAt]).toEqual([t1, t2, t1, t1]);
      expect([...(await asOf(t3 - 1)).values]).toEqual([1, 20, 3, 4]);
      expect([...(await asOf(t3)).values]).toEqual([1, 200, 3, 4, 5]);
      // The JSON answer, buckets and local days as of the same instant.
      const json = JSON.parse((await store.readJson({ registerIds: [vid], ...day, asOf: t2 }, 100)).get(vid)!.toString());
      expect(json.map((r: { value: number; updatedAt: string }) => [r.value, r.updatedAt])).toEqual([
        [1, new Date(t1).toISOString()],
        [20, new Date(t2).toISOString()],
        [3, new Date(t1).toISOString()],
        [4, new Date(t1).toISOString()],
      ]);
      const hourly = await store.bucketSeries({ registers: [{ id: vid, aggregate: 'sum', timeZone: 'UTC' }], ...day, resolutionSeconds: 3600, asOf: t2 });
      expect([...hourly[0]!.values]).toEqual([28]);
      expect([...hourly[0]!.updatedAt]).toEqual([t2]);
      const daily = JSON.parse((await store.bucketsJson({ registers: [{ id: vid, aggregate: 'avg', timeZone: 'Europe/Amsterdam' }], ...day, resolutionSeconds: 86400, asOf: t2 })).get(vid)!.toString());
      expect(daily.map((b: { value: number }) => b.value)).toEqual([7]);
      const quarter = await store.bucketSeries({ registers: [{ id: vid, aggregate: 'sum', timeZone: 'UTC' }], ...day, resolutionSeconds: 1800, asOf: t1 });
      expect([...quarter[0]!.values]).toEqual([3, 7]);
      // Every version of the readings that have more than one, in time and recordedAt order.
      const versions = await store.versions({ registerIds: [vid, vid + 1], ...day }, 100);
      expect([...versions.keys()]).toEqual([vid]);
      expect(versions.get(vid)).toEqual([
        { timestamp: base + Q, value: 2, resolution: 900, recordedAt: t1, supersededAt: t2 },
        { timestamp: base + Q, value: 20, resolution: 900, recordedAt: t2, supersededAt: t3 },
        { timestamp: base + Q, value: 200, resolution: 900, recordedAt: t3, supersededAt: null },
      ]);
      expect((await store.versions({ registerIds: [vid], start: base + 2 * Q, end: day.end }, 100)).size).toBe(0);
      await expect(store.versions({ registerIds: [vid], ...day }, 2)).rejects.toBeInstanceOf(TooManyPoints);
    });

    it('refuses to return more points than allowed', async () => {
      await expect(store.readJson({ registerIds: [id], ...hour }, 3)).rejects.toBeInstanceOf(TooManyPoints);
    });

    it('deletes a register’s readings', async () => {
      await store.deleteRegister(id);
      expect(await eventually(() => store.hasReadings(id), (has) => !has)).toBe(false);
      expect(await store.hasReadings(other)).toBe(true);
      await store.close();
    });
  });
}

contract('postgres', async () => {
  // A database of its own (the store's close() leaves the pool to its owner).
  const own = createPool(await createTestDatabase(), 4, log);
  pools.push(own);
  return new PostgresTimeSeriesStore(own, workers);
});

describe.skipIf(!questdbHttp || !questdbPg)('QuestDB (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => {
  contract('questdb', async () => {
    const { QuestDbTimeSeriesStore } = await import('../../src/store/timeseries/questdb/store.ts');
    const own = createPool(await createTestDatabase(), 4, log);
    pools.push(own);
    return QuestDbTimeSeriesStore.connect({ httpUrl: questdbHttp!, pgUrl: questdbPg!, table: `contract_${process.pid}` }, { pool: own, workers, log });
  });
});
