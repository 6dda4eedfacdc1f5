// The compact column codec of register-day blocks (src/shared/readings/codec.ts): every value
// comes back bit for bit (any double: -0, subnormals, the largest, decimals of any length), times
// and resolutions exactly, recordedAt and supersededAt as runs; meter-like days take about a byte
// a reading.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteWriter, dataAsHistory, decimalDigits, decodeColumns, encodeColumns, writeWithRecordedAt } from '../../src/shared/readings/codec.ts';

const DAY = 86_400_000;
const day = 20_000;
const base = day * DAY;

function roundTrip(times: number[], values: number[], resolutions: number[], recordedAt: number[] | number, supersededAt?: number[]) {
  const w = new ByteWriter(8);
  encodeColumns(w, day, times, values, resolutions, recordedAt, 0, times.length, supersededAt);
  const bytes = w.result();
  return { bytes, decoded: decodeColumns(bytes, day) };
}

const bits = (x: number) => Buffer.from(Float64Array.of(x).buffer).toString('hex');

describe('reading block codec', () => {
  it('gives back any doubles, times, resolutions and instants exactly', () => {
    const readings = fc
      .uniqueArray(fc.integer({ min: 0, max: DAY - 1 }), { minLength: 1, maxLength: 300 })
      .chain((offsets) =>
        fc.record({
          offsets: fc.constant([...offsets].sort((a, b) => a - b)),
          values: fc.array(
            fc.oneof(
              fc.double({ noNaN: true, noDefaultInfinity: true }),
              fc.integer({ min: -1_000_000, max: 1_000_000 }).map((k) => k / 1000),
              fc.integer({ min: 0, max: 99_999 }).map((k) => k / 100),
              fc.constantFrom(-0, 0, 5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** 53, 0.1, 1e21),
            ),
            { minLength: offsets.length, maxLength: offsets.length },
          ),
          resolutions: fc.array(fc.constantFrom(1, 60, 900, 3600, 86400, 31_622_400), { minLength: offsets.length, maxLength: offsets.length }),
          recordedAt: fc.array(fc.oneof(fc.constantFrom(1.7e12, 1.7e12 + 1), fc.double({ noNaN: true })), { minLength: offsets.length, maxLength: offsets.length }),
          superseded: fc.boolean(),
        }),
      );
    fc.assert(
      fc.property(readings, (r) => {
        const times = r.offsets.map((o) => base + o);
        const { decoded } = roundTrip(times, r.values, r.resolutions, r.recordedAt, r.superseded ? r.recordedAt.map((u) => u + 1) : undefined);
        expect([...decoded.times]).toEqual(times);
        expect([...decoded.values].map(bits)).toEqual(r.values.map(bits));
        expect([...decoded.resolutions]).toEqual(r.resolutions);
        expect([...decoded.recordedAt].map(bits)).toEqual(r.recordedAt.map(bits));
        if (r.superseded) expect([...decoded.supersededAt!].map(bits)).toEqual(r.recordedAt.map((u) => bits(u + 1)));
        else expect(decoded.supersededAt).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the versions of one time side by side (steps of zero)', () => {
    const times = [base, base, base, base + 900_000];
    const { decoded } = roundTrip(times, [1, 2, 3, 4], [900, 900, 900, 900], [1, 2, 3, 1], [2, 3, 4, 5]);
    expect([...decoded.times]).toEqual(times);
    expect([...decoded.supersededAt!]).toEqual([2, 3, 4, 5]);
  });

  it('takes about a byte a reading for a meter-like day, and little for regular times', () => {
    const times = Array.from({ length: 96 }, (_, i) => base + i * 900_000);
    const values = times.map((_, i) => Math.round(1000 * (0.2 + 0.1 * Math.sin((i / 96) * 2 * Math.PI)) + ((i * 37) % 23) - 11) / 1000);
    const { bytes } = roundTrip(times, values, new Array(96).fill(900), 1.7e12);
    expect(bytes.length).toBeLessThan(120);
    // Three decimals are recognized as such; a double that is not a short decimal is not.
    expect(decimalDigits(values, 0, 96)).toBe(3);
    expect(decimalDigits([0.1 + 0.2], 0, 1)).toBe(-1);
    expect(decimalDigits([-0], 0, 1)).toBe(-1);
  });

  it('sets the recordedAt of a block, and turns a block into the history of its readings, without decoding', () => {
    const w = new ByteWriter();
    encodeColumns(w, day, [base, base + 1], [1.5, 2], [1, 1], 123, 0, 2);
    const bytes = w.result();
    const again = new ByteWriter();
    writeWithRecordedAt(again, bytes, day, base + 86_400_000 * 3 + 0.5);
    expect([...decodeColumns(again.result(), day).recordedAt]).toEqual([base + 86_400_000 * 3 + 0.5, base + 86_400_000 * 3 + 0.5]);
    const history = decodeColumns(dataAsHistory(bytes, day, 456), day);
    expect(history).toMatchObject({ times: Float64Array.of(base, base + 1), values: Float64Array.of(1.5, 2), recordedAt: Float64Array.of(123, 123), supersededAt: Float64Array.of(456, 456) });
  });

  it('refuses bytes that are not columns instead of reading past them', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        try {
          const c = decodeColumns(bytes, day);
          expect(c.times.length).toBe(c.values.length);
        } catch (err) {
          expect(err).toBeInstanceOf(RangeError);
        }
      }),
      { numRuns: 500 },
    );
  });
});
