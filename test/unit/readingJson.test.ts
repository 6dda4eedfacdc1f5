import { describe, expect, it } from 'vitest';
import { computedText, isoUtc, releaseJson, roundComputed, seriesJson, seriesJsonById } from '../../src/store/timeseries/readingJson.ts';
import { ValueOutOfRange } from '../../src/store/timeseries/types.ts';

/** Every value, written by seriesJson as bucket values, reads as String(roundComputed(value)). */
function expectValuesWrittenAsRounded(values: readonly number[]): void {
  const n = values.length;
  const text = seriesJson({ registerId: 1, timestamps: new Float64Array(n), values: Float64Array.from(values), resolutions: new Int32Array(n).fill(60), updatedAt: new Float64Array(n) }, 60).toString();
  const written = [...text.matchAll(/"value":([^,]*),/g)].map((m) => m[1]);
  expect(written).toHaveLength(n);
  const wrong = values.flatMap((v, i) => (written[i] === String(roundComputed(v)) ? [] : [`${v}: ${written[i]}`]));
  expect(wrong).toEqual([]);
}

describe('reading JSON', () => {
  it('writes instants exactly as Date#toISOString does', () => {
    const instants = [0, -1, 1, 86_399_999, -86_400_000, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(1, 0, 1), Date.UTC(2031, 9, 26, 1, 0, 0, 7)];
    for (let k = 0; k < 5000; k += 1) instants.push(Math.floor((Math.random() - 0.5) * 2 * 253_402_300_799_999));
    // Every day from 1899 to 2101, one after the other (the date of each new day is computed).
    for (let day = Date.UTC(1899, 0, 1); day < Date.UTC(2102, 0, 1); day += 86_400_000) instants.push(day + 3_600_000);
    for (const ms of instants) expect(isoUtc(ms)).toBe(new Date(ms).toISOString());
  });

  it('writes every day of years 0–9999 as Date#toISOString does, and the days beyond (six-digit years)', () => {
    const DAY = 86_400_000;
    const wrong: string[] = [];
    const check = (ms: number) => {
      if (isoUtc(ms) !== new Date(ms).toISOString()) wrong.push(`${ms}: ${isoUtc(ms)}`);
    };
    for (let day = -719_528 - 800; day <= 2_932_896 + 800; day += 1) check(day * DAY + (day % 86_400) * 997);
    for (const ms of [-8.64e15, 8.64e15, -8.64e15 + 1, 8.64e15 - 1, Date.UTC(-1, 11, 31, 23, 59, 59, 999), Date.UTC(10_000, 0, 1)]) check(ms);
    expect(wrong.slice(0, 10)).toEqual([]);
  });

  it('writes a series with periodTo from each resolution, and the bucket length when given', () => {
    const t0 = Date.UTC(2024, 9, 27, 0); // a 25-hour local day in Amsterdam starts at 2024-10-26T22:00Z
    const series = {
      registerId: 3,
      timestamps: Float64Array.from([t0, t0 + 900_000, t0 + 3_600_000]),
      values: Float64Array.from([1.5, -0.25, 1e21]),
      resolutions: Int32Array.from([900, 900, 90_000]),
      updatedAt: Float64Array.from([t0, t0, t0 + 1]),
    };
    const readings = JSON.parse(seriesJson(series).toString());
    expect(readings).toEqual([
      { timestamp: '2024-10-27T00:00:00.000Z', periodTo: '2024-10-27T00:15:00.000Z', updatedAt: '2024-10-27T00:00:00.000Z', value: 1.5, resolution: 900 },
      { timestamp: '2024-10-27T00:15:00.000Z', periodTo: '2024-10-27T00:30:00.000Z', updatedAt: '2024-10-27T00:00:00.000Z', value: -0.25, resolution: 900 },
      { timestamp: '2024-10-27T01:00:00.000Z', periodTo: '2024-10-28T02:00:00.000Z', updatedAt: '2024-10-27T00:00:00.001Z', value: 1e21, resolution: 90_000 },
    ]);
    expect(JSON.parse(seriesJson(series, 86_400).toString()).map((r: { resolution: number }) => r.resolution)).toEqual([86_400, 86_400, 86_400]);
    const one = { registerId: 1, timestamps: Float64Array.of(t0), values: Float64Array.of(2), resolutions: Int32Array.of(1), updatedAt: Float64Array.of(t0) };
    expect(seriesJson(one).toString()).toBe(JSON.stringify([{ timestamp: '2024-10-27T00:00:00.000Z', periodTo: '2024-10-27T00:00:01.000Z', updatedAt: '2024-10-27T00:00:00.000Z', value: 2, resolution: 1 }]));
  });

  it('writes byte for byte what JSON.stringify writes, where a reading repeats the previous one up to its value and where it does not', () => {
    // The writer copies the previous reading's text when both its instants fall on the same UTC
    // days and its updatedAt is the same: random series that do and do not, in every mix.
    let seed = 12345;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let k = 0; k < 300; k += 1) {
      const n = 1 + Math.floor(random() * 80);
      const base = k % 50 === 0 ? -8.64e15 + 86_400_000 : k % 50 === 1 ? 8.64e15 - 200 * 86_400_000 : Date.UTC(2024, 2, 30) + Math.floor((random() - 0.5) * 1e12);
      const steps = [1, 1000, 900_000, 3_600_000, 86_399_999, 86_400_000, 90_000_000];
      const timestamps: number[] = [];
      const resolutions: number[] = [];
      const updatedAt: number[] = [];
      const values: number[] = [];
      let t = base;
      for (let i = 0; i < n; i += 1) {
        t += steps[Math.floor(random() * steps.length)]!;
        timestamps.push(t);
        resolutions.push([1, 900, 3600, 86_400, 90_000][Math.floor(random() * 5)]!);
        updatedAt.push(random() < 0.8 && i > 0 ? updatedAt[i - 1]! : base + Math.floor(random() * 1e9));
        values.push(random() < 0.2 ? Math.round(random() * 100) : (random() - 0.5) * 10 ** Math.floor(random() * 40 - 20));
      }
      const series = { registerId: 1, timestamps: Float64Array.from(timestamps), values: Float64Array.from(values), resolutions: Int32Array.from(resolutions), updatedAt: Float64Array.from(updatedAt) };
      for (const bucketSeconds of [undefined, 3600]) {
        const expected = timestamps.map((ts, i) => ({
          timestamp: new Date(ts).toISOString(),
          periodTo: new Date(ts + resolutions[i]! * 1000).toISOString(),
          updatedAt: new Date(updatedAt[i]!).toISOString(),
          value: bucketSeconds === undefined ? values[i] : roundComputed(values[i]!),
          resolution: bucketSeconds ?? resolutions[i],
        }));
        expect(seriesJson(series, bucketSeconds).toString()).toBe(JSON.stringify(expected));
      }
    }
  });

  it('fits the longest readings: six-digit years, the longest numbers and resolutions', () => {
    const last = 8.64e15 - 86_400_000;
    const first = -8.64e15;
    const values = [-2.2250738585072014e-308, -1.7976931348623157e308, 5e-324, -0.000001234567890123456];
    const series = {
      registerId: 1,
      timestamps: Float64Array.from([first, first + 1, last - 86_400_001, last]),
      values: Float64Array.from(values),
      resolutions: Int32Array.from([1, 2_147_483, 86_400, 86_400]),
      updatedAt: Float64Array.from([last + 86_399_999, first, first + 999, last]),
    };
    expect(JSON.parse(seriesJson(series).toString()).map((r: { value: number }) => r.value)).toEqual(values);
    const readings = JSON.parse(seriesJson(series, -2_147_483_648).toString());
    // Bucket values are computed: rounded to COMPUTED_DIGITS significant digits.
    expect(readings.map((r: { value: number }) => r.value)).toEqual(values.map(roundComputed));
    expect(readings.map((r: { timestamp: string }) => r.timestamp)).toEqual([...series.timestamps].map((t) => new Date(t).toISOString()));
    expect(readings[3]).toMatchObject({ periodTo: '+275760-09-13T00:00:00.000Z', resolution: -2_147_483_648 });
  });

  it('writes computed values exactly as String(roundComputed(value)) (the fast text of bucket values)', () => {
    const values = [0, -0, 1, -2.5, 0.1, 0.30000000000000004, 1 / 3, -2 / 3, 123.456, 1e12, 999999999999.95, 99999999999.995, 0.1234567890125, 9.999999999995, 9.9999999999951, -0.99999999999995];
    values.push(0.000001, -0.000001, 999999.999999, -999999.999999, 999999.9999995, 1e6 - 1e-6, 0.5, 10.000001, 100000.1, 0.00025);
    values.push(1e-7, 1.23456789012345e-5, 5e-324, 1e21, 1234.5678901234567, Number.MAX_VALUE, -Number.MIN_VALUE);
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const bits = new Float64Array(1);
    const words = new Uint32Array(bits.buffer);
    for (let k = 0; k < 200_000; k += 1) {
      const kind = k % 8;
      if (kind === 0) values.push((random() - 0.3) * 10 ** Math.floor(random() * 30 - 12));
      else if (kind === 1) values.push(Math.round(random() * 1e6) / 1e3 / (1 + Math.floor(random() * 96))); // averages of meter values
      else if (kind === 2) values.push(Number((random() * 1000).toPrecision(13))); // 13 digits: often ending on the boundary (…5)
      else if (kind === 3) values.push(Number(`${((random() - 0.5) * 1e4).toFixed(9)}5`));
      else if (kind === 4) {
        words[0] = (random() * 2 ** 32) >>> 0;
        words[1] = (random() * 2 ** 32) >>> 0;
        if (Number.isFinite(bits[0])) values.push(bits[0]!); // any finite double (others are refused: the next test)
      } else if (kind === 5) values.push(Number(`0.${'9'.repeat(1 + Math.floor(random() * 15))}`) * 10 ** Math.floor(random() * 10)); // carries
      else if (kind === 6) values.push(Math.round((random() - 0.5) * 2 * 10 ** Math.floor(random() * 13)) / 1e6); // whole millionths (written without toPrecision)
      else values.push((Math.round(random() * 1e8) / 1e3 + Math.round(random() * 1e8) / 1e3 + Math.round(random() * 1e8) / 1e3) / (k % 16 < 8 ? 1 : 4)); // thousandths summed, averaged
    }
    expectValuesWrittenAsRounded(values);
  });

  it('writes millionths with binary noise (sums of thousandths) as String(roundComputed(value)), near whole numbers and edges too', () => {
    const values = [0.1 + 0.2, 2.0000000000001, -2.0000000000001, 1.9999999999999, 999999.9999999999, -999999.99999999, 9.9999999999999e-7, 1.0000000000001e-6, 5e-7, 4.9999999999e-7];
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let k = 0; k < 200_000; k += 1) {
      const micros = Math.round((random() - 0.5) * 2 * 10 ** Math.floor(random() * 13)) / 1e6;
      // A few ulps either way, or a relative offset of up to 2·10⁻¹² (the fast path allows 10⁻¹³; 5·10⁻¹³ would be wrong).
      const noisy = k % 3 === 0 ? micros * (1 + (random() - 0.5) * 2 ** -48) : k % 3 === 1 ? micros + (random() - 0.5) * 8 * Number.EPSILON * Math.abs(micros) : micros * (1 + (random() - 0.5) * 4e-12);
      values.push(noisy, Math.round(micros) + (random() - 0.5) * 1e-12);
    }
    expectValuesWrittenAsRounded(values);
  });

  it('refuses a value that is not finite (no JSON number; value is a number in the schema), and leaves out series without rows', () => {
    const one = (value: number) => ({ registerId: 1, timestamps: Float64Array.of(0), values: Float64Array.of(value), resolutions: Int32Array.of(60), updatedAt: Float64Array.of(0) });
    expect(() => seriesJson(one(Infinity), 3600)).toThrow(ValueOutOfRange);
    expect(() => seriesJson(one(NaN), 3600)).toThrow(new ValueOutOfRange(1, 0));
    const empty = { registerId: 2, timestamps: new Float64Array(0), values: new Float64Array(0), resolutions: new Int32Array(0), updatedAt: new Float64Array(0) };
    expect([...seriesJsonById([one(1), empty]).keys()]).toEqual([1]);
    expect(seriesJson(empty).toString()).toBe('[]');
  });

  it('lends kept memory per answer: answers not given back never share it, a given-back one is used again and stays correct', () => {
    const hours = (registerId: number, n: number, value: number) => ({
      registerId,
      timestamps: Float64Array.from({ length: n }, (_, i) => Date.UTC(2023, 0, 1) + i * 3_600_000),
      values: new Float64Array(n).fill(value),
      resolutions: new Int32Array(n).fill(3600),
      updatedAt: new Float64Array(n).fill(Date.UTC(2024, 0, 1)),
    });
    const expected = (registerId: number, n: number, value: number) => seriesJson(hours(registerId, n, value), 3600).toString();
    // Two answers in flight at once (two requests): separate memory, each as written alone.
    const a = seriesJsonById([hours(1, 8760, 1.5), hours(2, 10, 2.5)], 3600);
    const b = seriesJsonById([hours(3, 8760, 3.5)], 3600);
    expect(a.get(1)!.buffer).not.toBe(b.get(3)!.buffer);
    expect(a.get(1)!.buffer).toBe(a.get(2)!.buffer);
    expect(a.get(1)!.toString()).toBe(expected(1, 8760, 1.5));
    expect(a.get(2)!.toString()).toBe(expected(2, 10, 2.5));
    expect(b.get(3)!.toString()).toBe(expected(3, 8760, 3.5));
    // Given back (twice: the second does nothing), a's memory serves the next answer; b is untouched.
    releaseJson(a.values());
    releaseJson(a.values());
    const c = seriesJsonById([hours(4, 100, 4.5)], 3600);
    expect(c.get(4)!.buffer).toBe(a.get(1)!.buffer);
    expect(c.get(4)!.toString()).toBe(expected(4, 100, 4.5));
    expect(b.get(3)!.toString()).toBe(expected(3, 8760, 3.5));
    // Only once: a second answer while c holds that memory gets other memory.
    const d = seriesJsonById([hours(5, 100, 5.5)], 3600);
    expect(d.get(5)!.buffer).not.toBe(c.get(4)!.buffer);
    // Buffers that were never lent are left alone.
    releaseJson([Buffer.from('[]')]);
    releaseJson([...b.values(), ...c.values(), ...d.values()]);
  });

  it('gives the memory back when an answer cannot be written (a value past the largest double)', () => {
    const bad = { registerId: 1, timestamps: Float64Array.of(0, 3_600_000), values: Float64Array.of(1, Infinity), resolutions: Int32Array.of(3600, 3600), updatedAt: Float64Array.of(0, 0) };
    const first = seriesJsonById([{ ...bad, values: Float64Array.of(1, 2) }], 3600);
    const memory = first.get(1)!.buffer;
    releaseJson(first.values());
    expect(() => seriesJsonById([bad], 3600)).toThrow(ValueOutOfRange);
    expect(seriesJsonById([{ ...bad, values: Float64Array.of(1, 2) }], 3600).get(1)!.buffer).toBe(memory);
  });

  it('writes a computed value as the text of the rounded number, whatever its size', () => {
    const values = [0.1 + 0.2, 89.14799999999998, -12.34575, 1e21 + 1, 5e-7 / 3, 0.000123456789, 123456789012.5, 1234567890123.4, -0.5, 2 / 3, 1 / 3e10, 12.5, 100];
    for (let k = 0; k < 100_000; k += 1) {
      values.push(k % 2 ? (Math.random() - 0.5) * 10 ** (Math.floor(Math.random() * 40) - 20) : Math.round(Math.random() * 1e6) / 1000 / (1 + (k % 7)));
    }
    for (const v of values) expect(computedText(v), String(v)).toBe(String(roundComputed(v)));
  });
});
