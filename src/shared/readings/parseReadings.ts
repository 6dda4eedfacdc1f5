// Parses and validates a POST /api/readings body
//   {"meters":[{"id":"M1","registers":[{"id":"R1","values":[{"timestamp":"…Z","value":1.5,"resolution":900}]}]}]}
// straight from its bytes into columns grouped by (meter, register) series, sorted by time with
// duplicate timestamps resolved (the last one in the request wins). Any bad value is reported with
// its path (`meters[0].registers[2].values[17].timestamp`); the caller stores nothing then.
import { daysFromCivil } from '../virtual/calendar.ts';
import { isStorableText, UNSTORABLE_TEXT } from '../storableText.ts';
import { JsonCursor, JsonSyntaxError } from './jsonCursor.ts';

export interface FieldError {
  path: string;
  message: string;
}

export interface ParsedSeries {
  meterId: string;
  registerId: string;
  /** Path of the first occurrence, for error messages about the series. */
  meterPath: string;
  registerPath: string;
  first: number;
  last: number;
}

export interface ParsedBatch {
  series: ParsedSeries[];
  /** Rows of series i are offsets[i] .. offsets[i+1]-1, sorted by time, unique timestamps. */
  offsets: Int32Array;
  timestamps: Float64Array;
  values: Float64Array;
  resolutions: Int32Array;
  /** First instants (UTC ms) of the calendar months the rows fall in. */
  months: number[];
}

export type ParseOutcome = { ok: true; batch: ParsedBatch } | { ok: false; errors: FieldError[]; syntax: boolean };

export const MAX_ERRORS = 20;
export const MAX_RESOLUTION = 366 * 86400;
/** Meter and register externalIds: 1 to this many characters (src/meter/schemas.ts). */
export const MAX_ID_LENGTH = 200;

/** Columns for rows (Rows.over): e.g. in memory lent by the caller. */
export interface RowColumns {
  timestamps: Float64Array;
  values: Float64Array;
  resolutions: Int32Array;
  series: Int32Array;
}

/** Bytes a valid reading takes at least: `{"timestamp":"…20…","value":0,"resolution":1}` and a
 * comma. A body of b bytes holds at most b / MIN_READING_BYTES readings. */
export const MIN_READING_BYTES = 61;

export class Rows {
  size = 0;
  timestamps = new Float64Array(1024);
  values = new Float64Array(1024);
  resolutions = new Int32Array(1024);
  series = new Int32Array(1024);

  constructor(expected: number) {
    if (expected >= 0) this.grow(Math.max(1024, expected));
  }

  /** Rows written into the given columns (new ones, copied, only if they fill up). */
  static over(columns: RowColumns): Rows {
    const rows = new Rows(-1);
    Object.assign(rows, { timestamps: columns.timestamps, values: columns.values, resolutions: columns.resolutions, series: columns.series });
    return rows;
  }

  private grow(capacity: number): void {
    const t = new Float64Array(capacity);
    t.set(this.timestamps.subarray(0, this.size));
    const v = new Float64Array(capacity);
    v.set(this.values.subarray(0, this.size));
    const r = new Int32Array(capacity);
    r.set(this.resolutions.subarray(0, this.size));
    const s = new Int32Array(capacity);
    s.set(this.series.subarray(0, this.size));
    this.timestamps = t;
    this.values = v;
    this.resolutions = r;
    this.series = s;
  }

  push(series: number, ts: number, value: number, resolution: number): void {
    if (this.size === this.timestamps.length) this.grow(this.size * 2);
    const i = this.size;
    this.series[i] = series;
    this.timestamps[i] = ts;
    this.values[i] = value;
    this.resolutions[i] = resolution;
    this.size = i + 1;
  }
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const BAD_TIMESTAMP = 'must be an ISO 8601 UTC date-time such as 2024-01-01T00:00:00Z';
const DIGIT_POSITIONS = new Uint8Array([0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]);

/** `YYYY-MM-DDTHH:MM:SS(.fraction)?Z` in bytes → epoch ms; a string message when invalid. */
export function parseTimestampBytes(b: Uint8Array, start: number, end: number): number | string {
  const len = end - start;
  if (len < 20 || b[end - 1] !== 0x5a) {
    if (len >= 19 && (b[end - 6] === 0x2b || b[end - 6] === 0x2d)) return 'must be in UTC (end with Z), not carry an offset';
    return BAD_TIMESTAMP;
  }
  for (let k = 0; k < DIGIT_POSITIONS.length; k += 1) {
    const d = b[start + DIGIT_POSITIONS[k]!]! - 0x30;
    if (d < 0 || d > 9) return BAD_TIMESTAMP;
  }
  if (b[start + 4] !== 0x2d || b[start + 7] !== 0x2d || b[start + 10] !== 0x54 || b[start + 13] !== 0x3a || b[start + 16] !== 0x3a) {
    return BAD_TIMESTAMP;
  }
  const year = (b[start]! - 0x30) * 1000 + (b[start + 1]! - 0x30) * 100 + (b[start + 2]! - 0x30) * 10 + (b[start + 3]! - 0x30);
  const month = (b[start + 5]! - 0x30) * 10 + (b[start + 6]! - 0x30);
  const day = (b[start + 8]! - 0x30) * 10 + (b[start + 9]! - 0x30);
  const hour = (b[start + 11]! - 0x30) * 10 + (b[start + 12]! - 0x30);
  const minute = (b[start + 14]! - 0x30) * 10 + (b[start + 15]! - 0x30);
  const second = (b[start + 17]! - 0x30) * 10 + (b[start + 18]! - 0x30);
  let millis = 0;
  if (len > 20) {
    if (b[start + 19] !== 0x2e || len > 30 || len === 21) return BAD_TIMESTAMP;
    let scale = 100;
    for (let i = start + 20; i < end - 1; i += 1) {
      const d = b[i]! - 0x30;
      if (d < 0 || d > 9) return BAD_TIMESTAMP;
      millis += d * scale;
      scale /= 10;
    }
    millis = Math.floor(millis);
  }
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const monthDays = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  if (month < 1 || month > 12 || day < 1 || day > monthDays! || hour > 23 || minute > 59 || second > 59) return 'is not a valid date and time';
  return daysFromCivil(year, month, day) * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + millis;
}

interface Context {
  cursor: JsonCursor;
  rows: Rows;
  errors: FieldError[];
  seriesIndex: Map<string, number>;
  series: ParsedSeries[];
}

function addError(ctx: Context, path: string, message: string): void {
  if (ctx.errors.length < MAX_ERRORS) ctx.errors.push({ path, message });
}

/** Paths are built only when an error needs one. No closure per value either: a closure created
 * per reading showed up at ~30% of the parse under tsx (esbuild's keepNames wraps each one). */
function valuePath(registerPath: string, index: number, field: string): string {
  return `${registerPath}.values[${index}]${field}`;
}

function parseValue(ctx: Context, series: number, registerPath: string, index: number): void {
  const c = ctx.cursor;
  if (c.peek() !== 0x7b) {
    addError(ctx, valuePath(registerPath, index, ''), `must be an object, got ${c.kindOfNext()}`);
    c.skipValue();
    return;
  }
  c.pos += 1;
  let ts: number | undefined;
  let value: number | undefined;
  let resolution: number | undefined;
  let bad = false;
  if (c.peek() !== 0x7d) {
    do {
      c.peek();
      if (c.keyIs('timestamp')) {
        c.expect(0x3a, "':'");
        if (c.peek() !== 0x22) {
          addError(ctx, valuePath(registerPath, index, '.timestamp'), `must be a string, got ${c.kindOfNext()}`);
          c.skipValue();
          bad = true;
          continue;
        }
        const parsed = c.rawString() ? parseTimestampBytes(c.bytes, c.strStart, c.strEnd) : BAD_TIMESTAMP;
        if (typeof parsed === 'string') {
          addError(ctx, valuePath(registerPath, index, '.timestamp'), parsed);
          bad = true;
        } else ts = parsed;
      } else if (c.keyIs('value')) {
        c.expect(0x3a, "':'");
        const kind = c.kindOfNext();
        if (kind !== 'number') {
          addError(ctx, valuePath(registerPath, index, '.value'), `must be a number, got ${kind}`);
          c.skipValue();
          bad = true;
          continue;
        }
        value = c.number();
        if (!Number.isFinite(value)) {
          addError(ctx, valuePath(registerPath, index, '.value'), 'must be a finite number');
          bad = true;
        }
      } else if (c.keyIs('resolution')) {
        c.expect(0x3a, "':'");
        const kind = c.kindOfNext();
        if (kind !== 'number') {
          addError(ctx, valuePath(registerPath, index, '.resolution'), `must be a positive integer (seconds), got ${kind}`);
          c.skipValue();
          bad = true;
          continue;
        }
        resolution = c.number();
        if (!Number.isInteger(resolution) || resolution < 1 || resolution > MAX_RESOLUTION) {
          addError(ctx, valuePath(registerPath, index, '.resolution'), `must be a positive integer number of seconds up to ${MAX_RESOLUTION}`);
          bad = true;
        }
      } else {
        const key = c.string();
        c.expect(0x3a, "':'");
        c.skipValue();
        addError(ctx, valuePath(registerPath, index, `.${key}`), 'is not a known property');
        bad = true;
      }
    } while (c.next(0x7d, "'}'"));
  } else c.pos += 1;
  if (ts === undefined && !bad) addError(ctx, valuePath(registerPath, index, '.timestamp'), 'is required');
  if (value === undefined && !bad) addError(ctx, valuePath(registerPath, index, '.value'), 'is required');
  if (resolution === undefined && !bad) addError(ctx, valuePath(registerPath, index, '.resolution'), 'is required');
  if (bad || ts === undefined || value === undefined || resolution === undefined) return;
  ctx.rows.push(series, ts, value, resolution);
}

function parseStringField(ctx: Context, path: string): string | undefined {
  const c = ctx.cursor;
  if (c.peek() !== 0x22) {
    addError(ctx, path, `must be a string, got ${c.kindOfNext()}`);
    c.skipValue();
    return undefined;
  }
  const s = c.string();
  if (s.length === 0 || s.length > MAX_ID_LENGTH) {
    addError(ctx, path, `must be 1 to ${MAX_ID_LENGTH} characters`);
    return undefined;
  }
  // Ids are looked up in text columns: U+0000 or an unpaired surrogate would fail there.
  if (!isStorableText(s)) {
    addError(ctx, path, UNSTORABLE_TEXT);
    return undefined;
  }
  return s;
}

/** Reads `[ item, item, … ]`, calling `item(index)` for each. */
function parseArray(ctx: Context, path: string, item: (index: number) => void): void {
  const c = ctx.cursor;
  if (c.peek() !== 0x5b) {
    addError(ctx, path, `must be an array, got ${c.kindOfNext()}`);
    c.skipValue();
    return;
  }
  c.pos += 1;
  if (c.peek() === 0x5d) {
    c.pos += 1;
    return;
  }
  let i = 0;
  do item(i++);
  while (c.next(0x5d, "']'"));
}

/** Reads `{ "key": value, … }`, dispatching known keys; unknown keys are errors. */
function parseObject(ctx: Context, path: string, fields: Record<string, () => void>, required: string[]): void {
  const c = ctx.cursor;
  if (c.peek() !== 0x7b) {
    addError(ctx, path, `must be an object, got ${c.kindOfNext()}`);
    c.skipValue();
    return;
  }
  c.pos += 1;
  const seen = new Set<string>();
  if (c.peek() !== 0x7d) {
    do {
      const key = c.string();
      c.expect(0x3a, "':'");
      const read = Object.hasOwn(fields, key) ? fields[key] : undefined;
      if (read) {
        seen.add(key);
        read();
      } else {
        c.skipValue();
        addError(ctx, path ? `${path}.${key}` : key, 'is not a known property');
      }
    } while (c.next(0x7d, "'}'"));
  } else c.pos += 1;
  for (const key of required) if (!seen.has(key)) addError(ctx, path ? `${path}.${key}` : key, 'is required');
}

function parseRegister(ctx: Context, meterId: string | undefined, meterPath: string, path: string): void {
  let registerId: string | undefined;
  let series = -1;
  // The register id may come after its values: rows get their series once the object is read.
  const startRow = ctx.rows.size;
  parseObject(
    ctx,
    path,
    {
      id: () => {
        registerId = parseStringField(ctx, `${path}.id`);
      },
      values: () => {
        parseArray(ctx, `${path}.values`, (i) => parseValue(ctx, -1, path, i));
      },
    },
    ['id', 'values'],
  );
  if (meterId === undefined || registerId === undefined) return;
  const key = `${meterId}\u0000${registerId}`;
  series = ctx.seriesIndex.get(key) ?? -1;
  if (series === -1) {
    series = ctx.series.length;
    ctx.seriesIndex.set(key, series);
    ctx.series.push({ meterId, registerId, meterPath, registerPath: `${path}.id`, first: 0, last: 0 });
  }
  // Assign the series to the rows this register produced.
  ctx.rows.series.fill(series, startRow, ctx.rows.size);
}

/** Whether rows are already grouped (each series' rows contiguous, series in order of first
 * appearance) with strictly increasing timestamps within a series: what a client sending one
 * register after another in time order posts, nearly always. */
function alreadyGrouped(rows: Rows, seriesCount: number): boolean {
  const { series, timestamps } = rows;
  const n = rows.size;
  if (n > 0 && series[0] !== 0) return false;
  for (let i = 1; i < n; i += 1) {
    const step = series[i]! - series[i - 1]!;
    if (step === 0 ? timestamps[i]! <= timestamps[i - 1]! : step !== 1) return false;
  }
  return n === 0 ? seriesCount === 0 : series[n - 1] === seriesCount - 1;
}

/** Groups rows by series (stable), sorts each series by time, keeps the last of equal timestamps.
 * `inPlace`: when the rows are already grouped and sorted, the columns returned are views of
 * `rows`' own arrays, not copies (for a caller that does not reuse `rows`; measured: the copy
 * was a quarter of parsing a 1M-reading body). */
export function group(rows: Rows, seriesCount: number, inPlace = false): Omit<ParsedBatch, 'series' | 'months'> & { kept: number } {
  const n = rows.size;
  if (inPlace && alreadyGrouped(rows, seriesCount)) {
    const offsets = new Int32Array(seriesCount + 1);
    for (let i = 1; i < n; i += 1) if (rows.series[i] !== rows.series[i - 1]) offsets[rows.series[i]!] = i;
    offsets[seriesCount] = n;
    return { offsets, timestamps: rows.timestamps.subarray(0, n), values: rows.values.subarray(0, n), resolutions: rows.resolutions.subarray(0, n), kept: n };
  }
  const counts = new Int32Array(seriesCount + 1);
  for (let i = 0; i < n; i += 1) counts[rows.series[i]! + 1]! += 1;
  for (let s = 0; s < seriesCount; s += 1) counts[s + 1]! += counts[s]!;
  const order = new Int32Array(n);
  const cursor = counts.slice(0, seriesCount);
  for (let i = 0; i < n; i += 1) order[cursor[rows.series[i]!]!++] = i;

  const timestamps = new Float64Array(n);
  const values = new Float64Array(n);
  const resolutions = new Int32Array(n);
  const offsets = new Int32Array(seriesCount + 1);
  let out = 0;
  for (let s = 0; s < seriesCount; s += 1) {
    offsets[s] = out;
    let idx = Array.from(order.subarray(counts[s]!, counts[s + 1]!));
    let sorted = true;
    for (let k = 1; k < idx.length; k += 1) if (rows.timestamps[idx[k]!]! <= rows.timestamps[idx[k - 1]!]!) sorted = false;
    if (!sorted) idx = idx.sort((a, b) => rows.timestamps[a]! - rows.timestamps[b]! || a - b);
    for (let k = 0; k < idx.length; k += 1) {
      const row = idx[k]!;
      // Equal timestamps are adjacent and in request order: the later one overwrites.
      if (out > offsets[s]! && timestamps[out - 1] === rows.timestamps[row]) out -= 1;
      timestamps[out] = rows.timestamps[row]!;
      values[out] = rows.values[row]!;
      resolutions[out] = rows.resolutions[row]!;
      out += 1;
    }
  }
  offsets[seriesCount] = out;
  return { offsets, timestamps: timestamps.subarray(0, out), values: values.subarray(0, out), resolutions: resolutions.subarray(0, out), kept: out };
}

export function monthsOf(timestamps: Float64Array): number[] {
  const months = new Set<number>();
  let lastMonthStart = NaN;
  let lastMonthEnd = NaN;
  for (let i = 0; i < timestamps.length; i += 1) {
    const t = timestamps[i]!;
    if (t >= lastMonthStart && t < lastMonthEnd) continue;
    const d = new Date(t);
    // setUTCFullYear, not Date.UTC: Date.UTC reads years 0–99 as 1900–1999.
    lastMonthStart = new Date(0).setUTCFullYear(d.getUTCFullYear(), d.getUTCMonth(), 1);
    lastMonthEnd = new Date(0).setUTCFullYear(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    months.add(lastMonthStart);
  }
  return [...months].sort((a, b) => a - b);
}

/** Called after each meter object, with the rows and series parsed so far and whether any value
 * was refused yet (the streaming ingest hands completed meters on while parsing continues). */
export type MeterHook = (rows: Rows, series: readonly ParsedSeries[], clean: boolean) => void;

/** One element of `meters`: the meter object at the cursor, its registers' rows into ctx. */
function parseMeter(ctx: Context, m: number): void {
  const cursor = ctx.cursor;
  const meterPath = `meters[${m}]`;
  let meterId: string | undefined;
  let idSeen = false;
  let registersStart = -1;
  let registersEnd = -1;
  const parseRegisters = () => parseArray(ctx, `${meterPath}.registers`, (r) => parseRegister(ctx, meterId, `${meterPath}.id`, `${meterPath}.registers[${r}]`));
  parseObject(
    ctx,
    meterPath,
    {
      id: () => {
        idSeen = true;
        meterId = parseStringField(ctx, `${meterPath}.id`);
      },
      registers: () => {
        if (idSeen) return parseRegisters();
        // The meter id follows its registers: skip them now, read them once the id is known.
        registersStart = cursor.pos;
        cursor.skipValue();
        registersEnd = cursor.pos;
      },
    },
    ['id', 'registers'],
  );
  if (registersStart !== -1) {
    const resume = cursor.pos;
    cursor.pos = registersStart;
    parseRegisters();
    if (cursor.pos !== registersEnd) cursor.fail('internal: registers re-read mismatch');
    cursor.pos = resume;
  }
}

function newContext(bytes: Uint8Array, columns?: RowColumns): Context {
  return { cursor: new JsonCursor(bytes), rows: columns ? Rows.over(columns) : new Rows(Math.ceil(bytes.length / 48)), errors: [], seriesIndex: new Map(), series: [] };
}

/** The parsed rows of a context without errors, grouped and sorted. */
function batchOf(ctx: Context): ParsedBatch {
  const grouped = group(ctx.rows, ctx.series.length, true);
  for (let s = 0; s < ctx.series.length; s += 1) {
    const from = grouped.offsets[s]!;
    const to = grouped.offsets[s + 1]!;
    ctx.series[s]!.first = to > from ? grouped.timestamps[from]! : NaN;
    ctx.series[s]!.last = to > from ? grouped.timestamps[to - 1]! : NaN;
  }
  return {
    series: ctx.series,
    offsets: grouped.offsets,
    timestamps: grouped.timestamps,
    values: grouped.values,
    resolutions: grouped.resolutions,
    months: monthsOf(grouped.timestamps),
  };
}

export function parseReadings(bytes: Uint8Array, onMeter?: MeterHook): ParseOutcome {
  const ctx = newContext(bytes);
  const cursor = ctx.cursor;
  try {
    parseObject(
      ctx,
      '',
      {
        meters: () =>
          parseArray(ctx, 'meters', (m) => {
            parseMeter(ctx, m);
            onMeter?.(ctx.rows, ctx.series, ctx.errors.length === 0);
          }),
      },
      ['meters'],
    );
    if (cursor.peek() !== -1) cursor.fail('unexpected data after the JSON document');
  } catch (err) {
    if (err instanceof JsonSyntaxError) {
      return { ok: false, syntax: true, errors: [{ path: '(body)', message: `malformed JSON at byte ${err.offset}: ${err.message}` }] };
    }
    throw err;
  }
  if (ctx.errors.length > 0) return { ok: false, syntax: false, errors: ctx.errors };
  return { ok: true, batch: batchOf(ctx) };
}

// Parsing a large body on several threads at once (the QuestDB store; measured in
// docs/benchmarks.md). The body is cut between two elements of `meters` (meterCuts), each
// slice is parsed on its own (parseReadingsSlice) and the slices' batches are joined. A slice is
// accepted only when it parses exactly, with nothing refused: a cut that was not a real boundary
// between meters makes the slice before it end in the middle of a value (parsing a slice reads
// the same bytes as parsing the whole body would, up to the cut), so is never accepted. Any
// slice not accepted, for whatever reason (a refused value, a cut in the wrong place), and the
// whole body is parsed again in one piece: the errors and their paths are exactly those of
// parseReadings.

/** What separates two meters in a compact body sent in the documented key order: the end of a
 * value object, of its values array, of its register, of the registers array and of the meter. */
const METER_BOUNDARY = Uint8Array.from(']}]},{', (c) => c.charCodeAt(0));

/** Offsets where `bytes` may be cut into `parts` slices of about equal size, each cut at the `{`
 * opening a meter (a guess: parseReadingsSlice verifies it). Fewer cuts when none is found. */
export function meterCuts(bytes: Uint8Array, parts: number): number[] {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const cuts: number[] = [];
  let from = 0;
  for (let k = 1; k < parts; k += 1) {
    const at = buffer.indexOf(METER_BOUNDARY, Math.max(from, Math.floor((k * bytes.length) / parts)));
    if (at === -1) break;
    const cut = at + METER_BOUNDARY.length - 1;
    cuts.push(cut);
    from = cut + 1;
  }
  return cuts;
}

/** A slice's batch (series paths count its meters from 0), or not accepted. */
export type SliceOutcome = { ok: true; batch: ParsedBatch; meters: number } | { ok: false };

/** Parses the slice of a body between two cuts: the first slice starts with the document's
 * opening `{"meters":[`, the last ends with its closing `]}`, the others hold meters only, every
 * slice but the last ending with the comma after its last meter. */
export function parseReadingsSlice(bytes: Uint8Array, first: boolean, last: boolean, columns?: RowColumns): SliceOutcome {
  const ctx = newContext(bytes, columns);
  const c = ctx.cursor;
  let meters = 0;
  try {
    if (first) {
      c.expect(0x7b, "'{'");
      c.peek();
      if (!c.keyIs('meters')) return { ok: false };
      c.expect(0x3a, "':'");
      c.expect(0x5b, "'['");
    }
    for (;;) {
      parseMeter(ctx, meters);
      meters += 1;
      if (ctx.errors.length > 0) return { ok: false };
      const next = c.peek();
      if (next === 0x2c) {
        c.pos += 1;
        if (!last && c.peek() === -1) break;
      } else if (next === 0x5d && last) {
        c.pos += 1;
        c.expect(0x7d, "'}'");
        if (c.peek() !== -1) return { ok: false };
        break;
      } else return { ok: false };
    }
  } catch (err) {
    if (err instanceof JsonSyntaxError) return { ok: false };
    throw err;
  }
  return { ok: true, batch: batchOf(ctx), meters };
}
