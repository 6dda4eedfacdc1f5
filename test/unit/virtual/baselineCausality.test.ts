// Property: a target day's baseline depends only on that day and the days before it. For random
// histories (with gaps, across clock changes), event days, event periods, holidays and every
// baseline code, a day's values are the same asked alone, as part of a longer range, or for a
// few of its hours, and stay the same when later days become event days. The inputs are loaded
// the way the engine (src/meter/virtualRegisters.ts) loads them: baselineReach decides which
// event days, periods and holidays are read, baselineHistoryStart and baselineHistoryEnd which
// readings.
// fast-check prints the seed of a failing run; FC_SEED=<seed> replays it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BaselineAlgorithm, computeBaseline, type EventPeriod } from '../../../src/shared/virtual/baselines.ts';
import { baselineHistoryEnd, baselineHistoryStart, baselineReach, excludedDaySet } from '../../../src/shared/virtual/baselineDays.ts';
import { dayIndexOfKey, dayIndexToKey, localDayAt } from '../../../src/shared/virtual/time.ts';

const HOUR = 3_600_000;
const HISTORY_DAYS = 120;

interface Scenario {
  zone: string;
  resolution: number;
  /** Day number of the first day with readings. */
  firstDay: number;
  seed: number;
  /** Days (from firstDay) without any reading. */
  gapDays: number[];
  eventDays: number[];
  periods: { day: number; hour: number; hours: number }[];
  holidays: number[];
  algorithm: BaselineAlgorithm;
  target: number;
  before: number;
  after: number;
  partial: { hour: number; hours: number };
  later: { days: number[]; period: { day: number; hour: number; hours: number } };
}

/** A deterministic pseudo-random number in [0, 1) for (seed, n). */
function noise(seed: number, n: number): number {
  let x = (seed ^ Math.imul(n | 0, 0x9e3779b1) ^ Math.floor(n / 2 ** 32)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
  return ((x ^ (x >>> 16)) >>> 0) / 2 ** 32;
}

/** The reading at interval start `t`: a level per day and noise per interval; 1 in 200 missing,
 * and none on the gap days (so that searches run short of similar days). */
function reading(s: Scenario, t: number, dataStart: number, dataEnd: number, gaps: readonly EventPeriod[]): number {
  if (t < dataStart || t >= dataEnd || gaps.some((g) => t >= g.start && t < g.end)) return NaN;
  const slot = Math.floor(t / (s.resolution * 1000));
  if (noise(s.seed, slot) < 0.005) return NaN;
  const dayLevel = 20 + 80 * noise(s.seed + 1, Math.floor(t / (86_400_000)));
  return Math.round((dayLevel + 10 * noise(s.seed + 2, slot)) * 100) / 100;
}

/** Interval starts of local days [from, to] at the resolution. */
function daysGrid(s: Scenario, from: number, to: number, hourFrom = 0, hours = Infinity): Float64Array {
  const step = s.resolution * 1000;
  const out: number[] = [];
  for (let d = from; d <= to; d++) {
    const day = localDayAt(d, s.zone);
    const lo = day.start + hourFrom * HOUR;
    const hi = Math.min(day.end, lo + hours * HOUR);
    for (let t = Math.ceil(day.start / step) * step; t < day.end; t += step) if (t >= lo && t < hi) out.push(t);
  }
  return Float64Array.from(out);
}

function periodOf(s: Scenario, p: { day: number; hour: number; hours: number }): EventPeriod {
  const start = localDayAt(s.firstDay + p.day, s.zone).start + p.hour * HOUR;
  return { start, end: start + p.hours * HOUR };
}

/** The baseline over `targets` as the engine computes it, with the scenario's inputs. */
function engine(s: Scenario, targets: Float64Array, withLater: boolean): number[] {
  const reach = baselineReach(targets, s.zone);
  const inReach = (d: number) => d >= reach.fromDay && d <= reach.lastDay;
  const eventDays = [...s.eventDays, ...(withLater ? s.later.days : [])].map((d) => s.firstDay + d).filter(inReach);
  const reachStart = localDayAt(reach.fromDay, s.zone).start;
  const reachEnd = localDayAt(reach.lastDay, s.zone).end;
  const eventPeriods = [...s.periods, ...(withLater ? [s.later.period] : [])].map((p) => periodOf(s, p)).filter((p) => p.start < reachEnd && p.end > reachStart);
  const holidays = s.holidays.map((d) => s.firstDay + d).filter(inReach).map(dayIndexToKey);
  const excluded = excludedDaySet(eventDays, eventPeriods, s.zone);
  const historyStart = baselineHistoryStart(s.algorithm, targets, reach, excluded);
  const step = s.resolution * 1000;
  const dataStart = localDayAt(s.firstDay, s.zone).start;
  const dataEnd = localDayAt(s.firstDay + HISTORY_DAYS, s.zone).start;
  const timestamps: number[] = [];
  const historyEnd = Math.max(baselineHistoryEnd(reach, s.zone), targets[targets.length - 1]! + step);
  for (let t = Math.floor(historyStart / step) * step; t < historyEnd; t += step) timestamps.push(t);
  const gaps = s.gapDays.map((d) => localDayAt(s.firstDay + d, s.zone));
  const history = { timestamps: Float64Array.from(timestamps), values: Float64Array.from(timestamps, (t) => reading(s, t, dataStart, dataEnd, gaps)) };
  return Array.from(
    computeBaseline(s.algorithm, {
      targetTimestamps: targets,
      resolutionSeconds: s.resolution,
      timeZone: s.zone,
      history,
      excludedDays: eventDays.map(dayIndexToKey),
      eventPeriods,
      holidays,
    }),
  );
}

const periodArb = (from: number, to: number) => fc.record({ day: fc.integer({ min: from, max: to }), hour: fc.integer({ min: 0, max: 23 }), hours: fc.integer({ min: 1, max: 8 }) });

const scenario: fc.Arbitrary<Scenario> = fc
  .record({
    zone: fc.constantFrom('UTC', 'Europe/Oslo', 'America/New_York'),
    resolution: fc.constantFrom(3600, 1800),
    // 2024-01-05 … 2024-10-20: target days fall on every kind of day, the clock changes included.
    firstDay: fc.integer({ min: dayIndexOfKey('2024-01-05'), max: dayIndexOfKey('2024-10-20') }),
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    gapDays: fc.array(fc.integer({ min: 0, max: HISTORY_DAYS - 1 }), { maxLength: 40 }),
    eventDays: fc.array(fc.integer({ min: 0, max: HISTORY_DAYS - 1 }), { maxLength: 60 }),
    periods: fc.array(periodArb(0, HISTORY_DAYS - 1), { maxLength: 8 }),
    holidays: fc.array(fc.integer({ min: 0, max: HISTORY_DAYS - 1 }), { maxLength: 6 }),
    // Every code; the ten-day ones, whose searches run short most often, twice as often.
    algorithm: fc.oneof(
      fc.constantFrom(...(Object.values(BaselineAlgorithm).filter((v) => typeof v === 'number') as BaselineAlgorithm[])),
      fc.constantFrom(BaselineAlgorithm.Average10Of10, BaselineAlgorithm.Average10Of10Additive, BaselineAlgorithm.Average10Of10Multiplicative, BaselineAlgorithm.Caiso10In10),
    ),
    target: fc.integer({ min: 50, max: 105 }),
    before: fc.integer({ min: 0, max: 6 }),
    after: fc.integer({ min: 0, max: 6 }),
    partial: fc.record({ hour: fc.integer({ min: 0, max: 23 }), hours: fc.integer({ min: 1, max: 12 }) }),
    laterOffsets: fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 4 }),
    laterPeriod: fc.record({ offset: fc.integer({ min: 1, max: 12 }), hour: fc.integer({ min: 0, max: 23 }), hours: fc.integer({ min: 1, max: 8 }) }),
  })
  .map(({ laterOffsets, laterPeriod, ...s }) => ({
    ...s,
    later: {
      days: laterOffsets.map((o) => s.target + o),
      // Starting on a later day: it may not touch the target day.
      period: { day: s.target + laterPeriod.offset, hour: laterPeriod.hour, hours: laterPeriod.hours },
    },
  }));

const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);

describe('a baseline day', () => {
  it('depends neither on the range it is asked in nor on later event days', () => {
    let withValues = 0;
    fc.assert(
      fc.property(scenario, (s) => {
        const day = s.firstDay + s.target;
        const alone = daysGrid(s, day, day);
        const values = engine(s, alone, false);
        if (values.some((v) => !Number.isNaN(v))) withValues++;
        const index = new Map(Array.from(alone, (t, i) => [t, i]));
        const sliceOf = (targets: Float64Array, got: number[]) => got.filter((_, i) => index.has(targets[i]!));
        const wide = daysGrid(s, day - s.before, day + s.after);
        expect(sliceOf(wide, engine(s, wide, false)), 'asked in a longer range').toEqual(values);
        const part = daysGrid(s, day, day, s.partial.hour, s.partial.hours);
        expect(engine(s, part, false), 'asked for some hours').toEqual(Array.from(part, (t) => values[index.get(t)!]));
        expect(engine(s, alone, true), 'later days became event days').toEqual(values);
        expect(sliceOf(wide, engine(s, wide, true)), 'later event days, longer range').toEqual(values);
      }),
      { numRuns: 150, ...(seed === undefined ? {} : { seed }) },
    );
    // Not a property of empty days: most runs have values to compare.
    expect(withValues).toBeGreaterThan(75);
  });
});
