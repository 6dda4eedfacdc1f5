// Each baseline against a hand-made history whose expected values are worked out by hand in
// the comments (and in docs/virtual-registers.md, which uses the same numbers).
import { describe, expect, it } from 'vitest';
import {
  BASELINE_ALGORITHMS,
  BaselineAlgorithm,
  baselineLookbackDays,
  computeBaseline,
  isBaselineAlgorithm,
  type BaselineInput,
} from '../../../src/shared/virtual/baselines.ts';
import { DaySet, baselineHistoryDays, sameTypeSpanDays } from '../../../src/shared/virtual/baselineAlgorithms.ts';
import { dayIndexOfKey } from '../../../src/shared/virtual/calendar.ts';

const HOUR = 3_600_000;
const OSLO = 'Europe/Oslo';
const A = BaselineAlgorithm;

/** A series from (local day, local hour, minute, UTC offset in hours, value) rows. */
function series(rows: [year: number, month: number, day: number, hour: number, minute: number, offsetHours: number, value: number][]) {
  const points = rows.map(([y, mo, d, h, mi, off, v]) => [Date.UTC(y, mo - 1, d, h, mi) - off * HOUR, v] as const).sort((a, b) => a[0] - b[0]);
  return { timestamps: Float64Array.from(points, (p) => p[0]), values: Float64Array.from(points, (p) => p[1]) };
}

// History A — Europe/Oslo, January 2024 (CET, UTC+1 throughout; 2024-01-01 is a Monday).
// Every local day d has a level L[d]; the reading at local hh:mm is L[d] + hh. Day 11 has no
// reading at 18:00; day 17 had an event (excluded in most tests); day 22 (Monday) is the
// target, its level set per test.
//   Mon  1: 999   Tue  2: 999   Wed  3: 999   Thu  4: 30   Fri  5: 34   Sat  6: 20   Sun  7: 16
//   Mon  8: 16    Tue  9: 6     Wed 10: 20    Thu 11: 500  Fri 12: 50   Sat 13: 4    Sun 14: 12
//   Mon 15: 30    Tue 16: 24    Wed 17: 1000  Thu 18: 40   Fri 19: 10   Sat 20: 8    Sun 21: 6
const LEVEL: Record<number, number> = { 1: 999, 2: 999, 3: 999, 4: 30, 5: 34, 6: 20, 7: 16, 8: 16, 9: 6, 10: 20, 11: 500, 12: 50, 13: 4, 14: 12, 15: 30, 16: 24, 17: 1000, 18: 40, 19: 10, 20: 8, 21: 6 };

function historyA(level22: number, minutesStep = 60, missing: [day: number, hour: number][] = []) {
  const rows: Parameters<typeof series>[0] = [];
  for (let d = 1; d <= 22; d++) {
    for (let h = 0; h < 24; h++) {
      for (let m = 0; m < 60; m += minutesStep) {
        const gone = (d === 11 && h === 18) || missing.some(([md, mh]) => md === d && mh === h);
        rows.push([2024, 1, d, h, m, 1, gone ? NaN : (d === 22 ? level22 : LEVEL[d]!) + h]);
      }
    }
  }
  return series(rows);
}

/** Targets on 2024-01-<day> at local (CET) hours, every `minutesStep` minutes. */
function targetsA(day: number, hours: number[], minutesStep = 60): Float64Array {
  const out: number[] = [];
  for (const h of hours) for (let m = 0; m < 60; m += minutesStep) out.push(Date.UTC(2024, 0, day, h, m) - HOUR);
  return Float64Array.from(out);
}

/** An event on 2024-01-<day> from local (CET) hour `from` to hour `to`. */
const eventA = (day: number, from: number, to: number) => ({ start: Date.UTC(2024, 0, day, from) - HOUR, end: Date.UTC(2024, 0, day, to) - HOUR });

/** Monday 22 has an event from 17:00 to 19:00: its intervals are compared and adjusted from 17:00. */
function inputA(targets: Float64Array, level22 = 0, more: Partial<BaselineInput> = {}): BaselineInput {
  return { targetTimestamps: targets, resolutionSeconds: 3600, timeZone: OSLO, history: historyA(level22), excludedDays: ['2024-01-17'], eventPeriods: [eventA(22, 17, 19)], ...more };
}

const run = (algorithm: BaselineAlgorithm, input: BaselineInput): number[] => Array.from(computeBaseline(algorithm, input));
const close = (actual: number[], expected: number[]): void => {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((v, i) => (Number.isNaN(expected[i]!) ? expect(v).toBeNaN() : expect(v).toBeCloseTo(expected[i]!, 9)));
};

const MON_22_EVENING = targetsA(22, [17, 18]);

describe('code table', () => {
  it('numbers the algorithms from 1 and knows them all', () => {
    expect(Object.fromEntries(Object.entries(BASELINE_ALGORITHMS).map(([code, s]) => [code, s.name]))).toEqual({
      1: 'Zero',
      2: 'PreviousDay',
      3: 'High4Of5',
      4: 'High4Of5Additive',
      5: 'High4Of5Multiplicative',
      6: 'Average10Of10',
      7: 'Average10Of10Additive',
      8: 'Average10Of10Multiplicative',
      9: 'PjmCustomerBaseline',
      10: 'Caiso10In10',
      11: 'Caiso10In10Unadjusted',
    });
    expect([0, 1, 8, 11, 12, '3', null].map(isBaselineAlgorithm)).toEqual([false, true, true, true, false, false, false]);
  });
});

describe('Zero', () => {
  it('is 0 for every target, with or without history', () => {
    expect(run(A.Zero, inputA(MON_22_EVENING))).toEqual([0, 0]);
    expect(run(A.Zero, { targetTimestamps: MON_22_EVENING, resolutionSeconds: 3600, timeZone: OSLO, history: { timestamps: new Float64Array(0), values: new Float64Array(0) } })).toEqual([0, 0]);
  });
});

describe('PreviousDay', () => {
  it('takes the same local interval of the previous calendar day, ignoring weekday type and exclusions', () => {
    // Monday 22 17:00 ← Sunday 21 17:00 = 6 + 17; 18:00 ← 6 + 18.
    expect(run(A.PreviousDay, inputA(MON_22_EVENING))).toEqual([23, 24]);
    // Thursday 18 ← Wednesday 17 (excluded for X-of-Y, not here): 1000 + 17.
    expect(run(A.PreviousDay, inputA(targetsA(18, [17])))).toEqual([1017]);
  });

  it('is NaN where the previous day has no reading', () => {
    // Friday 12 18:00 ← Thursday 11 18:00, which is missing.
    expect(run(A.PreviousDay, inputA(targetsA(12, [17, 18])))).toEqual([517, NaN]);
  });

  it('maps by local clock over the spring change: 23-hour day, and the missing 02:00', () => {
    // Reading = 100 × day + local hour; Oslo is +1 until 2024-03-31 02:00 CET, then +2 (02:00 does not exist).
    const rows: Parameters<typeof series>[0] = [];
    for (const d of [30, 31])
      for (let h = 0; h < 24; h++) if (!(d === 31 && h === 2)) rows.push([2024, 3, d, h, 0, d === 31 && h >= 3 ? 2 : 1, 100 * d + h]);
    for (let h = 0; h < 24; h++) rows.push([2024, 4, 1, h, 0, 2, 100 + h]);
    const history = series(rows);
    const targets = Float64Array.from(
      ['2024-03-30T23:00Z', '2024-03-31T00:00Z', '2024-03-31T01:00Z', '2024-03-31T10:00Z', '2024-03-31T23:00Z', '2024-04-01T00:00Z', '2024-04-01T01:00Z'],
      (s) => Date.parse(s),
    );
    // 31st 00:00 CET ← 30th 00:00; 01:00 ← 01:00; 03:00 CEST ← 30th 03:00 (−24 h would give 02:00);
    // 12:00 ← 12:00; 1 April 01:00 ← 31st 01:00; 02:00 ← 31st 02:00, which does not exist: NaN; 03:00 ← 03:00.
    expect(run(A.PreviousDay, { targetTimestamps: targets, resolutionSeconds: 3600, timeZone: OSLO, history })).toEqual([3000, 3001, 3003, 3012, 3101, NaN, 3103]);
  });

  it('maps by local clock over the autumn change: both 02:00 hours, and the first 02:00 as a source', () => {
    // Reading = 100 × day + local hour; the second 02:00 of 27 October (CET) reads 2752 to tell it apart.
    const rows: Parameters<typeof series>[0] = [];
    for (let h = 0; h < 24; h++) rows.push([2024, 10, 26, h, 0, 2, 2600 + h]);
    for (let h = 0; h < 24; h++) rows.push([2024, 10, 27, h, 0, h <= 2 ? 2 : 1, 2700 + h]);
    rows.push([2024, 10, 27, 2, 0, 1, 2752]);
    for (let h = 0; h < 24; h++) rows.push([2024, 10, 28, h, 0, 1, 2800 + h]);
    const history = series(rows);
    const targets = Float64Array.from(['2024-10-27T00:00Z', '2024-10-27T01:00Z', '2024-10-27T02:00Z', '2024-10-28T01:00Z', '2024-10-28T11:00Z'], (s) => Date.parse(s));
    // 27th 02:00 CEST and 02:00 CET ← 26th 02:00; 03:00 CET ← 03:00 (−24 h would give 04:00);
    // 28th 02:00 ← the first 02:00 of the 27th (2702, not 2752); 12:00 ← 12:00.
    expect(run(A.PreviousDay, { targetTimestamps: targets, resolutionSeconds: 3600, timeZone: OSLO, history })).toEqual([2602, 2602, 2603, 2702, 2712]);
  });
});

describe('High4Of5', () => {
  it('averages the 4 highest of the 5 most recent similar weekdays', () => {
    // Weekdays before Monday 22: 19 (10), 18 (40), [17 excluded], 16 (24), 15 (30), 12 (50).
    // Highest 4 levels: 50, 40, 30, 24 → mean 36 → 17:00 = 36 + 17 = 53, 18:00 = 54.
    expect(run(A.High4Of5, inputA(MON_22_EVENING))).toEqual([53, 54]);
  });

  it('uses an event day when it is not excluded', () => {
    // 19, 18, 17 (1000), 16, 15 → highest 4: 1000, 40, 30, 24 → mean 273.5 → 290.5, 291.5.
    expect(run(A.High4Of5, inputA(MON_22_EVENING, 0, { excludedDays: [] }))).toEqual([290.5, 291.5]);
  });

  it('compares weekend days with weekend days only', () => {
    // Weekend days before Sunday 21: 20 (8), 14 (12), 13 (4), 7 (16), 6 (20) → 20, 16, 12, 8 → mean 14.
    expect(run(A.High4Of5, inputA(targetsA(21, [17, 18])))).toEqual([31, 32]);
  });

  it('averages all usable days when there are at least 4 but fewer than 5', () => {
    // Before Saturday 20 the history holds 4 weekend days: 14 (12), 13 (4), 7 (16), 6 (20) → mean 13.
    expect(run(A.High4Of5, inputA(targetsA(20, [17, 18])))).toEqual([30, 31]);
  });

  it('is NaN with fewer than 4 usable days, never 0', () => {
    // Before Sunday 14: 13, 7, 6 — three weekend days.
    expect(run(A.High4Of5, inputA(targetsA(14, [17, 18])))).toEqual([NaN, NaN]);
  });

  it('skips a day without a reading for every target interval', () => {
    // Thursday 18 misses 17:00 and Thursday 11 misses 18:00, so the 5 days are 19, 16, 15, 12, 10.
    // Levels 10, 24, 30, 50, 20 → highest 4: 50, 30, 24, 20 → mean 31 → 48, 49.
    const history = historyA(0, 60, [[18, 17]]);
    expect(run(A.High4Of5, inputA(MON_22_EVENING, 0, { history }))).toEqual([48, 49]);
  });

  it('computes each target day on its own', () => {
    const targets = Float64Array.from([...targetsA(21, [17, 18]), ...MON_22_EVENING]);
    expect(run(A.High4Of5, inputA(targets))).toEqual([31, 32, 53, 54]);
  });

  it('looks back no further than maxLookbackDays', () => {
    // Within 7 days of Monday 22: 19, 18, 16, 15 (17 excluded) → 4 days → mean (10 + 40 + 24 + 30) / 4 = 26.
    expect(run(A.High4Of5, inputA(MON_22_EVENING, 0, { options: { maxLookbackDays: 7 } }))).toEqual([43, 44]);
    expect(run(A.High4Of5, inputA(MON_22_EVENING, 0, { options: { maxLookbackDays: 6 } }))).toEqual([NaN, NaN]);
  });

  it('breaks a tie of totals in favour of the more recent day', () => {
    // UTC, Monday 2024-01-08, targets 12:00 and 13:00. Earlier weekdays (12:00, 13:00):
    // Fri 5 (10, 0), Thu 4 (10, 10), Wed 3 (0, 10), Tue 2 (5, 5), Mon 1 (20, 10).
    // Totals 10, 20, 10, 10, 30: the highest 4 are 1, 4, then 5 and 3 (more recent than 2).
    // 12:00 = (20 + 10 + 10 + 0) / 4 = 10; 13:00 = (10 + 10 + 0 + 10) / 4 = 7.5.
    const day: Record<number, [number, number]> = { 1: [20, 10], 2: [5, 5], 3: [0, 10], 4: [10, 10], 5: [10, 0] };
    const history = series(Object.entries(day).flatMap(([d, [a, b]]) => [[2024, 1, +d, 12, 0, 0, a], [2024, 1, +d, 13, 0, 0, b]] as Parameters<typeof series>[0]));
    const targets = Float64Array.from([Date.UTC(2024, 0, 8, 12), Date.UTC(2024, 0, 8, 13)]);
    const eventPeriods = [{ start: targets[0]!, end: targets[1]! + HOUR }];
    expect(run(A.High4Of5, { targetTimestamps: targets, resolutionSeconds: 3600, timeZone: 'UTC', history, eventPeriods })).toEqual([10, 7.5]);
  });

  it('treats a reference day without the target clock time (spring gap) as missing', () => {
    // Oslo weekends 16–31 March 2024; reading = a level per day at every hour: 16: 1, 17: 2, 23: 3, 24: 4,
    // 30: 5, 31: 100 (which has no 02:00). Target Saturday 6 April.
    const levels: Record<number, number> = { 16: 1, 17: 2, 23: 3, 24: 4, 30: 5, 31: 100 };
    const rows: Parameters<typeof series>[0] = [];
    for (const [d, level] of Object.entries(levels))
      for (let h = 0; h < 24; h++) if (!(+d === 31 && h === 2)) rows.push([2024, 3, +d, h, 0, +d === 31 && h >= 3 ? 2 : 1, level]);
    const history = series(rows);
    const at = (h: number) => Date.UTC(2024, 3, 6, h) - 2 * HOUR;
    const input = (hours: number[], eventPeriods: BaselineInput['eventPeriods'] = []): BaselineInput => ({
      targetTimestamps: Float64Array.from(hours, at),
      resolutionSeconds: 3600,
      timeZone: OSLO,
      history,
      eventPeriods,
    });
    // The whole day is compared: the 31st has no 02:00, so 30, 24, 23, 17, 16 → 5, 4, 3, 2 → 3.5,
    // whichever hours are asked for.
    expect(run(A.High4Of5, input([2, 12]))).toEqual([3.5, 3.5]);
    expect(run(A.High4Of5, input([12]))).toEqual([3.5]);
    // An event from 12:00 to 13:00: only 12:00 is compared, so 31, 30, 24, 23, 17 → 100, 5, 4, 3 → 28;
    // the 31st has no 02:00, so 02:00 has no value.
    expect(run(A.High4Of5, input([2, 12], [{ start: at(12), end: at(13) }]))).toEqual([NaN, 28]);
  });
});

describe('Average10Of10', () => {
  it('averages the 10 most recent usable similar days', () => {
    // Weekdays before Monday 22: 19, 18, [17 excluded], 16, 15, 12, [11 misses 18:00], 10, 9, 8, 5, 4.
    // Levels 10 + 40 + 24 + 30 + 50 + 20 + 6 + 16 + 34 + 30 = 260 → mean 26 → 43, 44 (days 1–3, level 999, unused).
    expect(run(A.Average10Of10, inputA(MON_22_EVENING))).toEqual([43, 44]);
  });

  it('is NaN when fewer than 10 usable days are found', () => {
    // Only 6 weekend days lie before Sunday 21.
    expect(run(A.Average10Of10, inputA(targetsA(21, [17, 18])))).toEqual([NaN, NaN]);
  });
});

describe('same-day adjustment', () => {
  // Window for targets from 17:00: 3 hours ending 1 hour before → 13:00, 14:00, 15:00 local.
  // High4Of5 days (12, 18, 15, 16; mean level 36): window baseline mean = 36 + 14 = 50.
  // Actual window mean on day 22 = level22 + 14.
  it('additive, cap not engaged: shifts by the window difference', () => {
    // level22 41 → actual 55, shift +5 (cap 0.2 × 50 = 10) → 53 + 5, 54 + 5.
    expect(run(A.High4Of5Additive, inputA(MON_22_EVENING, 41))).toEqual([58, 59]);
  });

  it('additive, cap engaged upwards and downwards', () => {
    // level22 86 → actual 100, shift +50 capped to +10 → 63, 64.
    close(run(A.High4Of5Additive, inputA(MON_22_EVENING, 86)), [63, 64]);
    // level22 1 → actual 15, shift −35 capped to −10 → 43, 44.
    close(run(A.High4Of5Additive, inputA(MON_22_EVENING, 1)), [43, 44]);
  });

  it('multiplicative, cap not engaged: scales by the window ratio', () => {
    // 55 / 50 = 1.1 → 53 × 1.1 = 58.3, 54 × 1.1 = 59.4.
    close(run(A.High4Of5Multiplicative, inputA(MON_22_EVENING, 41)), [58.3, 59.4]);
  });

  it('multiplicative, ratio clamped to [0.8, 1.2]', () => {
    // 100 / 50 = 2 → 1.2: 63.6, 64.8.   15 / 50 = 0.3 → 0.8: 42.4, 43.2.
    close(run(A.High4Of5Multiplicative, inputA(MON_22_EVENING, 86)), [63.6, 64.8]);
    close(run(A.High4Of5Multiplicative, inputA(MON_22_EVENING, 1)), [42.4, 43.2]);
  });

  it('adjusts Average10Of10 the same way', () => {
    // Mean level 26 → baseline 43, 44; window baseline mean 40, cap ±8, ratio in [0.8, 1.2].
    // level22 30 → actual 44: +4 → 47, 48; ratio 1.1 → 47.3, 48.4.
    close(run(A.Average10Of10Additive, inputA(MON_22_EVENING, 30)), [47, 48]);
    close(run(A.Average10Of10Multiplicative, inputA(MON_22_EVENING, 30)), [47.3, 48.4]);
    // level22 41 → actual 55: +15 capped to +8 → 51, 52; ratio 1.375 capped to 1.2 → 51.6, 52.8.
    close(run(A.Average10Of10Additive, inputA(MON_22_EVENING, 41)), [51, 52]);
    close(run(A.Average10Of10Multiplicative, inputA(MON_22_EVENING, 41)), [51.6, 52.8]);
  });

  it('takes the cap and the window from the options', () => {
    // No cap: level22 86 → +50 → 103, 104; ratio 2 → 106, 108.
    const uncapped = { options: { adjustmentCap: Infinity } };
    expect(run(A.High4Of5Additive, inputA(MON_22_EVENING, 86, uncapped))).toEqual([103, 104]);
    expect(run(A.High4Of5Multiplicative, inputA(MON_22_EVENING, 86, uncapped))).toEqual([106, 108]);
    // Cap 0.05: level22 41 → +5 capped to 0.05 × 50 = 2.5 → 55.5, 56.5.
    close(run(A.High4Of5Additive, inputA(MON_22_EVENING, 41, { options: { adjustmentCap: 0.05 } })), [55.5, 56.5]);
  });

  it('is NaN when a window reading is missing, and fine when the window avoids it', () => {
    // Day 22 misses 14:00: the default window (13–16) is incomplete.
    const history = historyA(41, 60, [[22, 14]]);
    expect(run(A.High4Of5Additive, inputA(MON_22_EVENING, 41, { history }))).toEqual([NaN, NaN]);
    expect(run(A.High4Of5Multiplicative, inputA(MON_22_EVENING, 41, { history }))).toEqual([NaN, NaN]);
    expect(run(A.High4Of5, inputA(MON_22_EVENING, 41, { history }))).toEqual([53, 54]);
    // A 1-hour window right before 17:00 (16:00): actual 57, baseline 52 → +5.
    expect(run(A.High4Of5Additive, inputA(MON_22_EVENING, 41, { history, options: { adjustmentWindowHours: 1, adjustmentGapHours: 0 } }))).toEqual([58, 59]);
  });

  it('is NaN when the window lies in the future (no readings yet)', () => {
    const history = historyA(41);
    const cut = history.timestamps.findIndex((t) => t >= Date.UTC(2024, 0, 22, 12) - HOUR);
    const past = { timestamps: history.timestamps.slice(0, cut), values: history.values.slice(0, cut) };
    expect(run(A.High4Of5Multiplicative, inputA(MON_22_EVENING, 41, { history: past }))).toEqual([NaN, NaN]);
  });

  it('maps a window before midnight to the day before each chosen day', () => {
    // Target Monday 22 01:00; window 21:00–00:00 on Sunday 21: actual mean 6 + 22 = 28.
    // Chosen days 12, 18, 15, 16 → windows on 11, 17, 14, 15: levels (500 + 1000 + 12 + 30) / 4 = 385.5 → 407.5.
    // Baseline 01:00 = 36 + 1 = 37. Multiplicative: 28 / 407.5 < 0.8 → 37 × 0.8 = 29.6.
    // Additive: 28 − 407.5 = −379.5, capped to −0.2 × 407.5 = −81.5 → 37 − 81.5 = −44.5.
    const targets = targetsA(22, [1]);
    const eventPeriods = [eventA(22, 1, 2)];
    close(run(A.High4Of5Multiplicative, inputA(targets, 41, { eventPeriods })), [29.6]);
    close(run(A.High4Of5Additive, inputA(targets, 41, { eventPeriods })), [-44.5]);
  });

  it('works the same with 15-minute data (12 window intervals)', () => {
    const input = inputA(targetsA(22, [17, 18], 15), 41, { resolutionSeconds: 900, history: historyA(41, 15) });
    close(run(A.High4Of5Multiplicative, input), [58.3, 58.3, 58.3, 58.3, 59.4, 59.4, 59.4, 59.4]);
    close(run(A.High4Of5Additive, input), [58, 58, 58, 58, 59, 59, 59, 59]);
  });

  it('leaves the baseline as is when the window baseline is 0 (multiplicative)', () => {
    // UTC; weekdays 1–5 January read 0 before 12:00 and 10 from 12:00; day 8 reads 7 in the window.
    const rows: Parameters<typeof series>[0] = [];
    for (let d = 1; d <= 8; d++) for (let h = 0; h < 24; h++) rows.push([2024, 1, d, h, 0, 0, d === 8 ? 7 : h < 12 ? 0 : 10]);
    const input: BaselineInput = { targetTimestamps: Float64Array.from([Date.UTC(2024, 0, 8, 12)]), resolutionSeconds: 3600, timeZone: 'UTC', history: series(rows) };
    expect(run(A.High4Of5Multiplicative, input)).toEqual([10]);
    // Additive: shift 7 capped to 0.2 × 0 = 0.
    expect(run(A.High4Of5Additive, input)).toEqual([10]);
  });
});

describe('baselineLookbackDays', () => {
  it('counts the worst-case calendar span of n same-type days', () => {
    // From a Saturday: the 1st previous weekend day is Sunday −6, the 2nd Saturday −7, the 5th Sunday −20, the 10th −35.
    expect([1, 2, 5, 10, 15, 20].map(sameTypeSpanDays)).toEqual([6, 7, 20, 35, 55, 70]);
  });

  it('asks for 45 days unless exclusions need more, +1 for the adjustment window', () => {
    expect(baselineLookbackDays(A.Zero)).toBe(0);
    expect(baselineLookbackDays(A.PreviousDay)).toBe(1);
    expect(baselineLookbackDays(A.High4Of5)).toBe(45);
    expect(baselineLookbackDays(A.High4Of5Additive)).toBe(46);
    expect(baselineLookbackDays(A.Average10Of10)).toBe(45);
    expect(baselineLookbackDays(A.Average10Of10Multiplicative)).toBe(46);
    expect(baselineLookbackDays(A.High4Of5, 10)).toBe(55);
    expect(baselineLookbackDays(A.Average10Of10, 10)).toBe(70);
    expect(baselineLookbackDays(A.Average10Of10Additive, 10, { adjustmentWindowHours: 24, adjustmentGapHours: 1 })).toBe(72);
    expect(baselineLookbackDays(A.High4Of5, 0, { maxLookbackDays: 20 })).toBe(20);
  });

  it('counts only the event days before each target day, and never widens the PJM and CAISO windows', () => {
    const day = dayIndexOfKey('2024-04-06');
    // 10 event days right after the target widen nothing; 10 in the 45 days before it give 70.
    const after = new DaySet(Array.from({ length: 10 }, (_, i) => day + 1 + i));
    const before = new DaySet(Array.from({ length: 10 }, (_, i) => day - 1 - i));
    expect(baselineHistoryDays(A.Average10Of10, day, day, after)).toBe(45);
    expect(baselineHistoryDays(A.Average10Of10, day, day, before)).toBe(70);
    // Target days 6–16 April with those event days: the 16th has 9 of them before it, so its window
    // is S(19) = 69 days, reaching 59 days before the 6th.
    expect(baselineHistoryDays(A.Average10Of10, day, day + 10, after)).toBe(59);
    expect(baselineHistoryDays(A.Caiso10In10Unadjusted, day, day + 10, before)).toBe(45);
    // The adjusted ones one more, for a chosen day's window starting the day before it.
    expect(baselineHistoryDays(A.PjmCustomerBaseline, day, day + 10, before)).toBe(46);
    expect(baselineHistoryDays(A.Caiso10In10, day, day, before)).toBe(46);
  });
});

describe('computeBaseline refuses bad input with codes', () => {
  const good = inputA(MON_22_EVENING);
  it.each([
    ['unknown code 0', () => computeBaseline(0 as BaselineAlgorithm, good), 'unknown_algorithm'],
    ['unknown code 99', () => computeBaseline(99 as BaselineAlgorithm, good), 'unknown_algorithm'],
    ['bad zone', () => computeBaseline(A.High4Of5, { ...good, timeZone: 'CET+1' }), 'invalid_time_zone'],
    ['descending targets', () => computeBaseline(A.High4Of5, { ...good, targetTimestamps: Float64Array.from([2, 1]) }), 'invalid_input'],
    ['history lengths differ', () => computeBaseline(A.High4Of5, { ...good, history: { timestamps: Float64Array.from([1, 2]), values: Float64Array.from([1]) } }), 'invalid_input'],
    ['no history', () => computeBaseline(A.PreviousDay, { ...good, history: undefined as never }), 'invalid_input'],
    ['resolution 0', () => computeBaseline(A.High4Of5, { ...good, resolutionSeconds: 0 }), 'invalid_input'],
    ['bad excluded day', () => computeBaseline(A.High4Of5, { ...good, excludedDays: ['2024-13-01'] }), 'invalid_day'],
    ['negative cap', () => computeBaseline(A.High4Of5Additive, { ...good, options: { adjustmentCap: -0.1 } }), 'invalid_input'],
    ['window not whole intervals', () => computeBaseline(A.High4Of5Additive, { ...good, resolutionSeconds: 7200 }), 'invalid_input'],
    ['lookback 0', () => computeBaseline(A.High4Of5, { ...good, options: { maxLookbackDays: 0 } }), 'invalid_input'],
  ])('%s', (_name, call, code) => {
    expect(call).toThrow(expect.objectContaining({ code }));
  });
});
