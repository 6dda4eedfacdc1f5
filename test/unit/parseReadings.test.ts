// The byte-level reading-batch parser: numbers and timestamps decode exactly like JSON.parse and
// Date.parse would, paths name the offending values, duplicates resolve to the last one.
import { describe, expect, it } from 'vitest';
import { parseReadings, parseTimestampBytes } from '../../src/shared/readings/parseReadings.ts';
import { JsonCursor } from '../../src/shared/readings/jsonCursor.ts';
import { encodeCopy, fillRegisterIds, COPY_HEADER, ROW_BYTES } from '../../src/shared/readings/pgCopy.ts';

const bytes = (s: string) => Buffer.from(s);

describe('JsonCursor.number', () => {
  it('decodes like JSON.parse, fast path and slow path alike', () => {
    const samples = ['0', '-0', '1', '-1', '0.1', '123.456', '1e3', '-2.5E-3', '0.000001', '9007199254740993', '123456789012345.6', '3.141592653589793238', '1e308', '5e-324', '0.30000000000000004'];
    for (const text of samples) {
      const value = new JsonCursor(bytes(text)).number();
      expect(Object.is(value, JSON.parse(text)), text).toBe(true);
    }
  });

  it('agrees with JSON.parse on many random decimals', () => {
    for (let i = 0; i < 20_000; i += 1) {
      const text = (Math.random() * 10 ** Math.floor(Math.random() * 12)).toFixed(Math.floor(Math.random() * 8));
      expect(new JsonCursor(bytes(text)).number()).toBe(JSON.parse(text));
    }
  });
});

describe('parseTimestampBytes', () => {
  it('matches Date.parse for UTC timestamps with or without fractions', () => {
    for (const s of ['2024-01-01T00:00:00Z', '2024-02-29T23:59:59.999Z', '1999-12-31T12:34:56.5Z', '2024-06-15T08:09:10.123456Z', '1970-01-01T00:00:00Z', '1960-05-05T05:05:05Z']) {
      expect(parseTimestampBytes(bytes(s), 0, s.length), s).toBe(Date.parse(s));
    }
  });

  it('refuses offsets, impossible dates and other formats', () => {
    expect(parseTimestampBytes(bytes('2024-01-01T00:00:00+01:00'), 0, 25)).toMatch(/UTC/);
    expect(parseTimestampBytes(bytes('2023-02-29T00:00:00Z'), 0, 20)).toMatch(/not a valid date/);
    expect(parseTimestampBytes(bytes('2024-01-01 00:00:00Z'), 0, 20)).toMatch(/ISO 8601/);
    expect(parseTimestampBytes(bytes('2024-01-01T24:00:00Z'), 0, 20)).toMatch(/not a valid/);
  });
});

describe('parseReadings', () => {
  it('groups by series, sorts by time, keeps the last duplicate, and lists months', () => {
    const out = parseReadings(
      bytes(JSON.stringify({
        meters: [
          { id: 'M', registers: [{ values: [{ timestamp: '2024-02-01T00:00:00Z', value: 1, resolution: 60 }, { resolution: 60, value: 2, timestamp: '2024-01-31T23:59:00Z' }], id: 'A' }] },
          { registers: [{ id: 'A', values: [{ timestamp: '2024-02-01T00:00:00Z', value: 3, resolution: 60 }] }, { id: 'B', values: [] }], id: 'M' },
        ],
      })),
    );
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    const b = out.batch;
    expect(b.series.map((s) => `${s.meterId}/${s.registerId}`)).toEqual(['M/A', 'M/B']);
    expect([...b.offsets]).toEqual([0, 2, 2]);
    expect([...b.timestamps]).toEqual([Date.parse('2024-01-31T23:59:00Z'), Date.parse('2024-02-01T00:00:00Z')]);
    expect([...b.values]).toEqual([2, 3]);
    expect(b.months).toEqual([Date.UTC(2024, 0, 1), Date.UTC(2024, 1, 1)]);
  });

  it('names offending values by path, up to 20', () => {
    const values = Array.from({ length: 30 }, (_, i) => ({ timestamp: 'x', value: i, resolution: 60 }));
    const out = parseReadings(bytes(JSON.stringify({ meters: [{ id: 'M', registers: [{ id: 'R', values }] }] })));
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.errors).toHaveLength(20);
    expect(out.errors[17]).toEqual({ path: 'meters[0].registers[0].values[17].timestamp', message: 'must be an ISO 8601 UTC date-time such as 2024-01-01T00:00:00Z' });
  });

  it('reports malformed JSON with the byte offset, and ids with escapes', () => {
    const broken = parseReadings(bytes('{"meters":[{"id":"M",}]}'));
    expect(broken).toMatchObject({ ok: false, syntax: true });
    const escaped = parseReadings(bytes('{"meters":[{"id":"M\\u00e9\\"x","registers":[]}]}'));
    expect(escaped.ok).toBe(true);
    const trailing = parseReadings(bytes('{"meters":[]} x'));
    expect(trailing).toMatchObject({ ok: false, syntax: true });
    const badUtf8 = parseReadings(Buffer.from([0x7b, 0x22, 0x6d, 0x65, 0x74, 0x65, 0x72, 0x73, 0x22, 0x3a, 0x5b, 0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d, 0x5d, 0x7d]));
    expect(badUtf8.ok).toBe(false);
  });
});

describe('binary COPY encoding', () => {
  it('writes fixed-size rows and fills register ids per series', () => {
    const ts = Float64Array.from([Date.UTC(2000, 0, 1), Date.UTC(2024, 0, 1), Date.UTC(1990, 0, 1)]);
    const copy = encodeCopy(ts, Float64Array.from([1.5, -2, 3]), Int32Array.from([900, 60, 1]), Date.UTC(2024, 0, 2));
    expect(copy.length).toBe(COPY_HEADER.length + 3 * ROW_BYTES + 2);
    fillRegisterIds(copy, Int32Array.from([0, 2, 3]), [7, 9]);
    const row = (i: number) => COPY_HEADER.length + i * ROW_BYTES;
    expect(copy.readInt16BE(row(0))).toBe(5);
    expect([copy.readInt32BE(row(0) + 6), copy.readInt32BE(row(1) + 6), copy.readInt32BE(row(2) + 6)]).toEqual([7, 7, 9]);
    expect(copy.readBigInt64BE(row(0) + 14)).toBe(0n);
    expect(copy.readBigInt64BE(row(1) + 14)).toBe(BigInt(Date.UTC(2024, 0, 1) - Date.UTC(2000, 0, 1)) * 1000n);
    expect(copy.readBigInt64BE(row(2) + 14)).toBe(BigInt(Date.UTC(1990, 0, 1) - Date.UTC(2000, 0, 1)) * 1000n);
    expect(copy.readDoubleBE(row(1) + 26)).toBe(-2);
    expect(copy.readInt16BE(copy.length - 2)).toBe(-1);
  });
});
