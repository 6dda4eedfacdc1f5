// The QuestDB read path takes fields from the bytes of each DataRow (src/store/timeseries/
// questdb/rawRows.ts): integers from their digits, decimals through a latin1 slice. Each must
// read a field exactly as Number() read pg's text of it before (the reply bytes depend on it).
import { describe, expect, it } from 'vitest';
import { rawLong, rawNumber, type RawRow } from '../../src/store/timeseries/questdb/rawRows.ts';

/** A DataRow's fields laid out as the parser finds them (null: SQL NULL). */
function rowOf(fields: (string | null)[]): RawRow {
  const parts: Buffer[] = [Buffer.from('xx')];
  const start = new Int32Array(16);
  const length = new Int32Array(16);
  let at = 2;
  fields.forEach((f, i) => {
    const bytes = f === null ? Buffer.alloc(0) : Buffer.from(f, 'latin1');
    start[i] = at + 4;
    length[i] = f === null ? -1 : bytes.length;
    const size = Buffer.alloc(4);
    size.writeInt32BE(length[i]!);
    parts.push(size, bytes);
    at += 4 + bytes.length;
  });
  return { bytes: Buffer.concat(parts), count: fields.length, start, length };
}

describe('QuestDB raw row fields', () => {
  it('reads longs as Number() read their text', () => {
    const texts = ['0', '1672531200000000', '-1', '-1672531200000000', '9007199254740991', '900', '12a', '-', '', null];
    const row = rowOf(texts);
    texts.forEach((t, i) => expect(rawLong(row, i), String(t)).toBe(t === '12a' || t === '-' ? NaN : Number(t)));
  });

  it('reads decimals as Number() read their text', () => {
    const texts = ['0.0', '12.5', '-0.30000000000000004', '1.0E-5', '1.7976931348623157E308', 'NaN', 'Infinity', '-Infinity', '123456789.123', null];
    for (let k = 0; k < 1000; k += 1) texts.push(String((Math.random() - 0.5) * 10 ** ((k % 40) - 20)));
    // Plain decimals of up to 15 digits (read from their digits) and just past (read by Number()),
    // as QuestDB writes averages of meter readings; and texts that are not plain decimals.
    texts.push('-0.0', '0', '-0', '.5', '5.', '1.', '-.', '.', '-', '1.2.3', '12a', '999999999999999', '9999999999999999', '0.000000000000001', '0.1234567890123456', '123456789012345.0');
    for (let k = 0; k < 20_000; k += 1) {
      const digits = 1 + (k % 17);
      const whole = Math.floor(Math.random() * 10 ** Math.min(digits, 15));
      const text = String(whole).padStart(digits, '0');
      const at = Math.floor(Math.random() * (text.length + 1));
      texts.push(`${k % 3 === 0 ? '-' : ''}${text.slice(0, at) || '0'}.${text.slice(at) || '0'}`);
    }
    for (let k = 0; k < 20_000; k += 1) texts.push(String(Math.round(Math.random() * 4e8) / 4000));
    const row = { ...rowOf(texts.slice(0, 10)) };
    texts.slice(0, 10).forEach((t, i) => expect(rawNumber(row, i), String(t)).toBe(Number(t)));
    for (let k = 10; k < texts.length; k += 16) {
      const chunk = texts.slice(k, k + 16);
      const r = rowOf(chunk);
      chunk.forEach((t, i) => expect(rawNumber(r, i)).toBe(Number(t)));
    }
  });
});
