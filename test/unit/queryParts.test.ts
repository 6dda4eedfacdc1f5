import { describe, expect, it } from 'vitest';
import { MIN_ROLLUP_BLOCKS_PER_PART, splitQuery } from '../../src/store/timeseries/postgres/queryParts.ts';

const DAY = 86_400_000;
const Y = Date.UTC(2023, 0, 1);

describe('splitQuery', () => {
  it('keeps small queries whole', () => {
    expect(splitQuery(2, Y, Y + 7 * DAY, 4, 3_600_000)).toEqual([{ from: 0, to: 2, start: Y, end: Y + 7 * DAY }]);
    expect(splitQuery(100, Y, Y + 365 * DAY, 1, 3_600_000)).toHaveLength(1);
    // Rollups of a register-year are one query; of 100 register-months, two.
    expect(splitQuery(1, Y, Y + 365 * DAY, 4, DAY, MIN_ROLLUP_BLOCKS_PER_PART)).toHaveLength(1);
    expect(splitQuery(100, Y, Y + 31 * DAY, 2, DAY, MIN_ROLLUP_BLOCKS_PER_PART)).toHaveLength(2);
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
