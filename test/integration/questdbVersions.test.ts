// Reading versions on the QuestDB store against a real QuestDB (skipped with the reason without
// one): every value a reading has had kept with the instant it was recorded, `asOf` answers as
// recorded then (range and bucket reads), versions() listing them, concurrent writers of the same
// readings all stored in journal order, a batch replayed after its writer died mid-send keeping
// exactly the versions it replaced, the retention, the purge of a deleted register's versions,
// and a table of an older Flex taken as it is. docs/questdb.md, "Versions".
import fc from 'fast-check';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchJournal } from '../../src/store/timeseries/questdb/journal.ts';
import { PartitionGate } from '../../src/store/timeseries/questdb/purge.ts';
import { copyStatements, versionsTableOf } from '../../src/store/timeseries/questdb/versions.ts';
import type { ReadingRows, ReadingVersion, Series, TimeSeriesStore } from '../../src/store/timeseries/types.ts';
import { dropQuestDbTable, questdbStoreSetting } from '../support/questdbFixtures.ts';

const { httpUrl, pgUrl, table, workers, database } = questdbStoreSetting('versions');
const log = pino({ level: 'silent' });
const Q = 900_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
let questdb: pg.Client;
const extraTables: string[] = [];

beforeAll(async () => {
  if (!httpUrl || !pgUrl) return;
  questdb = new pg.Client({ connectionString: pgUrl });
  await questdb.connect();
});
afterAll(async () => {
  for (const t of extraTables) await dropQuestDbTable(pgUrl, t);
  await questdb?.end();
});

/** One series per register: `readings` as [timestamp, value] pairs, in time order. */
function rows(series: { registerId: number; readings: [number, number][] }[]): ReadingRows {
  const offsets = new Int32Array(series.length + 1);
  series.forEach((s, k) => (offsets[k + 1] = offsets[k]! + s.readings.length));
  const all = series.flatMap((s) => s.readings);
  return {
    registerIds: series.map((s) => s.registerId),
    offsets,
    timestamps: Float64Array.from(all, (r) => r[0]),
    values: Float64Array.from(all, (r) => r[1]),
    resolutions: new Int32Array(all.length).fill(900),
  };
}

const plain = (s: Series) => Array.from(s.timestamps, (t, i) => ({ t, v: s.values[i], r: s.resolutions[i], u: s.updatedAt[i] }));

/** The versions of each (register, timestamp) as a model: each write appends, with its recordedAt. */
class Model {
  readonly keys = new Map<number, Map<number, { value: number; recordedAt: number }[]>>();
  write(registerId: number, readings: [number, number][], recordedAt: number): void {
    const byTs = this.keys.get(registerId) ?? this.keys.set(registerId, new Map()).get(registerId)!;
    for (const [t, value] of readings) (byTs.get(t) ?? byTs.set(t, []).get(t)!).push({ value, recordedAt });
  }
  /** The readings of a register as recorded at `asOf`, in time order. */
  at(registerId: number, asOf: number): { t: number; v: number; r: number; u: number }[] {
    const out: { t: number; v: number; r: number; u: number }[] = [];
    for (const [t, versions] of [...(this.keys.get(registerId) ?? new Map<number, { value: number; recordedAt: number }[]>())].sort((a, b) => a[0] - b[0])) {
      const shown = versions.filter((v) => v.recordedAt <= asOf).sort((a, b) => a.recordedAt - b.recordedAt).at(-1);
      if (shown) out.push({ t, v: shown.value, r: 900, u: shown.recordedAt });
    }
    return out;
  }
  /** Buckets of `size` ms starting at multiples of it from `offset` (a zone's local midnight
   * `offset` ms before UTC's), summed or averaged. */
  buckets(registerId: number, asOf: number, size: number, aggregate: 'sum' | 'avg', offset = 0): { t: number; v: number; u: number }[] {
    const groups = new Map<number, { t: number; v: number; u: number }[]>();
    for (const r of this.at(registerId, asOf)) {
      const b = Math.floor((r.t + offset) / size) * size - offset;
      (groups.get(b) ?? groups.set(b, []).get(b)!).push(r);
    }
    return [...groups].map(([t, rs]) => {
      const total = rs.reduce((n, r) => n + r.v, 0);
      return { t, v: aggregate === 'sum' ? total : total / rs.length, u: Math.max(...rs.map((r) => r.u)) };
    });
  }
  versions(registerId: number): ReadingVersion[] {
    const out: ReadingVersion[] = [];
    for (const [timestamp, versions] of [...(this.keys.get(registerId) ?? new Map<number, { value: number; recordedAt: number }[]>())].sort((a, b) => a[0] - b[0])) {
      if (versions.length < 2) continue;
      const sorted = [...versions].sort((a, b) => a.recordedAt - b.recordedAt);
      sorted.forEach((v, k) => out.push({ timestamp, value: v.value, resolution: 900, recordedAt: v.recordedAt, supersededAt: sorted[k + 1]?.recordedAt ?? null }));
    }
    return out;
  }
}

/** Amsterdam's offset from UTC at `ms`, in ms (from Intl). */
function amsterdamOffset(ms: number): number {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Amsterdam', hour: '2-digit', hourCycle: 'h23' }).formatToParts(ms);
  const hour = Number(parts.find((p) => p.type === 'hour')!.value);
  return (((hour - new Date(ms).getUTCHours()) % 24) + 24) % 24 * HOUR;
}

/** Every answer as of `asOf` equals the model's: range reads, hourly averages and UTC-day sums. */
async function expectAsOf(store: TimeSeriesStore, model: Model, registerIds: number[], start: number, end: number, asOf: number): Promise<void> {
  const series = await store.readSeries({ registerIds, start, end, asOf });
  expect(series.map((s) => [s.registerId, plain(s)]), `readSeries as of ${asOf}`).toEqual(registerIds.map((id) => [id, model.at(id, asOf)]));
  const json = await store.readJson({ registerIds, start, end, asOf }, 10_000);
  for (const id of registerIds) {
    const expected = model.at(id, asOf);
    const got = json.get(id) ? (JSON.parse(json.get(id)!.toString()) as { timestamp: string; value: number; updatedAt: string }[]) : [];
    expect(got.map((r) => [Date.parse(r.timestamp), r.value, Date.parse(r.updatedAt)]), `readJson ${id} as of ${asOf}`).toEqual(expected.map((r) => [r.t, r.v, r.u]));
  }
  // Hourly averages; sums of UTC days; sums of local days in Amsterdam (the dates tested are in
  // summer or winter time throughout: `offset`).
  for (const [size, aggregate, timeZone] of [
    [HOUR, 'avg', 'UTC'],
    [DAY, 'sum', 'UTC'],
    [DAY, 'sum', 'Europe/Amsterdam'],
  ] as const) {
    const offset = timeZone === 'UTC' ? 0 : amsterdamOffset(start);
    const buckets = await store.bucketSeries({ registers: registerIds.map((id) => ({ id, aggregate, timeZone })), start, end, resolutionSeconds: size / 1000, asOf });
    expect(
      buckets.map((s) => [s.registerId, Array.from(s.timestamps, (t, i) => ({ t, v: s.values[i], u: s.updatedAt[i] }))]),
      `${aggregate} of ${size / 1000} s in ${timeZone} as of ${asOf}`,
    ).toEqual(registerIds.map((id) => [id, model.buckets(id, asOf, size, aggregate, offset)]));
  }
}

describe.skipIf(!httpUrl || !pgUrl)('reading versions on QuestDB (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => {
  async function open(options: { versionsRetention?: { cutoff(now: number): number }; table?: string } = {}) {
    const { QuestDbTimeSeriesStore } = await import('../../src/store/timeseries/questdb/store.ts');
    const pool = await database();
    const store = await QuestDbTimeSeriesStore.connect({ httpUrl: httpUrl!, pgUrl: pgUrl!, table, purgeIntervalMs: 0, purgeAfterMs: 0, ...options }, { pool, workers, log });
    return { store, pool };
  }
  /** The recordedAt the store gave the reading at `t` of `registerId`. */
  async function recordedAt(store: TimeSeriesStore, registerId: number, t: number): Promise<number> {
    const [s] = await store.readSeries({ registerIds: [registerId], start: t, end: t + 1 });
    return s!.updatedAt[0]!;
  }

  it('keeps every value with the instant it was recorded, and answers as recorded at any instant', async () => {
    const { store } = await open();
    try {
      const id = 101;
      const start = Date.UTC(2032, 2, 10, 9, 30);
      const model = new Model();
      const writes: [number, number][][] = [
        Array.from({ length: 8 }, (_, i) => [start + i * Q, i / 8]),
        [2, 3, 4].map((i) => [start + i * Q, 10 + i / 4]),
        [[start + 3 * Q, 20]],
        [[start + 9 * Q, 5]], // a reading added later: absent before
      ];
      const instants: number[] = [];
      for (const readings of writes) {
        expect(await store.write({ rows: rows([{ registerId: id, readings }]) })).toEqual({ ok: true, readings: readings.length });
        const r = await recordedAt(store, id, readings[0]![0]);
        model.write(id, readings, r);
        instants.push(r);
      }
      // recordedAt comes from the write clock: strictly increasing, close to now.
      expect([...instants].sort((a, b) => a - b)).toEqual(instants);
      expect(new Set(instants).size).toBe(instants.length);
      expect(Math.abs(instants.at(-1)! - Date.now())).toBeLessThan(60_000);

      const end = start + DAY;
      for (const asOf of [instants[0]! - 1, ...instants.flatMap((r) => [r, r + 1]), instants[1]! - 1, Date.now()]) await expectAsOf(store, model, [id], start, end, asOf);
      // Without asOf: the current versions.
      expect(plain((await store.readSeries({ registerIds: [id], start, end }))[0]!)).toEqual(model.at(id, Infinity));

      // Posted again unchanged: no new version, the same updatedAt (a mixed batch: one changed).
      const before = plain((await store.readSeries({ registerIds: [id], start, end }))[0]!);
      await store.write({ rows: rows([{ registerId: id, readings: [[start, 0], [start + Q, 7], [start + 9 * Q, 5]] }]) });
      const changedAt = await recordedAt(store, id, start + Q);
      model.write(id, [[start + Q, 7]], changedAt);
      const after = plain((await store.readSeries({ registerIds: [id], start, end }))[0]!);
      expect(after).toEqual(before.map((r) => (r.t === start + Q ? { ...r, v: 7, u: changedAt } : r)));
      // All of it unchanged: nothing written at all.
      await store.write({ rows: rows([{ registerId: id, readings: [[start, 0], [start + Q, 7]] }]) });
      expect(plain((await store.readSeries({ registerIds: [id], start, end }))[0]!)).toEqual(after);
      instants.push(changedAt);

      const versions = await store.versions({ registerIds: [id], start, end }, 100);
      expect([...versions.keys()]).toEqual([id]);
      expect(versions.get(id)).toEqual(model.versions(id));
      expect(versions.get(id)!.filter((v) => v.timestamp === start + 3 * Q).map((v) => v.value)).toEqual([3 / 8, 10.75, 20]);
      // The limit counts every version listed (9 here).
      await expect(store.versions({ registerIds: [id], start, end }, 8)).rejects.toThrow('more than 8 points');
      expect((await store.versions({ registerIds: [id], start: start + 4 * Q, end }, 100)).get(id)!.map((v) => v.timestamp)).toEqual([start + 4 * Q, start + 4 * Q]);
      // changedSince sees the last correction only after the instant before it.
      expect(await store.changedSince([{ registerIds: [id], start, end, since: changedAt - 1 }, { registerIds: [id], start, end, since: changedAt }])).toEqual([true, false]);
      for (const asOf of [changedAt - 1, changedAt]) await expectAsOf(store, model, [id], start, end, asOf);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('answers as a model of random batches and corrections from several writers at random instants', async () => {
    const { store } = await open();
    const start = Date.UTC(2032, 3, 20, 22, 30);
    const slots = 12;
    const marker = 199;
    let run = 0;
    try {
      const batch = fc.record({
        register: fc.integer({ min: 0, max: 1 }),
        slots: fc.uniqueArray(fc.integer({ min: 0, max: slots - 1 }), { minLength: 1, maxLength: slots }),
        eighths: fc.integer({ min: -800, max: 800 }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(fc.array(batch, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }), async (groups, picks) => {
          run += 1;
          const ids = [200 + run * 2, 201 + run * 2];
          const model = new Model();
          const recorded: number[] = [];
          let k = 0;
          for (const group of groups) {
            // The batches of a group are written at once; each also writes its own marker
            // reading, whose updatedAt tells the batch's recordedAt.
            const written = group.map((b) => ({
              registerId: ids[b.register]!,
              readings: [...b.slots].sort((x, y) => x - y).map((s, i): [number, number] => [start + s * Q, (b.eighths + i) / 8]),
              markerAt: start - DAY + (run * 64 + k++) * Q,
            }));
            const outcomes = await Promise.all(written.map((w) => store.write({ rows: rows([{ registerId: w.registerId, readings: w.readings }, { registerId: marker, readings: [[w.markerAt, 0]] }]) })));
            expect(outcomes.every((o) => o.ok)).toBe(true);
            const instants = await Promise.all(written.map((w) => recordedAt(store, marker, w.markerAt)));
            // In the order they were recorded, which is the order they were journaled and stored.
            written.map((w, i) => ({ w, r: instants[i]! })).sort((a, b) => a.r - b.r).forEach(({ w, r }) => model.write(w.registerId, w.readings, r));
            recorded.push(...instants);
          }
          const end = start + slots * Q;
          const first = Math.min(...recorded);
          const last = Math.max(...recorded);
          const asOfs = [first - 1, last, ...picks.map((p) => Math.round(first + p * (last - first)))];
          for (const asOf of asOfs) await expectAsOf(store, model, ids, start, end, asOf);
          const versions = await store.versions({ registerIds: ids, start, end }, 10_000);
          for (const id of ids) expect(versions.get(id) ?? [], `versions of ${id}`).toEqual(model.versions(id));
          // Every reading equals the last write of it.
          expect((await store.readSeries({ registerIds: ids, start, end })).map(plain)).toEqual(ids.map((id) => model.at(id, Infinity)));
        }),
        { numRuns: 3 },
      );
    } finally {
      await store.close();
    }
  }, 120_000);

  it('stores every batch of many concurrent writers of the same register-days, the last journaled winning, each replaced value kept', async () => {
    const { store } = await open();
    try {
      const start = Date.UTC(2032, 5, 1);
      const registers = [301, 302];
      // 10 batches at once, each every quarter hour of the same two register-days, its own values.
      const batches = Array.from({ length: 10 }, (_, b) => rows(registers.map((registerId) => ({ registerId, readings: Array.from({ length: 96 }, (_, i): [number, number] => [start + i * Q, b * 1000 + i]) }))));
      const outcomes = await Promise.all(batches.map((input) => store.write({ rows: input })));
      expect(outcomes).toEqual(batches.map(() => ({ ok: true, readings: 192 })));
      const versions = await store.versions({ registerIds: registers, start, end: start + DAY }, 10_000);
      for (const id of registers) {
        const list = versions.get(id)!;
        expect(list.length).toBe(96 * 10);
        // Per timestamp: one version from each batch, each superseded when the next was recorded.
        for (let i = 0; i < 96; i += 1) {
          const at = list.filter((v) => v.timestamp === start + i * Q);
          expect(at.map((v) => v.value % 1000)).toEqual(Array(10).fill(i));
          expect(new Set(at.map((v) => Math.floor(v.value / 1000))).size).toBe(10);
          at.forEach((v, k) => expect(v.supersededAt).toBe(at[k + 1]?.recordedAt ?? null));
        }
        // The current value is the last one recorded, the same batch for every reading.
        const current = list.filter((v) => v.supersededAt === null);
        expect(new Set(current.map((v) => Math.floor(v.value / 1000))).size).toBe(1);
        const [s] = await store.readSeries({ registerIds: [id], start, end: start + DAY });
        expect(Array.from(s!.values)).toEqual(current.map((v) => v.value));
      }
    } finally {
      await store.close();
    }
  }, 120_000);

  it('replays a batch whose writer died after sending part of it without taking its own rows for replaced ones', async () => {
    const { store, pool } = await open();
    try {
      const id = 401;
      const start = Date.UTC(2032, 6, 1);
      const readings = (value: number) => Array.from({ length: 8 }, (_, i): [number, number] => [start + i * Q, value + i]);
      await store.write({ rows: rows([{ registerId: id, readings: readings(0) }]) });
      const first = await recordedAt(store, id, start);
      // Another instance's writer: journals the correction, copies what it replaces (as the
      // store does), sends half of it, and dies.
      const batch = rows([{ registerId: id, readings: readings(100) }]);
      const entry = await new BatchJournal(pool).begin(batch, undefined, {
        send: async () => undefined,
        keepVersions: async (b) => {
          for (const { copy } of copyStatements(b.rows, table, b.updatedAtMs)) await questdb.query(copy);
        },
        gate: new PartitionGate(table, versionsTableOf(table), async () => 0),
      });
      await entry.ready;
      const half = readings(100)
        .slice(0, 4)
        .map(([t, v]) => `${table},register_id=${id} value=${v},resolution=900i,updated_at=${entry.recordedAtMs * 1000}t ${t}000000\n`)
        .join('');
      const sent = await fetch(`${httpUrl}/write`, { method: 'POST', body: half });
      expect(sent.status).toBe(204);
      await entry.abandon();
      // QuestDB has applied the half that was sent.
      const applied = async () => Number((await questdb.query(`SELECT count() AS n FROM ${table} WHERE register_id = '${id}' AND value >= 100`)).rows[0].n);
      for (let tries = 0; (await applied()) < 4 && tries < 200; tries += 1) await new Promise((r) => setTimeout(r, 25));
      expect(await applied()).toBe(4);

      expect(await store.replayPending()).toBe(1);
      const versions = (await store.versions({ registerIds: [id], start, end: start + DAY }, 100)).get(id)!;
      expect(versions).toEqual(
        readings(0).flatMap(([t, v]) => [
          { timestamp: t, value: v, resolution: 900, recordedAt: first, supersededAt: entry.recordedAtMs },
          { timestamp: t, value: v + 100, resolution: 900, recordedAt: entry.recordedAtMs, supersededAt: null },
        ]),
      );
    } finally {
      await store.close();
    }
  }, 60_000);

  it('replays a batch whose writer died between copying what it replaces and noting that, copying nothing twice', async () => {
    const { store, pool } = await open();
    try {
      const id = 402;
      const start = Date.UTC(2032, 6, 2);
      const readings = (value: number) => Array.from({ length: 8 }, (_, i): [number, number] => [start + i * Q, value + i]);
      await store.write({ rows: rows([{ registerId: id, readings: readings(0) }]) });
      const first = await recordedAt(store, id, start);
      const killed = new Error('killed here');
      const entry = await new BatchJournal(pool).begin(rows([{ registerId: id, readings: readings(100) }]), undefined, {
        send: async () => undefined,
        keepVersions: async (b) => {
          for (const { copy } of copyStatements(b.rows, table, b.updatedAtMs)) await questdb.query(copy);
          throw killed;
        },
        gate: new PartitionGate(table, versionsTableOf(table), async () => 0),
      });
      await expect(entry.ready).rejects.toBe(killed);
      await entry.abandon();

      expect(await store.replayPending()).toBe(1);
      expect((await store.versions({ registerIds: [id], start, end: start + DAY }, 100)).get(id)).toEqual(
        readings(0).flatMap(([t, v]) => [
          { timestamp: t, value: v, resolution: 900, recordedAt: first, supersededAt: entry.recordedAtMs },
          { timestamp: t, value: v + 100, resolution: 900, recordedAt: entry.recordedAtMs, supersededAt: null },
        ]),
      );
    } finally {
      await store.close();
    }
  }, 60_000);

  it('drops superseded versions past the retention, a month at a time', async () => {
    const retention = 30 * DAY;
    // Its own table: the retention drops months of the whole table.
    const own = `${table}_retention`;
    extraTables.push(own);
    const { store } = await open({ versionsRetention: { cutoff: (now) => now - retention }, table: own });
    try {
      const id = 501;
      const start = Date.UTC(2032, 7, 1);
      await store.write({ rows: rows([{ registerId: id, readings: [[start, 1]] }]), updatedAtMs: Date.UTC(2032, 7, 1) });
      // Superseded in September, then in October.
      await store.write({ rows: rows([{ registerId: id, readings: [[start, 2]] }]), updatedAtMs: Date.UTC(2032, 8, 15) });
      await store.write({ rows: rows([{ registerId: id, readings: [[start, 3]] }]), updatedAtMs: Date.UTC(2032, 9, 15) });
      const values = async () => (await store.versions({ registerIds: [id], start, end: start + DAY }, 100)).get(id)?.map((v) => v.value) ?? [];
      expect(await values()).toEqual([1, 2, 3]);
      // 30 days before mid-October is in September: nothing wholly past the limit; 30 days before
      // mid-November is in October: September is.
      expect(await store.dropExpiredVersions(Date.UTC(2032, 9, 14))).toBe(0);
      expect(await store.dropExpiredVersions(Date.UTC(2032, 10, 14))).toBe(1);
      expect(await values()).toEqual([2, 3]);
      expect(store.periodicWork.map((w) => w.name)).toContain('reading-versions-purge');
    } finally {
      await store.close();
    }
  }, 60_000);

  it('purges a deleted register’s versions from disk', async () => {
    const { store } = await open();
    try {
      const [doomed, kept] = [601, 602];
      const start = Date.UTC(2032, 8, 1);
      for (const value of [1, 2, 3]) await store.write({ rows: rows([doomed, kept].map((registerId) => ({ registerId, readings: [[start, value] as [number, number]] }))) });
      await store.deleteRegister(doomed);
      expect((await store.versions({ registerIds: [doomed], start, end: start + DAY }, 100)).size).toBe(0);
      while ((await store.purge()) > 0);
      const onDisk = async (t: string, registerId: number) => Number((await questdb.query(`SELECT count() AS n FROM ${t} WHERE register_id = '${registerId}'`)).rows[0].n);
      expect([await onDisk(table, doomed), await onDisk(versionsTableOf(table), doomed)]).toEqual([0, 0]);
      expect([await onDisk(table, kept), await onDisk(versionsTableOf(table), kept)]).toEqual([1, 2]);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('takes a table an older Flex wrote as it is: its rows the current versions, recorded at their updatedAt', async () => {
    const older = `${table}_older`;
    extraTables.push(older);
    await questdb.query(`CREATE TABLE ${older} (register_id SYMBOL CAPACITY 100000 INDEX, value DOUBLE, resolution INT, updated_at TIMESTAMP, ts TIMESTAMP) TIMESTAMP(ts) PARTITION BY MONTH WAL DEDUP UPSERT KEYS(ts, register_id)`);
    const start = Date.UTC(2032, 9, 1);
    const updated = Date.now() - DAY;
    const lines = Array.from({ length: 4 }, (_, i) => `${older},register_id=701 value=${i},resolution=900i,updated_at=${updated * 1000}t ${start + i * Q}000000\n`).join('');
    expect((await fetch(`${httpUrl}/write`, { method: 'POST', body: lines })).status).toBe(204);
    const { store } = await open({ table: older });
    try {
      const query = { registerIds: [701], start, end: start + DAY };
      // The store waits for QuestDB to have applied the table when it writes; here, poll.
      for (let tries = 0; (await store.readSeries(query))[0]!.timestamps.length < 4 && tries < 100; tries += 1) await new Promise((r) => setTimeout(r, 50));
      expect(plain((await store.readSeries(query))[0]!).map((r) => [r.v, r.u])).toEqual([0, 1, 2, 3].map((v) => [v, updated]));
      expect((await store.readSeries({ ...query, asOf: updated - 1 }))[0]!.timestamps.length).toBe(0);
      expect((await store.readSeries({ ...query, asOf: updated }))[0]!.timestamps.length).toBe(4);
      expect((await store.versions(query, 100)).size).toBe(0);
      await store.write({ rows: rows([{ registerId: 701, readings: [[start, 9]] }]) });
      expect((await store.versions(query, 100)).get(701)!.map((v) => [v.value, v.recordedAt === updated])).toEqual([
        [0, true],
        [9, false],
      ]);
    } finally {
      await store.close();
    }
  }, 60_000);
});
