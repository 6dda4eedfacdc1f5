// One contract, every configured time-series backend. PostgreSQL always runs; QuestDB runs when
// QUESTDB_HTTP_URL and QUESTDB_PG_URL point at a server (docker compose provides one) and is
// reported as skipped otherwise. QuestDB applies writes asynchronously (WAL), so reads are polled.
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../src/store/database.ts';
import { PostgresTimeSeriesStore } from '../../src/store/timeseries/postgresStore.ts';
import { TooManyPoints, type TimeSeriesStore, type WriteBatch } from '../../src/store/timeseries/types.ts';
import { createTestDatabase } from '../support/testApp.ts';

const log = pino({ level: 'silent' });
const questdbHttp = process.env.QUESTDB_HTTP_URL;
const questdbPg = process.env.QUESTDB_PG_URL;
const pools: Pool[] = [];
afterAll(async () => {
  for (const p of pools) await p.end();
});

function batch(registerId: number, start: number, values: number[], updatedAtMs: number, step = 900): WriteBatch {
  const timestamps = Float64Array.from(values, (_, i) => start + i * step * 1000);
  const d = new Date(start);
  return {
    registerIds: [registerId],
    offsets: Int32Array.from([0, values.length]),
    timestamps,
    values: Float64Array.from(values),
    resolutions: new Int32Array(values.length).fill(step),
    months: [Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)],
    updatedAtMs,
  };
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
    let store: TimeSeriesStore;
    const id = 1_000_000 + Math.floor(Math.random() * 1_000_000);

    it('writes a batch and reads it back as stored', async () => {
      store = await open();
      await store.write(batch(id, base, [1, 2, 3, 4], Date.UTC(2031, 0, 2)));
      const json = await eventually(() => store.readJson({ registerIds: [id], start: base, end: base + 3_600_000 }, 100), (m) => m.has(id));
      expect(JSON.parse(json.get(id)!)).toEqual([1, 2, 3, 4].map((v, i) => ({
        timestamp: new Date(base + i * 900_000).toISOString(),
        periodTo: new Date(base + (i + 1) * 900_000).toISOString(),
        updatedAt: '2031-01-02T00:00:00.000Z',
        value: v,
        resolution: 900,
      })));
      expect(await store.hasReadings(id)).toBe(true);
    });

    it('replaces values and moves updatedAt on a correction', async () => {
      await store.write(batch(id, base + 900_000, [20, 30], Date.UTC(2031, 0, 3)));
      const series = await eventually(
        async () => (await store.readSeries({ registerIds: [id], start: base, end: base + 3_600_000 }))[0]!,
        (s) => s.values[1] === 20,
      );
      expect([...series.values]).toEqual([1, 20, 30, 4]);
      expect(series.updatedAt[1]).toBe(Date.UTC(2031, 0, 3));
      expect(series.updatedAt[0]).toBe(Date.UTC(2031, 0, 2));
    });

    it('sums or averages into buckets, and day buckets follow a time zone', async () => {
      const sums = await store.bucketSeries({ registers: [{ id, aggregate: 'sum', timeZone: 'UTC' }], start: base, end: base + 3_600_000, resolutionSeconds: 3600 });
      expect([...sums[0]!.values]).toEqual([55]);
      const avgs = JSON.parse((await store.bucketsJson({ registers: [{ id, aggregate: 'avg', timeZone: 'UTC' }], start: base, end: base + 3_600_000, resolutionSeconds: 1800 })).get(id)!);
      expect(avgs.map((b: { value: number }) => b.value)).toEqual([10.5, 17]);
      expect(avgs[0]).toMatchObject({ periodTo: new Date(base + 1_800_000).toISOString(), resolution: 1800 });
      const days = await store.bucketSeries({ registers: [{ id, aggregate: 'sum', timeZone: 'Asia/Tokyo' }], start: base - 86_400_000, end: base + 86_400_000, resolutionSeconds: 86400 });
      // 2031-01-01T00:00Z is 09:00 in Tokyo: the local day started at 2030-12-31T15:00Z.
      expect([...days[0]!.timestamps]).toEqual([Date.UTC(2030, 11, 31, 15)]);
      expect([...days[0]!.resolutions]).toEqual([86400]);
    });

    it('refuses to return more points than allowed', async () => {
      await expect(store.readJson({ registerIds: [id], start: base, end: base + 3_600_000 }, 3)).rejects.toBeInstanceOf(TooManyPoints);
    });

    it('deletes a register’s readings', async () => {
      await store.deleteRegister(id);
      expect(await eventually(() => store.hasReadings(id), (has) => !has)).toBe(false);
      await store.close();
    });
  });
}

contract('postgres', async () => {
  const pool = createPool(await createTestDatabase(), 4, log);
  pools.push(pool);
  return new PostgresTimeSeriesStore(pool);
});

describe.skipIf(!questdbHttp || !questdbPg)('QuestDB (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => {
  contract('questdb', async () => {
    const { QuestDbTimeSeriesStore } = await import('../../src/store/timeseries/questdbStore.ts');
    return QuestDbTimeSeriesStore.connect(questdbHttp!, questdbPg!, log);
  });
});
