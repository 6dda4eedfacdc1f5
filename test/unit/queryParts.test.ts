import { describe, expect, it } from 'vitest';
import { joinParts, splitQuery } from '../../src/store/timeseries/postgres/queryParts.ts';

const DAY = 86_400_000;
const Y = Date.UTC(2023, 0, 1);

describe('splitQuery', () => {
  it('keeps small queries whole', () => {
    expect(splitQuery(2, Y, Y + 7 * DAY, 4, 3_600_000)).toEqual([{ from: 0, to: 2, start: Y, end: Y + 7 * DAY }]);
    expect(splitQuery(100, Y, Y + 365 * DAY, 1, 3_600_000)).toHaveLength(1);
  });

  it('splits many registers into balanced groups covering all of them', () => {
    const parts = splitQuery(10, Y, Y + 365 * DAY, 4, 3_600_000);
    expect(parts.map((p) => [p.from, p.to])).toEqual([[0, 2], [2, 5], [5, 7], [7, 10]]);
    expect(parts.every((p) => p.start === Y && p.end === Y + 365 * DAY)).toBe(true);
    expect(splitQuery(3, Y, Y + 365 * DAY, 4, undefined).map((p) => [p.from, p.to])).toEqual([[0, 1], [1, 2], [2, 3]]);
  });

  it('splits one register into consecutive ranges cut at bucket boundaries', () => {
    const start = Y + 450_000; // 00:07:30, not on a boundary
    const parts = splitQuery(1, start, Y + 365 * DAY, 3, 7_200_000);
    expect(parts).toHaveLength(3);
    expect(parts[0]!.start).toBe(start);
    expect(parts[2]!.end).toBe(Y + 365 * DAY);
    for (let k = 1; k < parts.length; k += 1) {
      expect(parts[k]!.start).toBe(parts[k - 1]!.end);
      expect(parts[k]!.start % 7_200_000).toBe(0);
    }
  });

  it('never splits one register by time without an alignment (local days)', () => {
    expect(splitQuery(1, Y, Y + 365 * DAY, 4, undefined)).toHaveLength(1);
  });
});

describe('joinParts', () => {
  const series = (registerId: number, ...timestamps: number[]) => ({
    registerId,
    timestamps: Float64Array.from(timestamps),
    values: Float64Array.from(timestamps, (t) => t * 10),
    resolutions: Int32Array.from(timestamps, () => 60),
    updatedAt: Float64Array.from(timestamps, (t) => t + 1),
  });
  it('concatenates each register’s series in part order', () => {
    const joined = joinParts([[series(1, 1), series(2, 1)], [series(1, 2, 3)], [series(3, 1)], []]);
    const byId = Object.fromEntries(joined.map((s) => [s.registerId, { t: [...s.timestamps], v: [...s.values], r: [...s.resolutions], u: [...s.updatedAt] }]));
    expect(byId).toEqual({
      1: { t: [1, 2, 3], v: [10, 20, 30], r: [60, 60, 60], u: [2, 3, 4] },
      2: { t: [1], v: [10], r: [60], u: [2] },
      3: { t: [1], v: [10], r: [60], u: [2] },
    });
  });
});
