// Register-day blocks: how the PostgreSQL store keeps readings (src/store/migrations/004_reading_blocks.sql,
// docs/meter-data.md "Register-day blocks"). One row per register and UTC day holds that day's
// readings in `data` and their hourly rollups in `hours`, both big-endian so that SQL can build
// them too (int4send/float8send; the migration of the row table does):
//
//   data   u8 version (1), u8 flags, i32 n, then
//          times        flags&1 ? i32 first offset, i32 step      : n × i32 offset   (ms since the UTC day began)
//          resolutions  flags&2 ? i32 seconds                     : n × i32
//          updatedAt    flags&4 ? f64 UTC ms                      : n × f64
//          values       n × f64
//   hours  i32 mask (bit h: UTC hour h has readings), then for each such hour ascending:
//          i32 count, f64 sum, f64 latest updatedAt                               (20 bytes)
//   extents  for each hour of the mask ascending: f64 min, f64 max               (16 bytes)
//   days   i32 k (pieces; 0 = not computed: read the hours instead), then k pieces
//          i32 start (ms since the UTC day began; the first 0), i32 count, f64 sum, f64 latest updatedAt
//          zero-padded to DAYS_BYTES. The pieces cut the UTC day at the local midnights of the
//          register's time zone (migration 006): a local day is the sum of the pieces in it,
//          one or two a day instead of 24 hours. Readers check that each piece lies inside one
//          local day of the zone as it is now (aggregate.ts), so pieces of a former zone, or
//          of time-zone rules since changed, are never summed into the wrong day.
//
// The rollups the queries read (count, sum, updatedAt) are kept apart from min and max, so a
// daily or hourly question ships 20 bytes per hour, not 36. 96 quarter-hours with one resolution
// and one updatedAt take 782 bytes of data, 484 of hours and 384 of extents: a 1.7 kB row, below
// PostgreSQL's TOAST threshold (stored inline, not compressed).
// Plain typed-array work, shared by the worker (building blocks from a parsed body) and the main
// thread (merging corrections, reading).
import { COPY_HEADER } from './pgCopy.ts';

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;
export const SLOT_BYTES = 20;
export const EXTENT_BYTES = 16;
export const DAY_PIECE_BYTES = 24;
/** Pieces a UTC day can have: three (two local midnights in it) covers every zone. */
const MAX_DAY_PIECES = 3;
/** Size of `days`: fixed, so that the worker reserves it in the COPY rows it encodes and the
 * main thread, which knows the registers' zones, fills it in place (fillBlockDays). */
export const DAYS_BYTES = 4 + MAX_DAY_PIECES * DAY_PIECE_BYTES;
const VERSION = 1;
const REGULAR = 1;
const ONE_RESOLUTION = 2;
const ONE_UPDATED = 4;

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

/** Size of `data` for these readings. */
function dataSize(n: number, regular: boolean, oneResolution: boolean, oneUpdated: boolean): number {
  return 6 + (regular ? 8 : 4 * n) + (oneResolution ? 4 : 4 * n) + (oneUpdated ? 8 : 8 * n) + 8 * n;
}

/** Writes the `data` of readings [from, to) of the columns at `at`; returns the end. */
export function writeData(view: DataView, at: number, day: number, times: ArrayLike<number>, values: ArrayLike<number>, resolutions: ArrayLike<number>, updated: ArrayLike<number> | number, from: number, to: number): number {
  const n = to - from;
  const base = day * DAY_MS;
  const step = n > 1 ? times[from + 1]! - times[from]! : 0;
  let regular = true;
  let oneResolution = true;
  let oneUpdated = typeof updated === 'number';
  for (let i = from + 1; i < to; i += 1) {
    if (times[i]! - times[i - 1]! !== step) regular = false;
    if (resolutions[i] !== resolutions[from]) oneResolution = false;
  }
  if (typeof updated !== 'number') {
    oneUpdated = true;
    for (let i = from + 1; i < to; i += 1) if (updated[i] !== updated[from]) oneUpdated = false;
  }
  view.setUint8(at, VERSION);
  view.setUint8(at + 1, (regular ? REGULAR : 0) | (oneResolution ? ONE_RESOLUTION : 0) | (oneUpdated ? ONE_UPDATED : 0));
  view.setInt32(at + 2, n);
  at += 6;
  if (regular) {
    view.setInt32(at, times[from]! - base);
    view.setInt32(at + 4, step);
    at += 8;
  } else {
    for (let i = from; i < to; i += 1, at += 4) view.setInt32(at, times[i]! - base);
  }
  if (oneResolution) {
    view.setInt32(at, resolutions[from]!);
    at += 4;
  } else {
    for (let i = from; i < to; i += 1, at += 4) view.setInt32(at, resolutions[i]!);
  }
  if (typeof updated === 'number') {
    view.setFloat64(at, updated);
    at += 8;
  } else if (oneUpdated) {
    view.setFloat64(at, updated[from]!);
    at += 8;
  } else {
    for (let i = from; i < to; i += 1, at += 8) view.setFloat64(at, updated[i]!);
  }
  for (let i = from; i < to; i += 1, at += 8) view.setFloat64(at, values[i]!);
  return at;
}

/** Writes the `hours` rollups of readings [from, to) (all in UTC day `day`) at `at` and their
 * `extents` at `extentsAt`; returns both ends. */
export function writeHours(view: DataView, at: number, extentsAt: number, day: number, times: ArrayLike<number>, values: ArrayLike<number>, updated: ArrayLike<number> | number, from: number, to: number): [number, number] {
  const base = day * DAY_MS;
  const maskAt = at;
  let mask = 0;
  at += 4;
  let i = from;
  while (i < to) {
    const hour = Math.floor((times[i]! - base) / HOUR_MS);
    const hourEnd = base + (hour + 1) * HOUR_MS;
    let count = 0;
    let sum = 0;
    let min = Infinity;
    let max = -Infinity;
    let latest = -Infinity;
    for (; i < to && times[i]! < hourEnd; i += 1) {
      const v = values[i]!;
      count += 1;
      sum += v;
      if (v < min) min = v;
      if (v > max) max = v;
      const u = typeof updated === 'number' ? updated : updated[i]!;
      if (u > latest) latest = u;
    }
    mask |= 1 << hour;
    view.setInt32(at, count);
    view.setFloat64(at + 4, sum);
    view.setFloat64(at + 12, latest);
    at += SLOT_BYTES;
    view.setFloat64(extentsAt, min);
    view.setFloat64(extentsAt + 8, max);
    extentsAt += EXTENT_BYTES;
  }
  view.setInt32(maskAt, mask);
  return [at, extentsAt];
}

interface DataLayout {
  view: DataView;
  n: number;
  regular: boolean;
  first: number;
  step: number;
  timesAt: number;
  oneUpdated: boolean;
  updatedAt: number;
  valuesAt: number;
}

/** Where the parts of a block's `data` are (times as offsets from the UTC day). */
function dataLayout(data: Uint8Array): DataLayout {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (view.getUint8(0) !== VERSION) throw new Error(`reading block version ${view.getUint8(0)} is not known`);
  const flags = view.getUint8(1);
  const n = view.getInt32(2);
  const regular = (flags & REGULAR) !== 0;
  const timesAt = 6;
  const resolutionsAt = timesAt + (regular ? 8 : 4 * n);
  const updatedAt = resolutionsAt + (flags & ONE_RESOLUTION ? 4 : 4 * n);
  const oneUpdated = (flags & ONE_UPDATED) !== 0;
  return { view, n, regular, first: regular ? view.getInt32(timesAt) : 0, step: regular ? view.getInt32(timesAt + 4) : 0, timesAt, oneUpdated, updatedAt, valuesAt: updatedAt + (oneUpdated ? 8 : 8 * n) };
}

/** Writes `days` (DAYS_BYTES at `at`) of a block: its readings summed per piece of its UTC day
 * between the local midnights `cuts` (ms since the UTC day began, ascending, each inside the
 * day; none for a zone whose midnight is the UTC one), from the hourly rollups where a whole
 * hour lies in one piece and from the readings (`data`) of an hour a midnight falls inside
 * (zones at 30- and 45-minute offsets). More cuts than pieces can hold: k = 0, hours are read. */
export function writeDays(view: DataView, at: number, data: Uint8Array, hours: Uint8Array, cuts: ArrayLike<number>): void {
  new Uint8Array(view.buffer, view.byteOffset + at, DAYS_BYTES).fill(0);
  const k = cuts.length + 1;
  if (k > MAX_DAY_PIECES) return;
  const counts = [0, 0, 0];
  const sums = [0, 0, 0];
  const latest = [-Infinity, -Infinity, -Infinity];
  const pieceOf = (offset: number) => {
    let p = 0;
    while (p < cuts.length && cuts[p]! <= offset) p += 1;
    return p;
  };
  const hv = new DataView(hours.buffer, hours.byteOffset, hours.byteLength);
  const mask = hv.getInt32(0);
  let slot = 4;
  let layout: DataLayout | undefined;
  for (let h = 0; h < 24; h += 1) {
    if (!(mask & (1 << h))) continue;
    const h0 = h * HOUR_MS;
    const p = pieceOf(h0);
    if (p < cuts.length && cuts[p]! < h0 + HOUR_MS) {
      // The hour a midnight cuts: its readings, read in place (no decode of the whole block).
      const r = (layout ??= dataLayout(data));
      for (let i = 0; i < r.n; i += 1) {
        const offset = r.regular ? r.first + i * r.step : r.view.getInt32(r.timesAt + 4 * i);
        if (offset < h0) continue;
        if (offset >= h0 + HOUR_MS) break;
        const q = pieceOf(offset);
        const u = r.oneUpdated ? r.view.getFloat64(r.updatedAt) : r.view.getFloat64(r.updatedAt + 8 * i);
        counts[q] = counts[q]! + 1;
        sums[q] = sums[q]! + r.view.getFloat64(r.valuesAt + 8 * i);
        if (u > latest[q]!) latest[q] = u;
      }
    } else {
      counts[p] = counts[p]! + hv.getInt32(slot);
      sums[p] = sums[p]! + hv.getFloat64(slot + 4);
      const u = hv.getFloat64(slot + 12);
      if (u > latest[p]!) latest[p] = u;
    }
    slot += SLOT_BYTES;
  }
  view.setInt32(at, k);
  for (let p = 0; p < k; p += 1) {
    const pieceAt = at + 4 + p * DAY_PIECE_BYTES;
    view.setInt32(pieceAt, p === 0 ? 0 : cuts[p - 1]!);
    view.setInt32(pieceAt + 4, counts[p]!);
    view.setFloat64(pieceAt + 8, sums[p]!);
    view.setFloat64(pieceAt + 16, counts[p]! > 0 ? latest[p]! : 0);
  }
}

/** Most bytes data, hours and extents can take for n readings. */
export function maxBlockBytes(n: number): number {
  return dataSize(n, false, false, false) + 4 + 24 * (SLOT_BYTES + EXTENT_BYTES);
}

/** Readings of a block's `data`. */
export function decodeData(data: Uint8Array, day: number): BlockReadings {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (view.getUint8(0) !== VERSION) throw new Error(`reading block version ${view.getUint8(0)} is not known`);
  const flags = view.getUint8(1);
  const n = view.getInt32(2);
  const base = day * DAY_MS;
  const times = new Float64Array(n);
  const values = new Float64Array(n);
  const resolutions = new Int32Array(n);
  const updatedAt = new Float64Array(n);
  let at = 6;
  if (flags & REGULAR) {
    const first = base + view.getInt32(at);
    const step = view.getInt32(at + 4);
    for (let i = 0; i < n; i += 1) times[i] = first + i * step;
    at += 8;
  } else {
    for (let i = 0; i < n; i += 1, at += 4) times[i] = base + view.getInt32(at);
  }
  if (flags & ONE_RESOLUTION) {
    resolutions.fill(view.getInt32(at));
    at += 4;
  } else {
    for (let i = 0; i < n; i += 1, at += 4) resolutions[i] = view.getInt32(at);
  }
  if (flags & ONE_UPDATED) {
    updatedAt.fill(view.getFloat64(at));
    at += 8;
  } else {
    for (let i = 0; i < n; i += 1, at += 8) updatedAt[i] = view.getFloat64(at);
  }
  for (let i = 0; i < n; i += 1, at += 8) values[i] = view.getFloat64(at);
  return { times, values, resolutions, updatedAt };
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
  const take = (src: BlockReadings, at: number) => {
    out.times[k] = src.times[at]!;
    out.values[k] = src.values[at]!;
    out.resolutions[k] = src.resolutions[at]!;
    out.updatedAt[k] = src.updatedAt[at]!;
    k += 1;
  };
  while (i < a.times.length || j < b.times.length) {
    if (j >= b.times.length || (i < a.times.length && a.times[i]! < b.times[j]!)) take(a, i++);
    else {
      if (i < a.times.length && a.times[i] === b.times[j]) i += 1;
      take(b, j++);
    }
  }
  return { times: out.times.subarray(0, k), values: out.values.subarray(0, k), resolutions: out.resolutions.subarray(0, k), updatedAt: out.updatedAt.subarray(0, k) };
}

// ---- COPY rows of reading_blocks (register_id, day, n, updated_max, data, hours, extents, days) ----

export const BLOCK_COPY_COLUMNS = '(register_id, day, n, updated_max, data, hours, extents, days)';
/** Offset of the register id inside a block's COPY row. */
export const BLOCK_REGISTER_ID_OFFSET = 2 + 4;
/** Bytes of a row besides data, hours and extents. */
const ROW_FIXED = 2 + (4 + 4) + (4 + 4) + (4 + 4) + (4 + 8) + 4 + 4 + 4 + (4 + DAYS_BYTES);

/** Blocks encoded as COPY rows: block k is row k, starting at byte rowStarts[k] of `copy`
 * (rowStarts[blocks] = where the trailer starts), of series blockSeries[k] and UTC day blockDays[k]. */
export interface EncodedBlocks {
  copy: Uint8Array;
  rowStarts: Int32Array;
  blockSeries: Int32Array;
  blockDays: Int32Array;
}

/** Writes one COPY row; returns its end. `registerId` may be 0 (filled in later). */
function writeRow(view: DataView, at: number, registerId: number, day: number, times: ArrayLike<number>, values: ArrayLike<number>, resolutions: ArrayLike<number>, updated: ArrayLike<number> | number, from: number, to: number): number {
  let latest = -Infinity;
  if (typeof updated === 'number') latest = updated;
  else for (let i = from; i < to; i += 1) if (updated[i]! > latest) latest = updated[i]!;
  view.setInt16(at, 8);
  view.setInt32(at + 2, 4);
  view.setInt32(at + 6, registerId);
  view.setInt32(at + 10, 4);
  view.setInt32(at + 14, day);
  view.setInt32(at + 18, 4);
  view.setInt32(at + 22, to - from);
  view.setInt32(at + 26, 8);
  view.setFloat64(at + 30, latest);
  const dataEnd = writeData(view, at + 42, day, times, values, resolutions, updated, from, to);
  view.setInt32(at + 38, dataEnd - (at + 42));
  // Extents go after the largest hours can be, then move up behind the hours written.
  const slots = Math.min(24, to - from);
  const hoursAt = dataEnd + 4;
  const [hoursEnd, extentsEnd] = writeHours(view, hoursAt, hoursAt + 4 + slots * SLOT_BYTES + 4, day, times, values, updated, from, to);
  view.setInt32(dataEnd, hoursEnd - hoursAt);
  const extentsLength = extentsEnd - (hoursAt + 4 + slots * SLOT_BYTES + 4);
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  bytes.copyWithin(hoursEnd + 4, hoursAt + 4 + slots * SLOT_BYTES + 4, extentsEnd);
  view.setInt32(hoursEnd, extentsLength);
  // `days`: not computed yet (k = 0); fillBlockDays writes it once the register's zone is known.
  const daysAt = hoursEnd + 4 + extentsLength;
  view.setInt32(daysAt, DAYS_BYTES);
  bytes.fill(0, daysAt + 4, daysAt + 4 + DAYS_BYTES);
  return daysAt + 4 + DAYS_BYTES;
}

/**
 * The blocks of grouped readings (series s: rows offsets[s] .. offsets[s+1]-1, time-ordered,
 * unique times), as COPY rows with register ids 0. `updated` is one updatedAt for all rows
 * (a write) or one per row.
 */
export function encodeBlocks(offsets: Int32Array, times: Float64Array, values: Float64Array, resolutions: Int32Array, updated: Float64Array | number, registerIds?: ArrayLike<number>): EncodedBlocks {
  const series = offsets.length - 1;
  const n = times.length;
  // Count blocks first: exact sizes for the index arrays, a worst-case size for the bytes.
  let blocks = 0;
  for (let s = 0; s < series; s += 1) {
    let lastDay = NaN;
    for (let i = offsets[s]!; i < offsets[s + 1]!; i += 1) {
      const day = dayOf(times[i]!);
      if (day !== lastDay) blocks += 1;
      lastDay = day;
      // Skip to the day's end quickly for regular data.
      const dayEnd = (day + 1) * DAY_MS;
      while (i + 1 < offsets[s + 1]! && times[i + 1]! < dayEnd) i += 1;
    }
  }
  const copy = new Uint8Array(COPY_HEADER.length + blocks * (ROW_FIXED + 4 + 24 * (SLOT_BYTES + EXTENT_BYTES) + 6 + 4 + 8 + 8 + 8) + n * 32 + 2);
  copy.set(COPY_HEADER, 0);
  const view = new DataView(copy.buffer);
  const rowStarts = new Int32Array(blocks + 1);
  const blockSeries = new Int32Array(blocks);
  const blockDays = new Int32Array(blocks);
  let at = COPY_HEADER.length;
  let k = 0;
  for (let s = 0; s < series; s += 1) {
    let i = offsets[s]!;
    const end = offsets[s + 1]!;
    while (i < end) {
      const day = dayOf(times[i]!);
      const dayEnd = (day + 1) * DAY_MS;
      let j = i + 1;
      while (j < end && times[j]! < dayEnd) j += 1;
      rowStarts[k] = at;
      blockSeries[k] = s;
      blockDays[k] = day;
      at = writeRow(view, at, registerIds ? registerIds[s]! : 0, day, times, values, resolutions, updated, i, j);
      k += 1;
      i = j;
    }
  }
  rowStarts[blocks] = at;
  view.setInt16(at, -1);
  // An exact-size copy: the worker transfers the buffer, and the worst-case one is about twice as large.
  return { copy: copy.slice(0, at + 2), rowStarts, blockSeries, blockDays };
}

/** One block's COPY row (no header or trailer) for merged readings. */
export function encodeBlockRow(registerId: number, day: number, r: BlockReadings): Uint8Array {
  const out = new Uint8Array(ROW_FIXED + maxBlockBytes(r.times.length));
  const end = writeRow(new DataView(out.buffer), 0, registerId, day, r.times, r.values, r.resolutions, r.updatedAt, 0, r.times.length);
  return out.subarray(0, end);
}

/** The `data` field of COPY row k (a view into `copy`). */
export function rowData(blocks: EncodedBlocks, k: number): Uint8Array {
  const view = new DataView(blocks.copy.buffer, blocks.copy.byteOffset, blocks.copy.byteLength);
  const at = blocks.rowStarts[k]! + 42;
  return blocks.copy.subarray(at, at + view.getInt32(at - 4));
}

/** The `data` and `hours` fields of the COPY row at `rowStart` of `row`, and where its `days` bytes start. */
function rowFields(row: Uint8Array, rowStart: number): { data: Uint8Array; hours: Uint8Array; daysAt: number } {
  const view = new DataView(row.buffer, row.byteOffset, row.byteLength);
  const dataAt = rowStart + 42;
  const dataEnd = dataAt + view.getInt32(dataAt - 4);
  const hoursEnd = dataEnd + 4 + view.getInt32(dataEnd);
  const extentsEnd = hoursEnd + 4 + view.getInt32(hoursEnd);
  return { data: row.subarray(dataAt, dataEnd), hours: row.subarray(dataEnd + 4, hoursEnd), daysAt: extentsEnd + 4 };
}

/** The columns of the COPY row at `rowStart` of `row` (views into it), for an UPDATE of a stored block. */
export function blockRowColumns(row: Uint8Array, rowStart: number): { n: number; updatedMax: number; data: Uint8Array; hours: Uint8Array; extents: Uint8Array; days: Uint8Array } {
  const view = new DataView(row.buffer, row.byteOffset, row.byteLength);
  const f = rowFields(row, rowStart);
  const extentsEnd = f.daysAt - 4;
  const extentsAt = f.hours.byteOffset - row.byteOffset + f.hours.byteLength + 4;
  const daysLength = view.getInt32(f.daysAt - 4);
  return {
    n: view.getInt32(rowStart + 22),
    updatedMax: view.getFloat64(rowStart + 30),
    data: f.data,
    hours: f.hours,
    extents: row.subarray(extentsAt, extentsEnd),
    days: row.subarray(f.daysAt, f.daysAt + daysLength),
  };
}

/** Writes the `days` of the COPY row at `rowStart` of `row` (a row of encodeBlocks or
 * encodeBlockRow) for these local midnights of its UTC day (see writeDays). */
export function fillRowDays(row: Uint8Array, rowStart: number, cuts: ArrayLike<number>): void {
  const f = rowFields(row, rowStart);
  writeDays(new DataView(row.buffer, row.byteOffset, row.byteLength), f.daysAt, f.data, f.hours, cuts);
}

/** Writes each block's register id (series → id). */
export function fillBlockRegisterIds(blocks: EncodedBlocks, registerIds: ArrayLike<number>): void {
  const view = new DataView(blocks.copy.buffer, blocks.copy.byteOffset, blocks.copy.byteLength);
  for (let k = 0; k < blocks.blockSeries.length; k += 1) view.setInt32(blocks.rowStarts[k]! + BLOCK_REGISTER_ID_OFFSET, registerIds[blocks.blockSeries[k]!]!);
}
