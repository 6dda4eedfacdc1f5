import { describe, expect, it } from 'vitest';
import { constantSeries } from '../../../src/shared/virtual/constant.ts';
import { nextResetInstant, previousResetInstant, runningTotal } from '../../../src/shared/virtual/runningTotal.ts';

const HOUR = 3_600_000;
const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000', '');
const hourly = (fromIso: string, count: number): Float64Array => Float64Array.from({ length: count }, (_, i) => at(fromIso) + i * HOUR);
const ones = (count: number): Float64Array => new Float64Array(count).fill(1);
const oneTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

describe('runningTotal without reset', () => {
  it('sums all previous values and the current one', () => {
    const ts = hourly('2024-01-01T00:00:00Z', 5);
    expect(Array.from(runningTotal(ts, Float64Array.from([1, 2, 3, 4, 5])))).toEqual([1, 3, 6, 10, 15]);
    expect(Array.from(runningTotal(ts, Float64Array.from([5, -2, 0.5, 0, -10])))).toEqual([5, 3, 3.5, 3.5, -6.5]);
  });

  it('shows NaN for a missing value and carries the total on', () => {
    const ts = hourly('2024-01-01T00:00:00Z', 5);
    expect(Array.from(runningTotal(ts, Float64Array.from([1, 2, NaN, 3, NaN])))).toEqual([1, 3, NaN, 6, NaN]);
    expect(Array.from(runningTotal(ts, Float64Array.from([NaN, NaN, 4, NaN, 1])))).toEqual([NaN, NaN, 4, NaN, 5]);
  });

  it('starts from initialTotal (the sum before the first bucket)', () => {
    const ts = hourly('2024-01-01T00:00:00Z', 3);
    expect(Array.from(runningTotal(ts, Float64Array.from([1, 2, 3]), { initialTotal: 100 }))).toEqual([101, 103, 106]);
  });

  it('handles empty series', () => {
    expect(runningTotal(new Float64Array(0), new Float64Array(0), { resetTimeOfDay: '06:00:00', timeZone: 'Europe/Oslo' })).toEqual(new Float64Array(0));
  });
});

describe('runningTotal with a daily reset', () => {
  it('resets at 00:00 UTC by default', () => {
    const ts = Float64Array.from(['2024-01-01T12:00:00Z', '2024-01-01T18:00:00Z', '2024-01-02T00:00:00Z', '2024-01-02T06:00:00Z'], at);
    expect(Array.from(runningTotal(ts, Float64Array.from([1, 2, 3, 4]), { resetTimeOfDay: '00:00:00' }))).toEqual([1, 3, 3, 7]);
  });

  it('resets at 06:00 Europe/Oslo across the spring change: the period over the change has 23 buckets', () => {
    // Resets: 2024-03-30 06:00 CET = 05:00Z, 2024-03-31 06:00 CEST = 04:00Z, 2024-04-01 06:00 CEST = 04:00Z.
    const ts = hourly('2024-03-30T03:00:00Z', 52); // to 2024-04-01T06:00Z
    const total = runningTotal(ts, ones(52), { resetTimeOfDay: '06:00:00', timeZone: 'Europe/Oslo' });
    expect(Array.from(total)).toEqual([1, 2, ...oneTo(23), ...oneTo(24), 1, 2, 3]);
    expect(iso(ts[2]!)).toBe('2024-03-30T05:00:00Z');
    expect(iso(ts[25]!)).toBe('2024-03-31T04:00:00Z');
    expect(iso(ts[49]!)).toBe('2024-04-01T04:00:00Z');
  });

  it('resets at 06:00 Europe/Oslo across the autumn change: the period over the change has 25 buckets', () => {
    // Resets: 2024-10-26 06:00 CEST = 04:00Z, 2024-10-27 06:00 CET = 05:00Z, 2024-10-28 06:00 CET = 05:00Z.
    const ts = hourly('2024-10-26T02:00:00Z', 53); // to 2024-10-28T06:00Z
    const total = runningTotal(ts, ones(53), { resetTimeOfDay: '06:00:00', timeZone: 'Europe/Oslo' });
    expect(Array.from(total)).toEqual([1, 2, ...oneTo(25), ...oneTo(24), 1, 2]);
  });

  it('worked example (docs): 06:00 Oslo on 2024-03-31 with a gap and a carried-in total', () => {
    // 01:00Z = 03:00 CEST … 05:00Z = 07:00 CEST; the reset is at 04:00Z.
    const ts = hourly('2024-03-31T01:00:00Z', 5);
    const values = Float64Array.from([2, NaN, 3, 4, 5]);
    const total = runningTotal(ts, values, { resetTimeOfDay: '06:00:00', timeZone: 'Europe/Oslo', initialTotal: 10 });
    expect(Array.from(total)).toEqual([12, NaN, 15, 4, 9]);
  });

  it('counts a bucket in the period it starts in, even when it straddles the reset', () => {
    // Reset 06:30 UTC; the 06:00 bucket started before it.
    const ts = hourly('2024-01-01T05:00:00Z', 3);
    expect(Array.from(runningTotal(ts, Float64Array.from([1, 2, 4]), { resetTimeOfDay: '06:30:00', timeZone: 'UTC' }))).toEqual([1, 3, 4]);
  });

  it('resets at the gap-shifted instant for a reset time in the spring gap', () => {
    // 02:30 does not exist on 2024-03-31 in Oslo: the reset happens at 03:30 CEST = 01:30Z.
    const ts = hourly('2024-03-31T00:00:00Z', 3);
    expect(Array.from(runningTotal(ts, ones(3), { resetTimeOfDay: '02:30:00', timeZone: 'Europe/Oslo' }))).toEqual([1, 2, 1]);
  });

  it('resets once, at the first occurrence, for a reset time in the autumn overlap', () => {
    // 02:30 happens twice on 2024-10-27 in Oslo: 00:30Z (CEST) resets, 01:30Z (CET) does not.
    const ts = hourly('2024-10-27T00:00:00Z', 3);
    expect(Array.from(runningTotal(ts, ones(3), { resetTimeOfDay: '02:30:00', timeZone: 'Europe/Oslo' }))).toEqual([1, 1, 2]);
  });

  it('finds the reset instants around any instant', () => {
    const oslo = (ms: number) => [iso(previousResetInstant(ms, '06:00:00', 'Europe/Oslo')), iso(nextResetInstant(ms, '06:00:00', 'Europe/Oslo'))];
    expect(oslo(at('2024-03-31T03:59:59Z'))).toEqual(['2024-03-30T05:00:00Z', '2024-03-31T04:00:00Z']);
    expect(oslo(at('2024-03-31T04:00:00Z'))).toEqual(['2024-03-31T04:00:00Z', '2024-04-01T04:00:00Z']);
    expect(oslo(at('2024-03-30T23:30:00Z'))).toEqual(['2024-03-30T05:00:00Z', '2024-03-31T04:00:00Z']);
    const ny = (ms: number) => [iso(previousResetInstant(ms, '00:00:00', 'America/New_York')), iso(nextResetInstant(ms, '00:00:00', 'America/New_York'))];
    expect(ny(at('2024-11-03T12:00:00Z'))).toEqual(['2024-11-03T04:00:00Z', '2024-11-04T05:00:00Z']);
  });
});

describe('runningTotal refuses bad input with codes', () => {
  const ts = hourly('2024-01-01T00:00:00Z', 2);
  it.each([
    [() => runningTotal(ts, Float64Array.from([1])), 'invalid_input'],
    [() => runningTotal(Float64Array.from([2, 1]), Float64Array.from([1, 1])), 'invalid_input'],
    [() => runningTotal(Float64Array.from([1, 1]), Float64Array.from([1, 1])), 'invalid_input'],
    [() => runningTotal(Float64Array.from([NaN, 1]), Float64Array.from([1, 1])), 'invalid_input'],
    [() => runningTotal(ts, Float64Array.from([1, 1]), { initialTotal: NaN }), 'invalid_input'],
    [() => runningTotal(ts, Float64Array.from([1, 1]), { resetTimeOfDay: '6:00' }), 'invalid_time_of_day'],
    [() => runningTotal(ts, Float64Array.from([1, 1]), { resetTimeOfDay: '06:00:00', timeZone: 'Oslo' }), 'invalid_time_zone'],
    [() => runningTotal([1, 2] as unknown as Float64Array, Float64Array.from([1, 1])), 'invalid_input'],
  ])('case %#', (call, code) => {
    expect(call).toThrow(expect.objectContaining({ code }));
  });
});

describe('constantSeries', () => {
  it('repeats the constant', () => {
    expect(Array.from(constantSeries(3, 2.5))).toEqual([2.5, 2.5, 2.5]);
    expect(constantSeries(0, 1)).toEqual(new Float64Array(0));
  });

  it('refuses a non-finite constant or a bad length', () => {
    expect(() => constantSeries(3, NaN)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    expect(() => constantSeries(3, Infinity)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    expect(() => constantSeries(-1, 1)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    expect(() => constantSeries(1.5, 1)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });
});
