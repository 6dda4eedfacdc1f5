// The console's pure data rules: aligning registers on one axis with gaps kept as gaps, the CSV
// of what is shown, coverage per local day, event intervals on the timeline, and its copies of
// the API's code tables.
import { describe, expect, it } from 'vitest';
import { coverageByDay, localMidnight } from '../../console/src/data/coverage.ts';
import { toCsv } from '../../console/src/data/csv.ts';
import { intervalsOf, payloadText } from '../../console/src/data/eventTimeline.ts';
import { alignReadings, visibleRows } from '../../console/src/data/series.ts';
import { CLEARING_STATUSES, DELIVERY_STATUSES, MEASUREMENT_UNITS, PREFIXES, PRODUCT_TYPES, registerLabel } from '../../console/src/data/units.ts';
import { CLEARING_STATUSES as API_CLEARING, DELIVERY_VALIDATION_STATUSES, MEASUREMENT_PREFIXES, MEASUREMENT_TYPES, PRODUCT_TYPES as API_PRODUCTS, type MeasurementType } from '../../src/codes.ts';

const reading = (timestamp: string, value: number, resolution = 900) => ({
  timestamp,
  periodTo: new Date(Date.parse(timestamp) + resolution * 1000).toISOString(),
  updatedAt: timestamp,
  value,
  resolution,
});
const s = (iso: string) => Date.parse(iso) / 1000;

describe('aligning readings', () => {
  it('puts a null where a register has a gap, and nothing between consecutive readings', () => {
    const a = alignReadings([[reading('2024-01-01T00:00:00Z', 1), reading('2024-01-01T00:15:00Z', 2), reading('2024-01-01T00:45:00Z', 4)]]);
    expect(a.x).toEqual([s('2024-01-01T00:00:00Z'), s('2024-01-01T00:15:00Z'), s('2024-01-01T00:30:00Z'), s('2024-01-01T00:45:00Z')]);
    expect(a.ys).toEqual([[1, 2, null, 4]]);
  });

  it('joins registers on the union of their timestamps; a missing point of one is undefined (stepped over), not null', () => {
    const quarter = [reading('2024-01-01T00:00:00Z', 1), reading('2024-01-01T00:15:00Z', 2), reading('2024-01-01T00:30:00Z', 3), reading('2024-01-01T00:45:00Z', 4), reading('2024-01-01T01:00:00Z', 5)];
    const hourly = [reading('2024-01-01T00:00:00Z', 10, 3600), reading('2024-01-01T01:00:00Z', 11, 3600)];
    const a = alignReadings([quarter, hourly]);
    expect(a.x.length).toBe(5);
    expect(a.ys[0]).toEqual([1, 2, 3, 4, 5]);
    expect(a.ys[1]).toEqual([10, undefined, undefined, undefined, 11]);
  });

  it('handles no readings at all', () => {
    expect(alignReadings([[], []])).toEqual({ x: [], ys: [[], []] });
  });
});

describe('the CSV of what is shown', () => {
  const aligned = alignReadings([
    [reading('2024-01-01T00:00:00Z', 1.5), reading('2024-01-01T00:30:00Z', 0.1 + 0.2)],
    [reading('2024-01-01T00:00:00Z', -2), reading('2024-01-01T00:15:00Z', 3)],
  ]);
  const labels = ['#1 main, "north" (kWh)', '#2 spare (kWh)'];

  it('has a row per timestamp with data, an empty cell where a series has none, RFC 4180 quoting, exact numbers', () => {
    const csv = toCsv(aligned, labels, -Infinity, Infinity, [0, 1]);
    expect(csv).toBe(
      ['timestamp,"#1 main, ""north"" (kWh)",#2 spare (kWh)', '2024-01-01T00:00:00.000Z,1.5,-2', '2024-01-01T00:15:00.000Z,,3', '2024-01-01T00:30:00.000Z,0.30000000000000004,', ''].join('\r\n'),
    );
  });

  it('keeps only the visible window and the shown series', () => {
    expect(toCsv(aligned, labels, s('2024-01-01T00:10:00Z'), Infinity, [0])).toBe(['timestamp,"#1 main, ""north"" (kWh)"', '2024-01-01T00:30:00.000Z,0.30000000000000004', ''].join('\r\n'));
    expect(visibleRows(aligned, -Infinity, Infinity, [1])).toEqual([0, 1]);
  });
});

describe('coverage per local day', () => {
  const quarterHours = (startIso: string, count: number) =>
    Array.from({ length: count }, (_, i) => {
      const start = Date.parse(startIso) + i * 900_000;
      return { start, end: start + 900_000 };
    });
  const now = Date.parse('2025-06-01T00:00:00Z');

  it('finds local midnights across daylight-saving changes', () => {
    expect(new Date(localMidnight('Europe/Oslo', 2024, 3, 31)).toISOString()).toBe('2024-03-30T23:00:00.000Z');
    expect(new Date(localMidnight('Europe/Oslo', 2024, 4, 1)).toISOString()).toBe('2024-03-31T22:00:00.000Z');
    expect(new Date(localMidnight('America/New_York', 2024, 11, 3)).toISOString()).toBe('2024-11-03T04:00:00.000Z');
    expect(new Date(localMidnight('UTC', 2024, 1, 1)).toISOString()).toBe('2024-01-01T00:00:00.000Z');
  });

  it('marks complete, partial, missing and not-yet-over days; a 23-hour day is complete with 92 readings', () => {
    const readings = [...quarterHours('2024-03-29T23:00:00Z', 96), ...quarterHours('2024-03-30T23:00:00Z', 92), ...quarterHours('2024-04-01T22:00:00Z', 95)];
    const days = coverageByDay(readings, 'Europe/Oslo', 2024, now);
    const day = (d: string) => days.find((x) => x.day === d)!;
    expect(days.length).toBe(366);
    expect(day('2024-03-30')).toMatchObject({ state: 'complete', readings: 96, covered: 1 });
    expect(day('2024-03-31')).toMatchObject({ state: 'complete', readings: 92 });
    expect(day('2024-04-01').state).toBe('missing');
    expect(day('2024-04-02')).toMatchObject({ state: 'partial', readings: 95 });
    expect(coverageByDay(readings, 'Europe/Oslo', 2025, now).find((x) => x.day === '2025-12-31')!.state).toBe('open');
  });

  it('counts overlapping readings once and splits a reading across midnight', () => {
    const day = Date.parse('2024-05-01T00:00:00Z');
    const readings = [
      { start: day - 3_600_000, end: day + 3_600_000 },
      { start: day, end: day + 43_200_000 },
      { start: day + 1_800_000, end: day + 2_700_000 },
    ];
    const days = coverageByDay(readings, 'UTC', 2024, now);
    expect(days.find((x) => x.day === '2024-04-30')!.covered).toBeCloseTo(1 / 24);
    expect(days.find((x) => x.day === '2024-05-01')!.covered).toBeCloseTo(0.5);
  });
});

describe('event intervals on the timeline', () => {
  it('places intervals back to back from the event period, honours their own periods, and keeps open ends open', () => {
    const event = {
      id: 'e',
      programID: 'p',
      eventName: null,
      priority: null,
      intervalPeriod: { start: '2024-06-01T10:00:00Z', duration: 'PT1H' },
      intervals: [
        { id: 0, payloads: [{ type: 'PRICE', values: [0.25] }] },
        { id: 1, payloads: [{ type: 'PRICE', values: [0.5, 'x'] }] },
        { id: 7, intervalPeriod: { start: '2024-06-02T00:00:00Z', duration: 'PT0S' }, payloads: [] },
      ],
    };
    const intervals = intervalsOf(event);
    expect(intervals.map((i) => [i.id, new Date(i.start).toISOString(), i.end && new Date(i.end).toISOString()])).toEqual([
      [0, '2024-06-01T10:00:00.000Z', '2024-06-01T11:00:00.000Z'],
      [1, '2024-06-01T11:00:00.000Z', '2024-06-01T12:00:00.000Z'],
      [7, '2024-06-02T00:00:00.000Z', null],
    ]);
    expect(payloadText(intervals[1]!.payloads)).toBe('PRICE 0.5, x');
  });
});

describe('the console’s code tables', () => {
  it('name every code of the API’s tables', () => {
    expect(Object.keys(MEASUREMENT_UNITS)).toEqual(Object.keys(MEASUREMENT_TYPES.values));
    expect(Object.keys(PREFIXES).sort()).toEqual(Object.keys(MEASUREMENT_PREFIXES.values).sort());
    expect(Object.keys(PRODUCT_TYPES)).toEqual(Object.keys(API_PRODUCTS.values));
    expect(Object.keys(CLEARING_STATUSES)).toEqual(Object.keys(API_CLEARING.values));
    expect(Object.keys(DELIVERY_STATUSES)).toEqual(Object.keys(DELIVERY_VALIDATION_STATUSES.values));
    // Units agree with the API's descriptions ("Active energy, Wh (summed)").
    for (const [code, unit] of Object.entries(MEASUREMENT_UNITS)) if (unit && unit !== 'price') expect(MEASUREMENT_TYPES.values[Number(code) as MeasurementType], unit).toContain(`, ${unit} (`);
    expect(registerLabel({ id: 4, name: 'Main', measurementType: 1, measurementPrefix: 3 })).toBe('#4 Main (kWh)');
  });
});
