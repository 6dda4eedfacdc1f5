// The QuestDB store's pending-batch journal packs a batch small (evenly spaced series as start
// and step, constant resolutions once, whole thousandths as integers) and must give back exactly
// the rows it was given: a replay after a SIGKILL writes them again. Entries an older Flex left
// in the first format are still read.
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

  it('takes about 8 bytes a reading for evenly spaced data, 4 for whole thousandths', () => {
    const t0 = Date.UTC(2024, 0, 1);
    const batch = rows(Array.from({ length: 100 }, (_, r) => ({ id: r + 1, timestamps: Array.from({ length: 1000 }, (_, i) => t0 + i * 900_000), resolutions: Array(1000).fill(900) })));
    const packed = packRows(batch);
    expect(packed.length).toBeLessThan(100_000 * 8 + 100 * 40);
    expect(unpackRows(packed).timestamps).toEqual(batch.timestamps);
    const meter = { ...batch, values: Float64Array.from({ length: 100_000 }, (_, i) => (((i * 7919) % 100_000) - 50_000) / 1000) };
    const small = packRows(meter);
    expect(small.length).toBeLessThan(100_000 * 4 + 100 * 40);
    expect(unpackRows(small).values).toEqual(meter.values);
  });

  it('keeps values that are not whole thousandths, or do not fit, as doubles', () => {
    const values = [0.0005, 1e-3 / 3, 2147483.648, -2147483.649, -0, 0.1 + 0.2, 12.345, Number.MIN_VALUE, 1e300];
    const batch = { registerIds: [1], offsets: Int32Array.from([0, values.length]), timestamps: Float64Array.from(values, (_, i) => i), resolutions: new Int32Array(values.length).fill(1), values: Float64Array.from(values) };
    const back = unpackRows(packRows(batch)).values;
    values.forEach((v, i) => expect(Object.is(back[i], v), String(v)).toBe(true));
  });

  it('reads an entry of the first format', () => {
    // u32 series, u32 readings; per series f64 id, u32 count, u8 regular, u8 constant, start/step or
    // timestamps, resolution(s); then f64 values.
    const t0 = Date.UTC(2024, 0, 1);
    const old = Buffer.alloc(8 + 2 * (14 + 16 + 4) + 3 * 8);
    let at = 0;
    const u32 = (v: number) => ((at = old.writeUInt32LE(v, at)), undefined);
    const f64 = (v: number) => ((at = old.writeDoubleLE(v, at)), undefined);
    const i32 = (v: number) => ((at = old.writeInt32LE(v, at)), undefined);
    const u8 = (v: number) => ((at = old.writeUInt8(v, at)), undefined);
    u32(2), u32(3);
    f64(7), u32(2), u8(1), u8(1), f64(t0), f64(900_000), i32(900);
    f64(8), u32(1), u8(1), u8(1), f64(t0 + 5), f64(0), i32(60);
    f64(0.5), f64(-1.25), f64(3);
    const back = unpackRows(old.subarray(0, at));
    expect(back.registerIds).toEqual([7, 8]);
    expect(Array.from(back.offsets)).toEqual([0, 2, 3]);
    expect(Array.from(back.timestamps)).toEqual([t0, t0 + 900_000, t0 + 5]);
    expect(Array.from(back.resolutions)).toEqual([900, 900, 60]);
    expect(Array.from(back.values)).toEqual([0.5, -1.25, 3]);
  });
});
