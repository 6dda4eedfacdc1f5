// A byte cursor over a JSON document, with the primitives the reading-batch parser needs.
// Working on bytes rather than on JSON.parse's object graph is what makes a million readings
// cheap: no intermediate objects, numbers and timestamps decoded in place. Measured on a
// 73 MB body of 1M readings: JSON.parse + walk + Date.parse ≈ 1.0–1.4 s; the whole worker task
// on this cursor (parse, validate, group, encode COPY) is timed by bench/ingest.ts, figures and
// profile in docs/benchmarks.md.

export class JsonSyntaxError {
  constructor(
    readonly message: string,
    readonly offset: number,
  ) {}
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

export class JsonCursor {
  pos = 0;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });

  constructor(readonly bytes: Uint8Array) {}

  fail(message: string, at = this.pos): never {
    throw new JsonSyntaxError(message, at);
  }

  skipWs(): void {
    const b = this.bytes;
    let p = this.pos;
    while (p < b.length) {
      const c = b[p]!;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p += 1;
      else break;
    }
    this.pos = p;
  }

  /** Next non-whitespace byte (not consumed), or -1 at the end. */
  peek(): number {
    this.skipWs();
    return this.pos < this.bytes.length ? this.bytes[this.pos]! : -1;
  }

  expect(byte: number, what: string): void {
    if (this.peek() !== byte) this.fail(`expected ${what}`);
    this.pos += 1;
  }

  /** After a value inside a container: true if a comma follows (consumed), false at `close`. */
  next(close: number, what: string): boolean {
    const c = this.peek();
    if (c === 0x2c) {
      this.pos += 1;
      return true;
    }
    if (c === close) {
      this.pos += 1;
      return false;
    }
    return this.fail(`expected ',' or ${what}`);
  }

  /** Bounds of the last string token scanned (excluding quotes): fields, not a returned object,
   * so scanning a million timestamps allocates nothing. */
  strStart = 0;
  strEnd = 0;

  /** Reads a string token into strStart/strEnd; returns whether it has escapes. The closing quote
   * is found with indexOf (memchr) instead of a byte loop: strings are most of a reading batch. */
  private scanString(): boolean {
    if (this.peek() !== QUOTE) this.fail('expected a string');
    const b = this.bytes;
    const start = this.pos + 1;
    let p = b.indexOf(QUOTE, start);
    if (p === -1) this.fail('unterminated string', start - 1);
    let escaped = false;
    let special = false;
    for (let i = start; i < p; i += 1) {
      const c = b[i]!;
      if (c === BACKSLASH || c < 0x20) {
        special = true;
        break;
      }
    }
    if (special) {
      // Rare: walk escapes properly to find the real closing quote.
      escaped = true;
      p = start;
      while (true) {
        if (p >= b.length) this.fail('unterminated string', start - 1);
        const c = b[p]!;
        if (c === QUOTE) break;
        if (c < 0x20) this.fail('control character in string', p);
        if (c === BACKSLASH) escaped = true;
        p += c === BACKSLASH ? 2 : 1;
      }
    }
    this.pos = p + 1;
    this.strStart = start;
    this.strEnd = p;
    return escaped;
  }

  string(): string {
    const escaped = this.scanString();
    const start = this.strStart;
    const end = this.strEnd;
    let text: string;
    try {
      text = this.decoder.decode(this.bytes.subarray(start, end));
    } catch {
      return this.fail('invalid UTF-8 in string', start);
    }
    if (!escaped) return text;
    try {
      return JSON.parse(`"${text}"`) as string;
    } catch {
      return this.fail('invalid escape in string', start);
    }
  }

  /** Compares the next string token with an ASCII key without allocating; consumes it. */
  keyIs(key: string): boolean {
    const b = this.bytes;
    const p = this.pos;
    if (b[p] !== QUOTE || b[p + key.length + 1] !== QUOTE) return false;
    for (let i = 0; i < key.length; i += 1) if (b[p + 1 + i] !== key.charCodeAt(i)) return false;
    this.pos = p + key.length + 2;
    return true;
  }

  /** Scans a string token for its raw bytes (strStart/strEnd); false when it has escapes. */
  rawString(): boolean {
    return !this.scanString();
  }

  /** A JSON number. Plain decimals with up to 15 significant digits take an exact fast path
   * (integer mantissa divided by an exact power of ten rounds once, like parsing would). */
  number(): number {
    this.skipWs();
    const b = this.bytes;
    const start = this.pos;
    let p = start;
    let negative = false;
    if (b[p] === 0x2d) {
      negative = true;
      p += 1;
    }
    let mantissa = 0;
    let digits = 0;
    let fraction = 0;
    if (b[p] === 0x30) {
      p += 1;
    } else if (b[p]! >= 0x31 && b[p]! <= 0x39) {
      while (p < b.length && b[p]! >= 0x30 && b[p]! <= 0x39) {
        mantissa = mantissa * 10 + (b[p]! - 0x30);
        digits += 1;
        p += 1;
      }
    } else {
      return this.fail('expected a number', start);
    }
    if (b[p] === 0x2e) {
      p += 1;
      const fracStart = p;
      while (p < b.length && b[p]! >= 0x30 && b[p]! <= 0x39) {
        mantissa = mantissa * 10 + (b[p]! - 0x30);
        digits += 1;
        p += 1;
      }
      fraction = p - fracStart;
      if (fraction === 0) this.fail('expected digits after the decimal point', p);
    }
    let exponentPresent = false;
    if (b[p] === 0x65 || b[p] === 0x45) {
      exponentPresent = true;
      p += 1;
      if (b[p] === 0x2b || b[p] === 0x2d) p += 1;
      const expStart = p;
      while (p < b.length && b[p]! >= 0x30 && b[p]! <= 0x39) p += 1;
      if (p === expStart) this.fail('expected exponent digits', p);
    }
    this.pos = p;
    if (!exponentPresent && digits <= 15 && fraction <= 22) {
      const value = fraction === 0 ? mantissa : mantissa / POW10[fraction]!;
      return negative ? -value : value;
    }
    let text = '';
    for (let i = start; i < p; i += 1) text += String.fromCharCode(b[i]!);
    return Number(text);
  }

  /** Skips any JSON value (for error recovery after an unknown key). */
  skipValue(depth = 0): void {
    if (depth > 256) this.fail('document nested too deeply');
    const c = this.peek();
    if (c === QUOTE) {
      this.scanString();
    } else if (c === 0x7b) {
      this.pos += 1;
      if (this.peek() === 0x7d) {
        this.pos += 1;
        return;
      }
      do {
        this.scanString();
        this.expect(0x3a, "':'");
        this.skipValue(depth + 1);
      } while (this.next(0x7d, "'}'"));
    } else if (c === 0x5b) {
      this.pos += 1;
      if (this.peek() === 0x5d) {
        this.pos += 1;
        return;
      }
      do this.skipValue(depth + 1);
      while (this.next(0x5d, "']'"));
    } else if (c === 0x74) this.literal('true');
    else if (c === 0x66) this.literal('false');
    else if (c === 0x6e) this.literal('null');
    else this.number();
  }

  literal(word: string): void {
    for (let i = 0; i < word.length; i += 1) if (this.bytes[this.pos + i] !== word.charCodeAt(i)) this.fail(`expected ${word}`);
    this.pos += word.length;
  }

  /** The kind of the next value, for "must be a string" style messages. */
  kindOfNext(): string {
    const c = this.peek();
    if (c === QUOTE) return 'string';
    if (c === 0x7b) return 'object';
    if (c === 0x5b) return 'array';
    if (c === 0x74 || c === 0x66) return 'boolean';
    if (c === 0x6e) return 'null';
    return 'number';
  }
}
