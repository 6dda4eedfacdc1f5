// The one place a reading becomes JSON: the published Reading of GET /api/readings
// ({timestamp, periodTo, updatedAt, value, resolution}; `readingSchema` in src/meter/schemas.ts),
// for both backends and for computed (virtual) registers. test/integration/timeseriesContract
// checks every backend's answers against the route's response schema.
//
// Written as bytes, not strings, and by hand, not with fast-json-stringify: this is the hot path
// of large reads (100 registers × a month of hourly averages is 74,400 readings, 11 MB of JSON),
// where a generic serializer needs an object and three date strings per reading and string
// concatenation leaves ~10 small strings per reading for the garbage collector. Here a series
// is written into one buffer sized for its worst case: timestamps digit by digit from a cached
// date prefix, constant pieces copied, the number the only string made per reading (V8's
// shortest round-trip text). Measured in docs/benchmarks.md.
import { civilFromDays } from '../../shared/virtual/calendar.ts';
import { SharedBuffers } from './sharedBuffers.ts';
import { ValueOutOfRange, type Series } from './types.ts';

const DAY_MS = 86_400_000;
/** The longest reading: fixed text 76 bytes, three timestamps of at most 27 (six-digit years),
 * a number of at most 24 characters, a resolution of at most 11. */
const MAX_READING_BYTES = 76 + 3 * 27 + 24 + 11 + 1;

const ascii = (text: string) => Buffer.from(text, 'latin1');
const OPEN = ascii('{"timestamp":"');
const PERIOD_TO = ascii('","periodTo":"');
const UPDATED_AT = ascii('","updatedAt":"');
const VALUE = ascii('","value":');

function put(out: Buffer, at: number, bytes: Uint8Array): number {
  if (bytes.length > 32) {
    out.set(bytes, at);
    return at + bytes.length;
  }
  for (let i = 0; i < bytes.length; i += 1) out[at + i] = bytes[i]!;
  return at + bytes.length;
}

function putText(out: Buffer, at: number, text: string): number {
  for (let i = 0; i < text.length; i += 1) out[at + i] = text.charCodeAt(i);
  return at + text.length;
}

function two(out: Buffer, at: number, n: number): void {
  out[at] = 48 + ((n / 10) | 0);
  out[at + 1] = 48 + (n % 10);
}

/** Writes `YYYY-MM-DDTHH:MM:SS.mmmZ` (Date#toISOString's text) of an instant in whole UTC ms. */
function putIso(out: Buffer, at: number, ms: number): number {
  const day = Math.floor(ms / DAY_MS);
  return putTime(out, putDate(out, at, day), ms - day * DAY_MS);
}

/** UTC days (since 1970-01-01) of 0000-03-01 and 9999-12-31. */
const FIRST_CIVIL_DAY = -719_468;
const LAST_CIVIL_DAY = 2_932_896;

/** Writes `YYYY-MM-DDT` of a UTC day (days since 1970-01-01), as Date#toISOString does. Years
 * 0–9999 by integer arithmetic (civilFromDays, src/shared/virtual/calendar.ts), other years (six
 * digits and a sign) through Date. It had been a Date, its text and a Buffer each time the day
 * changed: at every hourly average of 23:00, whose periodTo is the next day — 0.4 of 6.5 ms on the event loop per register-year
 * (docs/benchmarks.md). */
function putDate(out: Buffer, at: number, day: number): number {
  if (day < FIRST_CIVIL_DAY || day > LAST_CIVIL_DAY) {
    const text = new Date(day * DAY_MS).toISOString();
    return putText(out, at, text.slice(0, text.indexOf('T') + 1));
  }
  const { y, m, d } = civilFromDays(day);
  two(out, at, (y / 100) | 0);
  two(out, at + 2, y % 100);
  out[at + 4] = 45; // -
  two(out, at + 5, m);
  out[at + 7] = 45;
  two(out, at + 8, d);
  out[at + 10] = 84; // T
  return at + 11;
}

/** Writes `HH:MM:SS.mmmZ` of a time of day in whole ms (0 ≤ ms < 86,400,000, an int32). */
function putTime(out: Buffer, at: number, ms: number): number {
  const hours = (ms / 3_600_000) | 0;
  let rest = ms - hours * 3_600_000;
  const minutes = (rest / 60_000) | 0;
  rest -= minutes * 60_000;
  const seconds = (rest / 1000) | 0;
  const millis = (rest - seconds * 1000) | 0;
  two(out, at, hours);
  out[at + 2] = 58; // :
  two(out, at + 3, minutes);
  out[at + 5] = 58;
  two(out, at + 6, seconds);
  out[at + 8] = 46; // .
  out[at + 9] = 48 + ((millis / 100) | 0);
  two(out, at + 10, millis % 100);
  out[at + 12] = 90; // Z
  return at + 13;
}

/** `YYYY-MM-DDTHH:MM:SS.mmmZ` of an instant in whole UTC milliseconds. */
export function isoUtc(ms: number): string {
  const out = Buffer.allocUnsafe(27);
  return out.toString('latin1', 0, putIso(out, 0, ms));
}

/** Significant digits of values the platform computes (bucket sums and averages, virtual
 * registers): a sum of float8 readings carries binary noise in its last digits (0.1 + 0.2 =
 * 0.30000000000000004); 12 significant digits (relative precision 1e-12, far finer than any
 * meter) give exact inputs exact-looking outputs. Readings as stored are returned as posted.
 * Documented in docs/meter-data.md; the CSV export rounds the same way. */
export const COMPUTED_DIGITS = 12;

/** A computed value rounded to COMPUTED_DIGITS significant digits. */
export function roundComputed(value: number): number {
  if (value === 0 || !Number.isFinite(value) || Number.isInteger(value)) return value;
  return Number(value.toPrecision(COMPUTED_DIGITS));
}

/** String(roundComputed(value)) for a finite value, with one conversion instead of three:
 * toPrecision's text without its trailing zeros is the shortest text of the number it names
 * (at most 12 significant digits: no shorter decimal names the same double). Measured: 74,400
 * hourly averages took ~3× as long through Number() and String() (docs/benchmarks.md). */
export function computedText(value: number): string {
  if (value === 0 || Number.isInteger(value)) return String(value);
  const text = value.toPrecision(COMPUTED_DIGITS);
  if (text.indexOf('e') !== -1) return String(Number(text));
  let end = text.length;
  if (text.indexOf('.') !== -1) {
    while (text.charCodeAt(end - 1) === 48) end -= 1;
    if (text.charCodeAt(end - 1) === 46) end -= 1;
  }
  return end === text.length ? text : text.slice(0, end);
}

/** Writes computedText(value) of a finite value; whole millionths from their digits (putMicros). */
function putComputed(out: Buffer, at: number, value: number): number {
  // Whole numbers first: putMicros takes only values with a fraction.
  if (value === 0 || Number.isInteger(value)) return putText(out, at, String(value));
  const fast = putMicros(out, at, value);
  return fast !== -1 ? fast : putText(out, at, computedText(value));
}

/** computedText of a non-integer value of magnitude below 10⁶ that is a whole number k of
 * millionths up to binary noise (within 10⁻¹³ of k / 10⁶ relatively): readings in thousandths
 * summed, or averaged over up to a few, as meters send them — a sum of four such readings is off
 * by an ulp or two as often as not (0.1 + 0.2). Written from k's digits instead of through
 * toPrecision, which took a third of the writer's time (measured: 8,760 hourly averages 1.5 of
 * 4.8 ms, docs/benchmarks.md; taking the noisy ones too, 2.2 → 1.9 ms).
 * Exact: k·10⁻⁶ lies on the grid of 12 significant digits (|value| < 10⁶), whose half spacing is
 * at least 5·10⁻¹³ of the value; the value lies within 10⁻¹³ of the double nearest k / 10⁶ (the
 * subtraction below is exact), which lies within 1.2·10⁻¹⁶ of k·10⁻⁶: so toPrecision(12) rounds
 * to k·10⁻⁶, and dropping its trailing zeros leaves k's digits (only the whole part's when the
 * millionths are 0: 2.0000000000001 is "2"). -1 when the value is not such a number (then
 * toPrecision writes it). */
function putMicros(out: Buffer, at: number, value: number): number {
  const magnitude = value < 0 ? -value : value;
  if (!(magnitude < 1e6)) return -1;
  const k = Math.round(magnitude * 1e6);
  if (k === 0) return -1;
  const off = magnitude - k / 1e6;
  if (off !== 0 && !((off < 0 ? -off : off) <= magnitude * 1e-13)) return -1;
  if (value < 0) out[at++] = 45; // -
  // Both parts below 2³¹: int32 arithmetic (`| 0`), not the double modulo k's type would get.
  const whole = Math.floor(k / 1e6) | 0;
  let fraction = (k - whole * 1e6) | 0;
  at = putDigits(out, at, whole);
  if (fraction === 0) return at;
  out[at++] = 46; // .
  let digits = 6;
  while (fraction % 10 === 0) {
    fraction = (fraction / 10) | 0;
    digits -= 1;
  }
  for (let d = digits - 1; d >= 0; d -= 1) {
    out[at + d] = 48 + (fraction % 10);
    fraction = (fraction / 10) | 0;
  }
  return at + digits;
}

/** Writes a whole number 0 ≤ n ≤ 10⁶ (an int32) in decimal. */
function putDigits(out: Buffer, at: number, n: number): number {
  let length = 1;
  for (let p = 10; p <= n; p *= 10) length += 1;
  for (let d = length - 1; d >= 0; d -= 1) {
    out[at + d] = 48 + (n % 10);
    n = (n / 10) | 0;
  }
  return at + length;
}

/** A JSON number (a bucket's: rounded, computedText). A stored reading is always finite (the
 * parser refuses others); a computed one past ±1.8e308 (a sum overflowing: Infinity on
 * PostgreSQL, NaN/null from QuestDB) has no JSON number, and `value` is a number in the
 * published schema: the read is refused. */
function putNumber(out: Buffer, at: number, value: number, computed: boolean, series: Series, i: number): number {
  if (!Number.isFinite(value)) throw new ValueOutOfRange(series.registerId, series.timestamps[i]!);
  return computed ? putComputed(out, at, value) : putText(out, at, String(value));
}

/** The series as a JSON array of Reading: periodTo = timestamp + the row's resolution; the
 * `resolution` written is `bucketSeconds` when given (buckets: the length asked for, 86400 on a
 * 23-hour local day too), else the row's own. Values of buckets (bucketSeconds given) are
 * computed and rounded with roundComputed.
 *
 * A reading whose timestamp and periodTo fall on the same UTC days as the previous reading's,
 * with the same updatedAt, starts as a copy of the previous reading's text up to its value (one
 * native copy of ~120 bytes instead of writing them byte by byte): only the two times of day are
 * written over it. Measured: 74,400 hourly buckets 32 → 22 ms (docs/benchmarks.md).
 */
export function seriesJson(series: Series, bucketSeconds?: number): Buffer {
  const out = Buffer.allocUnsafe(worstCase(series));
  return out.subarray(0, writeSeries(out, 0, series, bucketSeconds));
}

/** The most bytes seriesJson can write for a series. */
const worstCase = (series: Series) => 2 + series.timestamps.length * MAX_READING_BYTES;

/** Writes seriesJson's text at `at` (room for worstCase bytes); returns where it ends. */
function writeSeries(out: Buffer, at: number, series: Series, bucketSeconds: number | undefined): number {
  const { timestamps, values, resolutions, updatedAt } = series;
  const n = timestamps.length;
  out[at++] = 91; // [
  // `","updatedAt":"…","value":` and `,"resolution":…}` change rarely: kept as bytes until they do.
  let updatedMs = NaN;
  let updated = Buffer.alloc(0);
  let seconds = NaN;
  let tail = Buffer.alloc(0);
  // The previous reading's text: where it starts, where its two times of day start, its length
  // up to the value, and the UTC days of its timestamp and periodTo (NaN: nothing to copy).
  let head = 0;
  let headLength = 0;
  let startTime = 0;
  let endTime = 0;
  let startDay = NaN;
  let endDay = NaN;
  for (let i = 0; i < n; i += 1) {
    const t = timestamps[i]!;
    if (resolutions[i] !== seconds) {
      seconds = resolutions[i]!;
      tail = ascii(`,"resolution":${bucketSeconds ?? seconds}}`);
    }
    if (updatedAt[i] !== updatedMs) {
      updatedMs = updatedAt[i]!;
      const text = Buffer.allocUnsafe(UPDATED_AT.length + 27 + VALUE.length);
      updated = text.subarray(0, put(text, putIso(text, put(text, 0, UPDATED_AT), updatedMs), VALUE));
      startDay = NaN;
    }
    if (i > 0) out[at++] = 44; // ,
    const to = t + seconds * 1000;
    const tDay = Math.floor(t / DAY_MS);
    const toDay = Math.floor(to / DAY_MS);
    if (tDay === startDay && toDay === endDay) {
      const startOffset = startTime - head;
      const endOffset = endTime - head;
      out.copyWithin(at, head, head + headLength);
      putTime(out, at + startOffset, t - tDay * DAY_MS);
      putTime(out, at + endOffset, to - toDay * DAY_MS);
      head = at;
      startTime = at + startOffset;
      endTime = at + endOffset;
      at += headLength;
    } else {
      const from = at;
      at = put(out, at, OPEN);
      at = putIso(out, at, t);
      startTime = at - 13;
      at = put(out, at, PERIOD_TO);
      at = putIso(out, at, to);
      endTime = at - 13;
      at = put(out, at, updated);
      head = from;
      headLength = at - from;
      startDay = tDay;
      endDay = toDay;
    }
    at = putNumber(out, at, values[i]!, bucketSeconds !== undefined, series, i);
    at = put(out, at, tail);
  }
  out[at++] = 93; // ]
  return at;
}

/** Answers of seriesJsonById up to this size are written into kept memory (JSON_KEPT buffers at
 * most); larger ones (up to ~110 MB at READINGS_MAX_POINTS) into fresh memory, as before. */
const KEPT_MAX_BYTES = 32 * 1024 * 1024;
const JSON_KEPT = 4;
const keptJson = new SharedBuffers<Buffer>(JSON_KEPT, (bytes) => Buffer.allocUnsafeSlow(bytes));
/** The kept buffers lent out, by their memory: what releaseJson gives back. */
const lent = new WeakMap<ArrayBufferLike, Buffer>();

/** Every series with data, as JSON arrays by register id: views of one buffer, lent from kept
 * memory (up to KEPT_MAX_BYTES). Give it back with releaseJson once the answer has been written;
 * one never given back is collected as any Buffer (nothing is then kept for it).
 *
 * Kept, not fresh: the buffer for one register-year of hourly averages is 1.9 MB (8,760 times
 * the longest reading), of which 1.3 MB written; fresh, every answer paid a page fault per 4 KiB
 * written (glibc maps each allocation of that size anew) and its share of the garbage collections
 * that V8 starts for external memory, measured in docs/benchmarks.md
 * (QuestDB). */
export function seriesJsonById(series: readonly Series[], bucketSeconds?: number): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  let bytes = 0;
  for (const s of series) if (s.timestamps.length > 0) bytes += worstCase(s);
  if (bytes === 0) return out;
  const kept = bytes <= KEPT_MAX_BYTES;
  const buffer = kept ? keptJson.take(bytes) : Buffer.allocUnsafe(bytes);
  let at = 0;
  try {
    for (const s of series) {
      if (s.timestamps.length === 0) continue;
      const end = writeSeries(buffer, at, s, bucketSeconds);
      out.set(s.registerId, buffer.subarray(at, end));
      at = end;
    }
  } catch (err) {
    if (kept) keptJson.give(buffer);
    throw err;
  }
  if (kept) lent.set(buffer.buffer, buffer);
  return out;
}

/** Gives back the kept memory of answers of seriesJsonById among `pieces` (others are left
 * alone; a second call for the same answer does nothing). Only once nothing reads them: the
 * memory is written over by the next answer. */
export function releaseJson(pieces: Iterable<Uint8Array>): void {
  for (const piece of pieces) {
    const buffer = lent.get(piece.buffer);
    if (!buffer) continue;
    lent.delete(piece.buffer);
    keptJson.give(buffer);
  }
}
