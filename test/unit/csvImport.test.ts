// The import's byte-level CSV reading: records across chunk boundaries, quotes, line numbers,
// the header, numbers, and the progress line.
import { describe, expect, it } from 'vitest';
import { CsvFormatError, Fields, MAX_RECORD_BYTES, RecordSplitter, csvField } from '../../src/cli/csv.ts';
import { Progress } from '../../src/cli/progress.ts';
import { COLUMNS, parseDecimal, readHeader, readReading, type ColumnIndex } from '../../src/cli/readingRow.ts';

interface Rec {
  line: number;
  fields: string[] | string;
}

/** Splits `text` fed in chunks of `size` bytes into records and their fields. */
function records(text: string, size: number): Rec[] {
  const bytes = Buffer.from(text);
  const splitter = new RecordSplitter();
  const fields = new Fields(6);
  const out: Rec[] = [];
  const take = () => {
    while (splitter.next()) {
      const problem = fields.split(splitter.buf, splitter.start, splitter.end, splitter.quoted);
      out.push({ line: splitter.line, fields: problem ?? Array.from({ length: fields.count }, (_, k) => fields.text(splitter.buf, k)) });
    }
  };
  for (let at = 0; at < bytes.length; at += size) {
    // A fresh copy each time: the splitter must not keep references to a chunk.
    splitter.feed(Buffer.from(bytes.subarray(at, at + size)));
    take();
  }
  splitter.finish();
  take();
  return out;
}

describe('RecordSplitter and Fields', () => {
  const text = 'a,b,c\r\n"x,1","say ""hi""",3\n\n"multi\nline",z,\n,,\nlast,row,end';
  const expected: Rec[] = [
    { line: 1, fields: ['a', 'b', 'c'] },
    { line: 2, fields: ['x,1', 'say "hi"', '3'] },
    { line: 3, fields: [''] },
    { line: 4, fields: ['multi\nline', 'z', ''] },
    { line: 6, fields: ['', '', ''] },
    { line: 7, fields: ['last', 'row', 'end'] },
  ];

  it('finds the same records and physical line numbers whatever the chunk size', () => {
    for (const size of [1, 2, 3, 5, 7, 64, 4096]) expect(records(text, size), `chunks of ${size}`).toEqual(expected);
  });

  it('agrees with a plain reference parser on random well-formed documents, for any chunking', () => {
    // A seeded generator: the same documents every run.
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const pick = <T,>(items: T[]) => items[Math.floor(random() * items.length)]!;
    for (let doc = 0; doc < 200; doc += 1) {
      const rows: string[][] = Array.from({ length: 1 + Math.floor(random() * 6) }, () =>
        Array.from({ length: 1 + Math.floor(random() * 4) }, () => Array.from({ length: Math.floor(random() * 5) }, () => pick(['a', 'b', ',', '"', '\n', '\r\n', 'é', ' '])).join('')),
      );
      // A row of one empty field would be an empty line (skipped by the import): quote it.
      const quote = (f: string, only: boolean) => /[",\r\n]/.test(f) || (only && f === '') || random() < 0.2;
      const text = rows.map((fields) => fields.map((f) => (quote(f, fields.length === 1) ? `"${f.replaceAll('"', '""')}"` : f)).join(',')).join(pick(['\n', '\r\n']));
      // Reference line numbers: a record starts after each newline outside quotes.
      const lineOf = [1];
      let line = 1;
      let inQuotes = false;
      for (const ch of text) {
        if (ch === '"') inQuotes = !inQuotes;
        else if (ch === '\n') {
          line += 1;
          if (!inQuotes) lineOf.push(line);
        }
      }
      const expected = rows.map((fields, k) => ({ line: lineOf[k]!, fields }));
      for (const size of [1, 3, 16, 1024]) {
        const got = records(text, size);
        expect(got, `${JSON.stringify(text)} in chunks of ${size}`).toEqual(expected);
      }
    }
  });

  it('reports bad quoting per record and goes on', () => {
    // The quote in line 1 opens a quoted section that the quote of line 2 closes: one record.
    expect(records('a"b,c\n"open,d\n"x"y,z\nok,1\n', 4)).toEqual([
      { line: 1, fields: 'field 1: a quote inside an unquoted field' },
      { line: 3, fields: 'field 1: characters after the closing quote' },
      { line: 4, fields: ['ok', '1'] },
    ]);
    // An unclosed quote takes the rest of the file into one record, which then fails.
    expect(records('ok,1\n"open,2\nmore,3\n', 3)).toEqual([
      { line: 1, fields: ['ok', '1'] },
      { line: 2, fields: 'field 1: a quoted field has no closing quote' },
    ]);
  });

  it('counts more fields than expected as max + 1', () => {
    const fields = new Fields(2);
    const buf = Buffer.from('a,b,c,d');
    expect(fields.split(buf, 0, buf.length, false)).toBeUndefined();
    expect(fields.count).toBe(3);
  });

  it('refuses a record longer than the limit instead of buffering the rest of the file', () => {
    const splitter = new RecordSplitter();
    const chunk = Buffer.alloc(256 * 1024, 0x61);
    chunk[0] = 0x22; // an opening quote never closed
    expect(() => {
      for (let i = 0; i < 8; i += 1) {
        splitter.feed(chunk);
        while (splitter.next());
      }
    }).toThrow(CsvFormatError);
    expect(MAX_RECORD_BYTES).toBe(1 << 20);
  });

  it('quotes fields for output only when needed', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
  });
});

describe('readHeader', () => {
  it('accepts the five columns in any order and case, with a byte order mark', () => {
    expect(readHeader(['\uFEFFmeterId', 'registerId', 'timestamp', 'value', 'resolution'])).toEqual({ meterId: 0, registerId: 1, timestamp: 2, value: 3, resolution: 4 });
    expect(readHeader(['VALUE', 'timestamp', 'resolution', 'registerid', 'meterid'])).toEqual({ meterId: 4, registerId: 3, timestamp: 1, value: 0, resolution: 2 });
  });

  it('names unknown, missing and repeated columns', () => {
    const message = readHeader(['meter', 'registerId', 'timestamp', 'value', 'value']) as string;
    expect(message).toContain('unknown column "meter"');
    expect(message).toContain('column value appears twice');
    expect(message).toContain('column meterId is missing');
    expect(message).toContain('column resolution is missing');
  });
});

describe('parseDecimal', () => {
  const parse = (s: string) => parseDecimal(Buffer.from(s), 0, Buffer.byteLength(s));

  it('gives the double Number() gives', () => {
    for (const s of ['0', '-0.5', '12', '0.1', '0.3', '1234.5678', '.5', '5.', '+2', '1e3', '-2.5E-3', '123456789012345678', '0.000000000000000000000001', '9007199254740993', '1.7976931348623157e308']) {
      expect(parse(s), s).toBe(Number(s));
    }
  });

  it('is NaN for anything else', () => {
    for (const s of ['', '-', '.', 'abc', '1,5', '1e', '1e+', '0x10', '1_000', ' 1', '1 ', '1.2.3', 'NaN', 'Infinity']) expect(parse(s), s).toBeNaN();
    expect(parse('1e999')).toBe(Infinity);
  });
});

describe('readReading', () => {
  const columns: ColumnIndex = { meterId: 0, registerId: 1, timestamp: 2, value: 3, resolution: 4 };
  const read = (line: string) => {
    const buf = Buffer.from(line);
    const fields = new Fields(COLUMNS.length);
    fields.split(buf, 0, buf.length, line.includes('"'));
    const out = { timestamp: 0, value: 0, resolution: 0 };
    return { problem: readReading(buf, fields, columns, out), out };
  };

  it('reads a valid row', () => {
    expect(read('M,R,2024-02-29T23:45:00.125Z,-1.5,900')).toEqual({ problem: undefined, out: { timestamp: Date.UTC(2024, 1, 29, 23, 45, 0, 125), value: -1.5, resolution: 900 } });
  });

  it('lists every problem of a row', () => {
    expect(read(',R,2023-02-29T00:00:00Z,NaN,0').problem).toBe(
      'meterId must be 1 to 200 characters; timestamp is not a valid date and time; value must be a finite number; resolution must be a positive integer number of seconds up to 31622400',
    );
    expect(read(`M,${'r'.repeat(201)},2024-01-01T00:00:00Z,1,900`).problem).toBe('registerId must be 1 to 200 characters');
    expect(read(`M,${'é'.repeat(150)},2024-01-01T00:00:00Z,1,900`).problem).toBeUndefined(); // 300 bytes, 150 characters
  });
});

describe('Progress', () => {
  const sink = (isTTY: boolean) => {
    const writes: string[] = [];
    return { writes, stream: { isTTY, columns: 200, write: (s: string) => writes.push(s) } as unknown as NodeJS.WriteStream };
  };

  it('redraws one line on a terminal and clears it at the end', () => {
    const { writes, stream } = sink(true);
    const progress = new Progress(stream, true, 5000);
    (progress as unknown as { lastDraw: number }).lastDraw = -Infinity;
    progress.update({ rows: 1000, rejected: 2, bytesRead: 250, totalBytes: 1000 });
    progress.done();
    expect(writes[0]).toMatch(/^\r\[######-{18}\] {2}25\.0% {2}1,000 rows, 2 rejected {2}[\d,]+ rows\/s {2}ETA \d+:\d\d\x1b\[K$/);
    expect(writes[1]).toBe('\r\x1b[K');
  });

  it('writes plain lines elsewhere, at most once per interval', () => {
    const { writes, stream } = sink(false);
    const progress = new Progress(stream, false, 60_000);
    (progress as unknown as { lastDraw: number }).lastDraw = -Infinity;
    progress.update({ rows: 10, rejected: 0, bytesRead: 3 * 1024 * 1024, totalBytes: 4 * 1024 * 1024 });
    progress.update({ rows: 20, rejected: 0, bytesRead: 4 * 1024 * 1024, totalBytes: 4 * 1024 * 1024 });
    progress.done();
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/^progress: 75\.0% \(3\.0 MiB of 4\.0 MiB\), 10 rows, [\d,]+ rows\/s, ETA \d+:\d\d\n$/);
  });
});
