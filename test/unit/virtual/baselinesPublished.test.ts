// The published methods (codes 9–11) on worked examples built by hand from their rules; the same
// numbers are in docs/virtual-registers.md, "PJM Customer Baseline" and "CAISO 10-in-10".
//
// Every day reads 50 from 00:00 to 13:00 (its morning, MORNING below where it differs) and its
// level from 13:00 to 24:00 (LEVEL below; weekdays 100 and weekend days 30 unless listed).
// Events are 14:00–17:00 local, so a day's event-period mean is its level, and the adjustment
// window (10:00–13:00: the 3 hours ending 1 hour before the start) reads the mornings.
import { describe, expect, it } from 'vitest';
import { BaselineAlgorithm, computeBaseline, type BaselineInput } from '../../../src/shared/virtual/baselines.ts';
import { instantOnDay, localDay, weekdayType } from '../../../src/shared/virtual/time.ts';
import { addLocalDays } from '../../../src/shared/virtual/calendar.ts';

const A = BaselineAlgorithm;
const HOUR = 3_600_000;

const LEVEL: Record<string, number> = {
  '2024-06-16': 28, // Sun
  '2024-06-22': 36, // Sat
  '2024-06-23': 34, // Sun
  '2024-06-29': 38, // Sat
  '2024-06-30': 30, // Sun
  '2024-07-01': 100,
  '2024-07-02': 115,
  '2024-07-03': 85,
  '2024-07-04': 33, // Thu, a holiday
  '2024-07-05': 80,
  '2024-07-06': 5, // Sat, shut down
  '2024-07-07': 34, // Sun
  '2024-07-08': 95,
  '2024-07-09': 105,
  '2024-07-10': 500, // Wed, an earlier event day
  '2024-07-11': 90,
  '2024-07-12': 110,
  '2024-07-13': 40, // Sat
  '2024-07-15': 20, // Mon, low usage
  '2024-07-16': 100,
  '2024-07-17': 60, // Wed, the event day
  '2024-07-20': 20, // Sat, an event day
};
const MORNING: Record<string, number> = { '2024-07-04': 51, '2024-07-17': 80, '2024-07-20': 56 };
const HOLIDAYS = ['2024-05-27', '2024-07-04'];

/** Hourly readings in `zone` from 1 May to 30 September 2024, by the levels above. */
function history(zone: string, level: (day: string) => number | undefined = (d) => LEVEL[d], morning: (day: string) => number | undefined = (d) => MORNING[d]) {
  const timestamps: number[] = [];
  const values: number[] = [];
  for (let key = '2024-05-01'; key <= '2024-09-30'; key = addLocalDays(key, 1)) {
    const day = localDay(key, zone);
    const afternoon = level(key) ?? (weekdayType(key) === 'weekend' ? 30 : 100);
    const before = morning(key) ?? 50;
    for (let t = day.start, hour = 0; t < day.end; t += HOUR, hour++) {
      timestamps.push(t);
      values.push(hour < 13 ? before : afternoon);
    }
  }
  return { timestamps: Float64Array.from(timestamps), values: Float64Array.from(values) };
}

/** The event of `key` from 14:00 to 17:00 in `zone`, and its three hours as targets. */
const event = (key: string, zone: string) => ({ start: instantOnDay(localDay(key, zone), 14 * 3600, 'forward'), end: instantOnDay(localDay(key, zone), 17 * 3600, 'forward') });
const eventHours = (key: string, zone: string) => Float64Array.from([14, 15, 16], (h) => instantOnDay(localDay(key, zone), h * 3600, 'forward'));

function input(zone: string, target: string, more: Partial<BaselineInput> = {}): BaselineInput {
  return {
    targetTimestamps: eventHours(target, zone),
    resolutionSeconds: 3600,
    timeZone: zone,
    history: history(zone),
    excludedDays: ['2024-07-10'],
    eventPeriods: [event(target, zone)],
    holidays: HOLIDAYS,
    ...more,
  };
}

const run = (algorithm: BaselineAlgorithm, i: BaselineInput): number[] => Array.from(computeBaseline(algorithm, i), (v) => Math.round(v * 1e9) / 1e9);

describe('PJM Customer Baseline (code 9), America/New_York', () => {
  const NY = 'America/New_York';

  it('weekday: High 4 of 5 after leaving out a low-usage day, then the symmetric additive adjustment, uncapped', () => {
    // Weekdays before Wed 17 July, not excluded (10 July is an event day), not holidays:
    // 16 (100), 15 (20), 12 (110), 11 (90), 9 (105): mean 85, 25 % of it 21.25; 15 July (20) is a
    // low-usage day, replaced by 8 July (95). Highest 4 of 16, 12, 11, 9, 8: 110, 105, 100, 95 → 102.5.
    // Adjustment window 10:00–13:00: the 17th reads 80, the chosen days 50 → +30 (60 %, no cap) → 132.5.
    expect(run(A.PjmCustomerBaseline, input(NY, '2024-07-17'))).toEqual([132.5, 132.5, 132.5]);
    // The same day by High4Of5Additive: 16, 15, 12, 11, 9 → 110, 105, 100, 90 → 101.25; the shift
    // +30 is capped to 20 % of 50 → 111.25.
    expect(run(A.High4Of5Additive, input(NY, '2024-07-17'))).toEqual([111.25, 111.25, 111.25]);
  });

  it('Saturday: High 2 of 3 Saturdays, the low-usage rule, the adjustment', () => {
    // Saturdays before the 20th: 13 (40), 6 (5), 29 June (38): mean 27.67, 25 % 6.92; 6 July is low,
    // replaced by 22 June (36). Highest 2 of 40, 38, 36 → 39; the 20th reads 56 in the window → +6 → 45.
    expect(run(A.PjmCustomerBaseline, input(NY, '2024-07-20'))).toEqual([45, 45, 45]);
  });

  it('Sunday or holiday: High 2 of 3 Sundays and holidays', () => {
    // Thursday 4 July is a holiday: Sundays/holidays before it: 30 June (30), 23 (34), 16 (28) → 34, 30 → 32;
    // the 4th reads 51 in the window → +1 → 33.
    expect(run(A.PjmCustomerBaseline, input(NY, '2024-07-04'))).toEqual([33, 33, 33]);
    // Without the holiday list the 4th is a weekday: 3 (85), 2 (115), 1 (100), 28 and 27 June (100) →
    // 115, 100, 100, 100 → 103.75 → +1 → 104.75.
    expect(run(A.PjmCustomerBaseline, input(NY, '2024-07-04', { holidays: [] }))).toEqual([104.75, 104.75, 104.75]);
  });

  it('completes the basis with the event days of highest usage when the 45 days hold fewer than 5', () => {
    // Target Monday 16 September; the 45 days before are 2 August … 15 September. Every weekday in
    // them is an event day except 7 August (80), 28 August (90) and 11 September (100); Labor Day
    // (2 September) is a holiday. The event days read 50, except 15 August (130) and 12 September (120).
    const free = new Set(['2024-08-07', '2024-08-28', '2024-09-11']);
    const levels: Record<string, number> = { '2024-08-07': 80, '2024-08-28': 90, '2024-09-11': 100, '2024-08-15': 130, '2024-09-12': 120, '2024-09-16': 110 };
    const excludedDays: string[] = [];
    for (let key = '2024-08-01'; key <= '2024-09-13'; key = addLocalDays(key, 1)) {
      if (weekdayType(key) === 'weekday' && !free.has(key) && key !== '2024-09-02') excludedDays.push(key);
    }
    const level = (key: string) => levels[key] ?? (excludedDays.includes(key) ? 50 : undefined);
    // Basis: 11 Sep, 28 Aug, 7 Aug, then the event days 15 Aug (130) and 12 Sep (120); highest 4:
    // 130, 120, 100, 90 → 110; the 16th reads 50 in the window, as the chosen days → no shift.
    const i = input(NY, '2024-09-16', { history: history(NY, level), excludedDays, holidays: ['2024-09-02'] });
    expect(run(A.PjmCustomerBaseline, i)).toEqual([110, 110, 110]);
  });

  it('has no value with fewer than 2 Saturdays in the 45 days, never 0', () => {
    // History from 1 May: Saturday 11 May has only 4 May before it.
    expect(run(A.PjmCustomerBaseline, input(NY, '2024-05-11'))).toEqual([NaN, NaN, NaN]);
  });
});

describe('CAISO 10-in-10 (codes 10, 11), America/Los_Angeles', () => {
  const LA = 'America/Los_Angeles';

  it('weekday: the 10 most recent non-event, non-holiday weekdays, load point adjustment within ±20 %', () => {
    // Before Wed 17 July: 16 (100), 15 (20), 12 (110), 11 (90), 9 (105), 8 (95), 5 (80), 3 (85),
    // 2 (115), 1 (100) — 10 July is an event day, 4 July a holiday; no low-usage rule → 900 / 10 = 90.
    expect(run(A.Caiso10In10Unadjusted, input(LA, '2024-07-17'))).toEqual([90, 90, 90]);
    // Window 10:00–13:00: the 17th reads 80, the chosen days 50: ratio 1.6, limited to 1.2 → 108.
    expect(run(A.Caiso10In10, input(LA, '2024-07-17'))).toEqual([108, 108, 108]);
  });

  it('weekday, ratio inside the limit', () => {
    const morning = (key: string) => (key === '2024-07-17' ? 55 : MORNING[key]);
    // The 17th reads 55 in the window: 55 / 50 = 1.1 → 99.
    expect(run(A.Caiso10In10, input(LA, '2024-07-17', { history: history(LA, undefined, morning) }))).toEqual([99, 99, 99]);
  });

  it('weekend day and holiday: the 4 most recent weekend days and holidays', () => {
    // Before Sat 20 July: 14 (30), 13 (40), 7 (34), 6 (5) → 27.25; the window reads 56: 1.12 → 30.52.
    expect(run(A.Caiso10In10Unadjusted, input(LA, '2024-07-20'))).toEqual([27.25, 27.25, 27.25]);
    expect(run(A.Caiso10In10, input(LA, '2024-07-20'))).toEqual([30.52, 30.52, 30.52]);
    // Holiday 4 July: 30 June (30), 29 (38), 23 (34), 22 (36) → 34.5; window 51: 1.02 → 35.19.
    expect(run(A.Caiso10In10Unadjusted, input(LA, '2024-07-04'))).toEqual([34.5, 34.5, 34.5]);
    expect(run(A.Caiso10In10, input(LA, '2024-07-04'))).toEqual([35.19, 35.19, 35.19]);
  });

  it('has no value with fewer than 10 usable weekdays in the 45 days, where Average10Of10 looks further back', () => {
    // Every weekday from 3 June to 3 July is an event day, and 10 July: 5, 8, 9, 11, 12, 15 and 16 July remain.
    const excludedDays = ['2024-07-10'];
    for (let key = '2024-06-03'; key <= '2024-07-03'; key = addLocalDays(key, 1)) if (weekdayType(key) === 'weekday') excludedDays.push(key);
    expect(run(A.Caiso10In10Unadjusted, input(LA, '2024-07-17', { excludedDays }))).toEqual([NaN, NaN, NaN]);
    // Average10Of10 widens its search past the 24 excluded days (to 119 days) and, ignoring holidays,
    // takes 16, 15, 12, 11, 9, 8, 5, 4 July and 31, 30 May: 833 / 10 = 83.3.
    expect(run(A.Average10Of10, input(LA, '2024-07-17', { excludedDays }))).toEqual([83.3, 83.3, 83.3]);
  });
});
