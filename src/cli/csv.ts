// CSV (RFC 4180) at the byte level, for the import: records are found in a stream of chunks
// without turning the file into strings, fields are located as byte ranges, and only the fields
// that need to be strings (ids) become strings. Records may span lines (a newline inside a quoted
// field); line numbers are physical lines of the file, counted from 1, so a reject file points
// at what an editor shows. Also the writing side: quoting a field for the reject file and the export.

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;

/** A record longer than this is refused: a missing closing quote would otherwise swallow the rest of the file. */
export const MAX_RECORD_BYTES = 1 << 20;

export class CsvFormatError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

/**
 * Finds the records of a byte stream. `feed` a chunk, then call `next()` until it returns false
 * (it needs the next chunk); after the last chunk call `finish()` and `next()` once more for a last
 * record without a final newline. The current record is `buf[start, end)` without its line break,
 * starting on physical line `line`.
 */
export class RecordSplitter {
  /** The buffered bytes: the unfinished record carried over, then the latest chunk. */
  buf: Buffer = Buffer.alloc(0);
  start = 0;
  end = 0;
  line = 0;
  /** Whether the current record holds a `"` at all (else fields are split without quote handling). */
  quoted = false;
  private pos = 0;
  private nextLine = 1;
  /** Position of the next `"` at or after `pos` (buf.length when none): lines without one take the fast path. */
  private nextQuote = 0;
  private finished = false;
  /** Reused for every chunk, so reading allocates nothing per chunk (`buf` is a view of it). */
  private work = Buffer.allocUnsafe(0);

  /** Takes a chunk; its bytes are copied, so the caller may reuse it once this returns. */
  feed(chunk: Buffer): void {
    const rest = this.buf.length - this.pos;
    if (rest > MAX_RECORD_BYTES) throw new CsvFormatError(this.nextLine, `a record is longer than ${MAX_RECORD_BYTES} bytes (a quoted field without its closing quote?)`);
    const needed = rest + chunk.length;
    if (needed > this.work.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, 2 * this.work.length));
      this.buf.copy(grown, 0, this.pos);
      this.work = grown;
    } else if (rest > 0) {
      // Only the unfinished record is carried over; everything before it has been handed out.
      this.work.copy(this.work, 0, this.pos, this.buf.length); // buf is a view of work from 0; copy() handles the overlap
    }
    chunk.copy(this.work, rest);
    this.buf = this.work.subarray(0, needed);
    this.pos = 0;
    this.nextQuote = this.findQuote(0);
  }

  finish(): void {
    this.finished = true;
  }

  private findQuote(from: number): number {
    const at = this.buf.indexOf(QUOTE, from);
    return at === -1 ? this.buf.length : at;
  }

  /** Advances to the next record; false when the buffered bytes hold no complete record. */
  next(): boolean {
    const buf = this.buf;
    const from = this.pos;
    if (from >= buf.length) return false;
    let newline = buf.indexOf(LF, from);
    let lines = 1;
    const quoted = this.nextQuote < (newline === -1 ? buf.length : newline);
    if (quoted) {
      // Quotes in this record: a newline inside a quoted field does not end it.
      let inQuotes = false;
      let i = from;
      newline = -1;
      for (; i < buf.length; i += 1) {
        const c = buf[i]!;
        if (c === QUOTE) inQuotes = !inQuotes;
        else if (c === LF) {
          if (!inQuotes) {
            newline = i;
            break;
          }
          lines += 1;
        }
      }
      // Without a newline the record is incomplete: nextQuote stays at its quote for the next try.
      if (newline !== -1) this.nextQuote = this.findQuote(newline);
    }
    if (newline === -1) {
      if (!this.finished) return false;
      newline = buf.length;
    }
    let end = newline;
    if (end > from && buf[end - 1] === CR) end -= 1;
    this.start = from;
    this.end = end;
    this.quoted = quoted;
    this.line = this.nextLine;
    this.nextLine += lines;
    this.pos = newline + 1;
    if (this.nextQuote < this.pos) this.nextQuote = this.findQuote(this.pos);
    return true;
  }
}

/** Field byte ranges of one record; `escaped[i]` when field i held `""` (the value needs unescaping). */
export class Fields {
  count = 0;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly escaped: Uint8Array;

  constructor(readonly max: number) {
    this.starts = new Int32Array(max);
    this.ends = new Int32Array(max);
    this.escaped = new Uint8Array(max);
  }

  /** Splits buf[start, end) at commas outside quotes (`quoted`: the record holds a `"` at all).
   * Returns an error message for bad quoting; more than `max` fields report count = max + 1. */
  split(buf: Buffer, start: number, end: number, quoted: boolean): string | undefined {
    this.count = 0;
    let fieldStart = start;
    if (!quoted) {
      // The common case: no quotes anywhere in the record.
      for (let i = start; i < end; i += 1) {
        if (buf[i] !== COMMA) continue;
        if (!this.add(fieldStart, i, 0)) return undefined;
        fieldStart = i + 1;
      }
      this.add(fieldStart, end, 0);
      return undefined;
    }
    let i = start;
    while (true) {
      const k = this.count + 1;
      if (i < end && buf[i] === QUOTE) {
        let escaped = 0;
        let j = i + 1;
        while (true) {
          if (j >= end) return `field ${k}: a quoted field has no closing quote`;
          if (buf[j] === QUOTE) {
            if (j + 1 < end && buf[j + 1] === QUOTE) {
              escaped = 1;
              j += 2;
              continue;
            }
            break;
          }
          j += 1;
        }
        if (j + 1 < end && buf[j + 1] !== COMMA) return `field ${k}: characters after the closing quote`;
        if (!this.add(i + 1, j, escaped)) return undefined;
        i = j + 1;
      } else {
        let j = i;
        while (j < end && buf[j] !== COMMA) {
          if (buf[j] === QUOTE) return `field ${k}: a quote inside an unquoted field`;
          j += 1;
        }
        if (!this.add(i, j, 0)) return undefined;
        i = j;
      }
      if (i >= end) return undefined;
      i += 1; // the comma
      if (i === end) {
        this.add(end, end, 0); // a trailing comma: one more, empty field
        return undefined;
      }
    }
  }

  /** Appends a field; false once there are more than `max` (the count says max + 1, the rest is ignored). */
  private add(start: number, end: number, escaped: number): boolean {
    const k = this.count;
    if (k === this.max) {
      this.count = k + 1;
      return false;
    }
    this.starts[k] = start;
    this.ends[k] = end;
    this.escaped[k] = escaped;
    this.count = k + 1;
    return true;
  }

  text(buf: Buffer, k: number): string {
    const s = buf.toString('utf8', this.starts[k]!, this.ends[k]!);
    return this.escaped[k] ? s.replaceAll('""', '"') : s;
  }
}

/** A field for a CSV line: quoted when it holds a comma, quote, CR or LF (RFC 4180). */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}
