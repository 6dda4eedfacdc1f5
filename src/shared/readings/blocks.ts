// Register-day blocks: how the PostgreSQL store keeps readings (table `reading_blocks`,
// src/store/migrations/010_reading_blocks_compact.sql; docs/meter-data.md "Register-day blocks").
// One row per register and UTC day:
//   updated_max  the latest recordedAt of its current readings (corrections, asOf and the points
//                limit are answered without decoding)
//   n            its current readings
//   data         the current readings, compact (codec.ts: times, values, resolutions, recordedAt)
//   days         its readings summed per piece of the UTC day between the local midnights of its
//                register's time zone (below): a question in local days reads one or two values a
//                day instead of the readings
//   history      the versions its readings superseded (codec.ts, with supersededAt), NULL if none
//   history_min  the earliest supersededAt in history (the retention purge)
//
//   days   u8 head: bits 0–1 k, the pieces (0 = not computed: read the data instead); bit 7 set:
//          every piece's latest recordedAt is updated_max; bits 2–6: 1 + the decimal digits the
//          sums are scaled by, 0 = sums are doubles. Then per piece: (after the first) varint
//          start, ms since the UTC day began; varint count; the sum (zigzag varint of sum × 10^d,
//          exact, or f64); (bit 7 clear) the latest recordedAt, an instant from updated_max
//          (codec.ts).
//
// A meter's day of quarter hours with three decimals is about a hundred bytes of data and a dozen
// of days; the row with its header and index entry ~2 bytes a reading (docs/benchmarks-readings.md).
// Plain typed-array work, shared by the worker (building a body's blocks) and the main thread
// (merging corrections, computing daily pieces, reading).
import { ByteReader, ByteWriter, decodeColumns, encodeColumns, readInstant, writeInstant, writeWithRecordedAt, type ColumnsScratch } from './codec.ts';
import { COPY_HEADER, COPY_TRAILER } from './pgCopy.ts';

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;
/** Pieces a UTC day can have: three (two local midnights in it) covers every zone. */
const MAX_DAY_PIECES = 3;
const SAME_LATEST = 0x80;
/** Scaled sums stay exact below this. */
const EXACT = 2 ** 53;

/** Readings of one block, time-ordered, unique times (UTC ms). */
export interface BlockReadings {
  times: Float64Array;
  values: Float64Array;
  resolutions: Int32Array;
  updatedAt: Float64Array;
}

export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** The `data` of readings [from, to) of the columns, all in UTC day `day`. */
export function encodeData(day: number, times: ArrayLike<number>, values: ArrayLike<number>, resolutions: ArrayLike<number>, recordedAt: ArrayLike<number> | number, from: number, to: number, w = new ByteWriter(64 + 2 * (to - from))): Uint8Array {
  const start = w.at;
  encodeColumns(w, day, times, values, resolutions, recordedAt, from, to);
  return w.bytes.subarray(start, w.at);
}

/** Readings of a block's `data`, with the decimal digits of its values (-1: not decimals); into
 * `scratch` when given (valid until its next use). */
export function decodeData(data: Uint8Array, day: number, scratch?: ColumnsScratch): BlockReadings & { digits: number } {
  const c = decodeColumns(data, day, scratch);
  return { times: c.times, values: c.values, resolutions: c.resolutions, updatedAt: c.recordedAt, digits: c.digits };
}

/** Copies reading `at` of `src` to position `k` of `out` (the merges' step). */
export function copyReading(out: BlockReadings, k: number, src: BlockReadings, at: number): void {
  out.times[k] = src.times[at]!;
  out.values[k] = src.values[at]!;
  out.resolutions[k] = src.resolutions[at]!;
  out.updatedAt[k] = src.updatedAt[at]!;
}

/** The stored readings of a block with `incoming` written over them: an incoming reading
 * replaces a stored one at the same time (value, resolution, updatedAt), the rest are kept. */
export function mergeReadings(stored: BlockReadings, incoming: BlockReadings): BlockReadings {
  const a = stored;
  const b = incoming;
  const max = a.times.length + b.times.length;
  const out: BlockReadings = { times: new Float64Array(max), values: new Float64Array(max), resolutions: new Int32Array(max), updatedAt: new Float64Array(max) };
  let i = 0;
  let j = 0;
  let k = 0;
  const take = (src: BlockReadings, at: number) => copyReading(out, k++, src, at);
  while (i < a.times.length || j < b.times.length) {
    if (j >= b.times.length || (i < a.times.length && a.times[i]! < b.times[j]!)) take(a, i++);
    else {
      if (i < a.times.length && a.times[i] === b.times[j]) i += 1;
      take(b, j++);
    }
  }
  return { times: out.times.subarray(0, k), values: out.values.subarray(0, k), resolutions: out.resolutions.subarray(0, k), updatedAt: out.updatedAt.subarray(0, k) };
}

// ---- daily pieces ----

/** The `days` of a block (UTC day `day`) for these local midnights of it (ms since it began,
 * ascending, each inside the day; none for a zone whose midnight is the UTC one). `digits`: the
 * decimal digits of its values (codec.ts), or -1. More midnights than pieces can hold: k = 0
 * (readers use the data). */
export function encodeDays(day: number, r: BlockReadings, digits: number, cuts: ArrayLike<number>, updatedMax: number): Uint8Array {
  const k = cuts.length + 1;
  if (k > MAX_DAY_PIECES || r.times.length === 0) return Uint8Array.of(0);
  const base = day * DAY_MS;
  const counts = [0, 0, 0];
  const sums = [0, 0, 0];
  const latest = [-Infinity, -Infinity, -Infinity];
  // Sums of values with few decimals are kept scaled to whole numbers: exact, and short.
  let scale = digits >= 0 ? 10 ** digits : 1;
  if (digits >= 0) {
    let most = 0;
    for (let i = 0; i < r.values.length; i += 1) most = Math.max(most, Math.abs(r.values[i]!));
    if (most * scale * r.values.length >= EXACT) digits = -1;
  }
  if (digits < 0) scale = 1;
  let p = 0;
  let same = true;
  for (let i = 0; i < r.times.length; i += 1) {
    const offset = r.times[i]! - base;
    while (p < cuts.length && cuts[p]! <= offset) p += 1;
    counts[p] = counts[p]! + 1;
    sums[p] = sums[p]! + (digits >= 0 ? Math.round(r.values[i]! * scale) : r.values[i]!);
    const u = r.updatedAt[i]!;
    if (u > latest[p]!) latest[p] = u;
    if (u !== updatedMax) same = false;
  }
  return daysBytes(k, counts, sums, latest, same, digits, cuts, updatedMax);
}

function daysBytes(k: number, counts: readonly number[], sums: readonly number[], latest: readonly number[], same: boolean, digits: number, cuts: ArrayLike<number>, updatedMax: number): Uint8Array {
  const w = new ByteWriter(4 + 22 * k);
  w.u8(k | (same ? SAME_LATEST : 0) | ((digits + 1) << 2));
  for (let q = 0; q < k; q += 1) {
    if (q > 0) w.varint(cuts[q - 1]!);
    w.varint(counts[q]!);
    if (digits >= 0) w.zigzag(sums[q]!);
    else w.f64(sums[q]!);
    if (!same) writeInstant(w, counts[q]! > 0 ? latest[q]! : updatedMax, updatedMax);
  }
  return w.result();
}

/**
 * The `days` of block k of a body's blocks (one recordedAt: `recordedAt`) from the hourly sums the
 * worker kept (hourCounts, hourSums), without decoding it: a local midnight on a whole hour cuts
 * between hours; one at a 30- or 45-minute offset cuts an hour, whose readings are then decoded.
 */
export function encodeDaysFromHours(blocks: EncodedBlocks, k: number, cuts: ArrayLike<number>, recordedAt: number): Uint8Array {
  const pieces = cuts.length + 1;
  if (pieces > MAX_DAY_PIECES) return Uint8Array.of(0);
  const day = blocks.blockDays[k]!;
  const digits = blocks.sumDigits[k]!;
  const counts = [0, 0, 0];
  const sums = [0, 0, 0];
  let readings: (BlockReadings & { digits: number }) | undefined;
  const scale = digits >= 0 ? 10 ** digits : 1;
  let p = 0;
  for (let h = 0; h < 24; h += 1) {
    const n = blocks.hourCounts[24 * k + h]!;
    if (n === 0) continue;
    const h0 = h * HOUR_MS;
    while (p < cuts.length && cuts[p]! <= h0) p += 1;
    if (p < cuts.length && cuts[p]! < h0 + HOUR_MS) {
      // A midnight inside this hour: its readings, one by one.
      readings ??= decodeData(blockData(blocks, k), day);
      const base = day * DAY_MS;
      for (let i = 0; i < readings.times.length; i += 1) {
        const offset = readings.times[i]! - base;
        if (offset < h0 || offset >= h0 + HOUR_MS) continue;
        const q = offset >= cuts[p]! ? p + 1 : p;
        counts[q] = counts[q]! + 1;
        sums[q] = sums[q]! + (digits >= 0 ? Math.round(readings.values[i]! * scale) : readings.values[i]!);
      }
      continue;
    }
    counts[p] = counts[p]! + n;
    sums[p] = sums[p]! + blocks.hourSums[24 * k + h]!;
  }
  return daysBytes(pieces, counts, sums, [recordedAt, recordedAt, recordedAt], true, digits, cuts, recordedAt);
}

/** A block's daily pieces as read: piece p covers [starts[p], starts[p + 1]) (UTC ms; the last
 * to the day's end). k = 0: not computed. */
export interface DayPieces {
  k: number;
  starts: number[];
  counts: number[];
  sums: number[];
  latest: number[];
}

export function readDays(days: Uint8Array, day: number, updatedMax: number): DayPieces {
  const into = new Float64Array(4 * MAX_DAY_PIECES);
  const k = readDaysInto(days, day, updatedMax, into);
  const at = (p: number, f: number) => into[4 * p + f]!;
  const list = (f: number) => Array.from({ length: k }, (_, p) => at(p, f));
  return { k, starts: list(0), counts: list(1), sums: list(2), latest: list(3) };
}

/** Where readDaysInto is in its bytes (a module variable, not a closure: this runs for every
 * block of a local-day question). */
let daysAt = 0;

function daysVarint(days: Uint8Array): number {
  let v = 0;
  let m = 1;
  for (;;) {
    if (daysAt >= days.length) throw new RangeError('reading block days end early');
    const b = days[daysAt++]!;
    v += (b & 127) * m;
    if (b < 128) return v;
    m *= 128;
  }
}

/** The daily pieces of `days` into `out` (piece p: start, count, sum, latest at 4p .. 4p + 3);
 * returns k. No allocation: read for every block of a local-day question (profiled). */
export function readDaysInto(days: Uint8Array, day: number, updatedMax: number, out: Float64Array): number {
  if (days.length === 0) return 0;
  const head = days[0]!;
  const k = head & 3;
  if (k === 0) return 0;
  const digits = ((head >> 2) & 31) - 1;
  const scale = digits >= 0 ? 10 ** digits : 1;
  const same = (head & SAME_LATEST) !== 0;
  daysAt = 1;
  const base = day * DAY_MS;
  for (let q = 0; q < k; q += 1) {
    out[4 * q] = base + (q > 0 ? daysVarint(days) : 0);
    out[4 * q + 1] = daysVarint(days);
    if (digits >= 0) {
      const z = daysVarint(days);
      out[4 * q + 2] = (z % 2 === 0 ? z / 2 : -(z + 1) / 2) / scale;
    } else {
      const r = new ByteReader(days, daysAt);
      out[4 * q + 2] = r.f64();
      daysAt = r.at;
    }
    if (same) out[4 * q + 3] = updatedMax;
    else {
      const r = new ByteReader(days, daysAt);
      out[4 * q + 3] = readInstant(r, updatedMax);
      daysAt = r.at;
    }
  }
  return k;
}

// ---- COPY rows of reading_blocks ----

export const BLOCK_COPY_COLUMNS = '(updated_max, history_min, register_id, day, n, data, days, history)';

/** Appends one COPY row; `data` with `recordedAt` set: a block the worker encoded. */
export function writeBlockRowAt(w: ByteWriter, recordedAt: number, registerId: number, day: number, n: number, data: Uint8Array, days: Uint8Array): void {
  w.ensure(2 + 12 + 4 + 24 + 4);
  const v = () => new DataView(w.bytes.buffer, w.bytes.byteOffset);
  let view = v();
  let at = w.at;
  view.setInt16(at, 8);
  view.setInt32(at + 2, 8);
  view.setFloat64(at + 6, recordedAt);
  view.setInt32(at + 14, -1);
  at += 18;
  for (const x of [registerId, day, n]) {
    view.setInt32(at, 4);
    view.setInt32(at + 4, x);
    at += 8;
  }
  const lengthAt = at;
  w.at = at + 4;
  writeWithRecordedAt(w, data, day, recordedAt);
  view = v();
  view.setInt32(lengthAt, w.at - lengthAt - 4);
  w.ensure(4 + days.length + 4);
  view = v();
  view.setInt32(w.at, days.length);
  w.bytes.set(days, w.at + 4);
  w.at += 4 + days.length;
  view.setInt32(w.at, -1);
  w.at += 4;
}

/** Appends one COPY row. */
export function writeBlockRow(w: ByteWriter, updatedMax: number, historyMin: number | null, registerId: number, day: number, n: number, data: Uint8Array, days: Uint8Array, history: Uint8Array | null): void {
  w.ensure(2 + 8 * 4 + 8 + 8 + 12 + data.length + days.length + (history?.length ?? 0));
  const v = new DataView(w.bytes.buffer, w.bytes.byteOffset);
  let at = w.at;
  v.setInt16(at, 8);
  v.setInt32(at + 2, 8);
  v.setFloat64(at + 6, updatedMax);
  at += 14;
  if (historyMin === null) {
    v.setInt32(at, -1);
    at += 4;
  } else {
    v.setInt32(at, 8);
    v.setFloat64(at + 4, historyMin);
    at += 12;
  }
  for (const x of [registerId, day, n]) {
    v.setInt32(at, 4);
    v.setInt32(at + 4, x);
    at += 8;
  }
  for (const field of [data, days]) {
    v.setInt32(at, field.length);
    w.bytes.set(field, at + 4);
    at += 4 + field.length;
  }
  if (history === null) {
    v.setInt32(at, -1);
    at += 4;
  } else {
    v.setInt32(at, history.length);
    w.bytes.set(history, at + 4);
    at += 4 + history.length;
  }
  w.at = at;
}

/** A body's blocks as the worker encodes them: block k (series blockSeries[k], UTC day
 * blockDays[k], counts[k] readings) has `data` bytes dataStarts[k] .. dataStarts[k + 1], all
 * with one recordedAt (taken again when the write has its locks: writeWithRecordedAt). */
export interface EncodedBlocks {
  data: Uint8Array;
  dataStarts: Int32Array;
  counts: Int32Array;
  blockSeries: Int32Array;
  blockDays: Int32Array;
  /** Per block and UTC hour (24 k + h): readings, and their sum — scaled by 10^sumDigits[k]
   * (exact) or, where sumDigits[k] is -1, a double. The daily pieces are made of these. */
  hourCounts: Int32Array;
  hourSums: Float64Array;
  sumDigits: Int8Array;
}

/** The `data` of block k (a view). */
export function blockData(blocks: EncodedBlocks, k: number): Uint8Array {
  return blocks.data.subarray(blocks.dataStarts[k]!, blocks.dataStarts[k + 1]!);
}

/**
 * The blocks of grouped readings (series s: rows offsets[s] .. offsets[s+1]-1, time-ordered,
 * unique times), with one recordedAt for all (a write) or one per row.
 */
export function encodeBlocks(offsets: Int32Array, times: Float64Array, values: Float64Array, resolutions: Int32Array, recordedAt: Float64Array | number): EncodedBlocks {
  const series = offsets.length - 1;
  let blocks = 0;
  for (let s = 0; s < series; s += 1) {
    for (let i = offsets[s]!; i < offsets[s + 1]!; ) {
      const dayEnd = (dayOf(times[i]!) + 1) * DAY_MS;
      while (i < offsets[s + 1]! && times[i]! < dayEnd) i += 1;
      blocks += 1;
    }
  }
  const w = new ByteWriter(64 + 2 * times.length + 40 * blocks);
  const dataStarts = new Int32Array(blocks + 1);
  const counts = new Int32Array(blocks);
  const blockSeries = new Int32Array(blocks);
  const blockDays = new Int32Array(blocks);
  const hourCounts = new Int32Array(24 * blocks);
  const hourSums = new Float64Array(24 * blocks);
  const sumDigits = new Int8Array(blocks);
  let k = 0;
  for (let s = 0; s < series; s += 1) {
    const end = offsets[s + 1]!;
    for (let i = offsets[s]!; i < end; ) {
      const day = dayOf(times[i]!);
      const dayEnd = (day + 1) * DAY_MS;
      let j = i + 1;
      while (j < end && times[j]! < dayEnd) j += 1;
      dataStarts[k] = w.at;
      counts[k] = j - i;
      blockSeries[k] = s;
      blockDays[k] = day;
      let digits = encodeColumns(w, day, times, values, resolutions, recordedAt, i, j);
      // Hourly sums for the daily pieces: scaled to whole numbers (exact) while they stay below 2^53.
      let scale = digits >= 0 ? 10 ** digits : 1;
      if (digits >= 0) {
        let most = 0;
        for (let x = i; x < j; x += 1) most = Math.max(most, Math.abs(values[x]!));
        if (most * scale * (j - i) >= EXACT) {
          digits = -1;
          scale = 1;
        }
      }
      sumDigits[k] = digits;
      const base = day * DAY_MS;
      for (let x = i; x < j; x += 1) {
        const slot = 24 * k + Math.floor((times[x]! - base) / HOUR_MS);
        hourCounts[slot] = hourCounts[slot]! + 1;
        hourSums[slot] = hourSums[slot]! + (digits >= 0 ? Math.round(values[x]! * scale) : values[x]!);
      }
      k += 1;
      i = j;
    }
  }
  dataStarts[blocks] = w.at;
  // An exact-size copy: the worker transfers the buffer.
  return { data: w.result(), dataStarts, counts, blockSeries, blockDays, hourCounts, hourSums, sumDigits };
}

/** The COPY payload (header, rows, trailer) of whole rows written by `fill`. */
export function copyPayload(capacity: number, fill: (w: ByteWriter) => void): Uint8Array {
  const w = new ByteWriter(capacity + COPY_HEADER.length + 2);
  w.ensure(COPY_HEADER.length);
  w.bytes.set(COPY_HEADER, 0);
  w.at = COPY_HEADER.length;
  fill(w);
  w.ensure(COPY_TRAILER.length);
  w.bytes.set(COPY_TRAILER, w.at);
  w.at += COPY_TRAILER.length;
  return w.bytes.subarray(0, w.at);
}
