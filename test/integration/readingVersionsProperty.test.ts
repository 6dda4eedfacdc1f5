// Reading versions under concurrent writers, on every configured time-series backend (PostgreSQL
// always; QuestDB when QUESTDB_HTTP_URL and QUESTDB_PG_URL are set, reported skipped otherwise):
// random batches and corrections from several writers, run at once with random pauses, over a
// few register-days. Afterwards
//   - every reading holds the value of the last write that committed it, and its versions are
//     every value written to it, in an order that agrees with real time (a write that ended before
//     another began is recorded before it), all readings of one write with one recordedAt, inside
//     the write's own span;
//   - for random instants, readings and hourly sums `asOf` them equal a model kept here: each
//     reading's value from the latest write recorded by then.
// The seed is printed by fast-check when a run fails.
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../src/store/database.ts';
import { PostgresTimeSeriesStore } from '../../src/store/timeseries/postgres/store.ts';
import type { ReadingRows, TimeSeriesStore } from '../../src/store/timeseries/types.ts';
import { WorkerPool } from '../../src/workerPool.ts';
import { dropQuestDbTable } from '../support/questdbFixtures.ts';
import { createTestDatabase } from '../support/testApp.ts';

const log = pino({ level: 'silent' });
const questdbHttp = process.env.QUESTDB_HTTP_URL;
const questdbPg = process.env.QUESTDB_PG_URL;
const workers = new WorkerPool(1);
const pools: Pool[] = [];
afterAll(async () => {
  for (const p of pools) await p.end();
  await workers.close();
  // The QuestDB tables of this run (the server may be shared): the readings and their versions.
  if (questdbHttp) await dropQuestDbTable(questdbPg, `versions_${process.pid}`);
});

const Q = 900_000;
const DAY = 86_400_000;
const BASE = Date.UTC(2032, 2, 1);
/** The readings written to: 2 registers × 16 quarter hours around a UTC midnight (two days each). */
const SLOTS = 16;
const slotTime = (slot: number) => BASE + DAY - 8 * Q + slot * Q;
const RANGE = { start: BASE, end: BASE + 2 * DAY };

interface Write {
  /** Register index (0, 1) and slot of each reading written. */
  readings: { register: number; slot: number }[];
  pauseMs: number;
}

const writeArb: fc.Arbitrary<Write> = fc.record({
  readings: fc.uniqueArray(fc.record({ register: fc.integer({ min: 0, max: 1 }), slot: fc.integer({ min: 0, max: SLOTS - 1 }) }), {
    minLength: 1,
    maxLength: 12,
    selector: (r) => `${r.register}:${r.slot}`,
  }),
  pauseMs: fc.integer({ min: 0, max: 4 }),
});

interface Done {
  id: number;
  write: Write;
  started: number;
  ended: number;
}

/** Value written by write `id` to a reading: unique per write and reading. */
const valueOf = (id: number, register: number, slot: number) => id * 1000 + register * 100 + slot + 0.125;

function rowsOf(ids: readonly number[], id: number, write: Write): ReadingRows {
  const sorted = [...write.readings].sort((a, b) => a.register - b.register || a.slot - b.slot);
  const offsets = [0, 0, 0];
  for (const r of sorted) offsets[r.register + 1]! += 1;
  offsets[2]! += offsets[1]!;
  return {
    registerIds: ids,
    offsets: Int32Array.from(offsets),
    timestamps: Float64Array.from(sorted, (r) => slotTime(r.slot)),
    values: Float64Array.from(sorted, (r) => valueOf(id, r.register, r.slot)),
    resolutions: new Int32Array(sorted.length).fill(900),
  };
}

function property(name: string, open: () => Promise<TimeSeriesStore>) {
  describe(`reading versions under concurrent writers: ${name}`, () => {
    it('keeps the last committed write, every version in commit order, and answers asOf as the model does', async () => {
      const store = await open();
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(fc.array(writeArb, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 4 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 6, maxLength: 6 }), async (writers, fractions) => {
          run += 1;
          const ids = [3_000_000 + 10 * run + Math.floor(Math.random() * 1_000_000) * 100, 0];
          ids[1] = ids[0]! + 1;
          // Every writer's batches in order, the writers at once.
          const done: Done[] = [];
          let next = 1;
          await Promise.all(
            writers.map(async (batches) => {
              for (const write of batches) {
                const id = next++;
                await new Promise((r) => setTimeout(r, write.pauseMs));
                const started = Date.now();
                await store.write({ rows: rowsOf(ids, id, write) });
                done.push({ id, write, started, ended: Date.now() });
              }
            }),
          );
          const key = (register: number, slot: number) => `${register}:${slot}`;
          const writesOf = new Map<string, Done[]>();
          for (const d of done) for (const r of d.write.readings) (writesOf.get(key(r.register, r.slot)) ?? writesOf.set(key(r.register, r.slot), []).get(key(r.register, r.slot))!).push(d);
          // Versions: which write each value came from, and when it was recorded.
          const versions = await store.versions({ registerIds: ids, ...RANGE }, 10_000);
          const recordedAt = new Map<number, number>();
          const writeOfValue = (v: number) => Math.floor(v / 1000);
          const current = await store.readSeries({ registerIds: ids, ...RANGE });
          for (const register of [0, 1]) {
            const s = current[register]!;
            for (let slot = 0; slot < SLOTS; slot += 1) {
              const writes = writesOf.get(key(register, slot)) ?? [];
              const k = s.timestamps.indexOf(slotTime(slot));
              if (writes.length === 0) {
                expect(k).toBe(-1);
                continue;
              }
              const list = (versions.get(ids[register]!) ?? []).filter((v) => v.timestamp === slotTime(slot));
              const chain = writes.length > 1 ? list : [{ value: s.values[k]!, recordedAt: s.updatedAt[k]!, supersededAt: null }];
              // Every write's value once, in recordedAt order, each ending where the next begins.
              expect(chain.map((v) => writeOfValue(v.value)).sort((a, b) => a - b)).toEqual(writes.map((w) => w.id).sort((a, b) => a - b));
              chain.forEach((v, i) => {
                if (i > 0) expect(v.recordedAt).toBeGreaterThan(chain[i - 1]!.recordedAt);
                expect(v.supersededAt).toBe(i + 1 < chain.length ? chain[i + 1]!.recordedAt : null);
                const w = writeOfValue(v.value);
                const seen = recordedAt.get(w);
                if (seen !== undefined) expect(v.recordedAt, `write ${w}: one recordedAt for all its readings`).toBe(seen);
                recordedAt.set(w, v.recordedAt);
              });
              // The current value is the last version.
              expect(s.values[k]).toBe(chain.at(-1)!.value);
              expect(s.updatedAt[k]).toBe(chain.at(-1)!.recordedAt);
            }
          }
          // Real time: recorded during the write, and a write that ended before another began is recorded before it.
          for (const d of done) {
            const r = recordedAt.get(d.id)!;
            expect(r).toBeGreaterThanOrEqual(d.started);
            expect(r).toBeLessThanOrEqual(d.ended + 1);
            for (const e of done) if (d.ended < e.started) expect(r).toBeLessThan(recordedAt.get(e.id)!);
          }
          // asOf: the model's answer at chosen instants.
          const instants = [...recordedAt.values()].flatMap((r) => [r - 1, r]);
          const lo = Math.min(...instants) - 5;
          const hi = Math.max(...instants) + 5;
          for (const f of fractions) instants.push(Math.round(lo + f * (hi - lo)));
          for (const at of instants) {
            const series = await store.readSeries({ registerIds: ids, ...RANGE, asOf: at });
            const sums = await store.bucketSeries({ registers: ids.map((id) => ({ id, aggregate: 'sum' as const, timeZone: 'UTC' })), ...RANGE, resolutionSeconds: 3600, asOf: at });
            for (const register of [0, 1]) {
              const model: { t: number; v: number; r: number }[] = [];
              for (let slot = 0; slot < SLOTS; slot += 1) {
                const last = (writesOf.get(key(register, slot)) ?? []).filter((w) => recordedAt.get(w.id)! <= at).sort((a, b) => recordedAt.get(a.id)! - recordedAt.get(b.id)!).at(-1);
                if (last) model.push({ t: slotTime(slot), v: valueOf(last.id, register, slot), r: recordedAt.get(last.id)! });
              }
              const s = series[register]!;
              expect([...s.timestamps], `asOf ${at}`).toEqual(model.map((m) => m.t));
              expect([...s.values], `asOf ${at}`).toEqual(model.map((m) => m.v));
              expect([...s.updatedAt], `asOf ${at}`).toEqual(model.map((m) => m.r));
              const hours = new Map<number, number>();
              for (const m of model) hours.set(Math.floor(m.t / 3_600_000) * 3_600_000, (hours.get(Math.floor(m.t / 3_600_000) * 3_600_000) ?? 0) + m.v);
              expect([...sums[register]!.timestamps], `hours asOf ${at}`).toEqual([...hours.keys()]);
              expect([...sums[register]!.values], `hours asOf ${at}`).toEqual([...hours.values()]);
            }
          }
        }),
        { numRuns: 12 },
      );
      await store.close();
    }, 120_000);
  });
}

property('postgres', async () => {
  const own = createPool(await createTestDatabase(), 8, log);
  pools.push(own);
  return new PostgresTimeSeriesStore(own, workers);
});

describe.skipIf(!questdbHttp || !questdbPg)('QuestDB (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => {
  property('questdb', async () => {
    const { QuestDbTimeSeriesStore } = await import('../../src/store/timeseries/questdb/store.ts');
    const own = createPool(await createTestDatabase(), 8, log);
    pools.push(own);
    return QuestDbTimeSeriesStore.connect({ httpUrl: questdbHttp!, pgUrl: questdbPg!, table: `versions_${process.pid}` }, { pool: own, workers, log });
  });
});
