// The QuestDB store's pending-batch journal packs a batch small (evenly spaced series as start
// and step, constant resolutions once) and must give back exactly the rows it was given: a replay
// after a SIGKILL writes them again.
import { describe, expect, it } from 'vitest';
import { packRows, unpackRows } from '../../src/store/timeseries/questdb/journal.ts';
import type { ReadingRows } from '../../src/store/timeseries/types.ts';

function rows(series: { id: number; timestamps: number[]; resolutions: number[] }[]): ReadingRows {
  const offsets = [0];
  for (const s of series) offsets.push(offsets.at(-1)! + s.timestamps.length);
  const n = offsets.at(-1)!;
  return {
    registerIds: series.map((s) => s.id),
    offsets: Int32Array.from(offsets),
    timestamps: Float64Array.from(series.flatMap((s) => s.timestamps)),
    resolutions: Int32Array.from(series.flatMap((s) => s.resolutions)),
    values: Float64Array.from({ length: n }, (_, i) => (i % 7 === 0 ? -0.1 * i : i === 3 ? Number.MAX_VALUE : i / 3)),
  };
}

describe('pending-batch journal packing', () => {
  it('round-trips regular, irregular, mixed-resolution, single and empty series', () => {
    const t0 = Date.UTC(2024, 0, 1);
    const batch = rows([
      { id: 1, timestamps: Array.from({ length: 96 }, (_, i) => t0 + i * 900_000), resolutions: Array(96).fill(900) },
      { id: 2_000_000_000, timestamps: [t0, t0 + 900_000, t0 + 3_600_000, t0 + 3_600_001], resolutions: [900, 900, 1, 1] },
      { id: 3, timestamps: [t0 + 5], resolutions: [86400] },
      { id: 4, timestamps: [], resolutions: [] },
      { id: 5, timestamps: [t0 + 0.5, t0 + 1.7, t0 + 2.9], resolutions: [1, 1, 1] },
    ]);
    const packed = packRows(batch);
    const back = unpackRows(packed);
    expect(Array.from(back.registerIds)).toEqual(Array.from(batch.registerIds));
    expect(back.offsets).toEqual(batch.offsets);
    expect(back.timestamps).toEqual(batch.timestamps);
    expect(back.resolutions).toEqual(batch.resolutions);
    expect(back.values).toEqual(batch.values);
  });

  it('takes about 8 bytes a reading for evenly spaced meter data', () => {
    const t0 = Date.UTC(2024, 0, 1);
    const batch = rows(Array.from({ length: 100 }, (_, r) => ({ id: r + 1, timestamps: Array.from({ length: 1000 }, (_, i) => t0 + i * 900_000), resolutions: Array(1000).fill(900) })));
    const packed = packRows(batch);
    expect(packed.length).toBeLessThan(100_000 * 8 + 100 * 40);
    expect(unpackRows(packed).timestamps).toEqual(batch.timestamps);
  });
});
