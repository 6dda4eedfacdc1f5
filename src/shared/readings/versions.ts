// Reading versions of one register-day block (bitemporal: a reading's time, and the instant its
// value was recorded). A block keeps its current readings (`data`, each with the recordedAt of
// its value) and the versions they superseded (`history`: value, resolution, recordedAt and the
// supersededAt that ended it), so that
//   - a correction adds to the history only the readings whose value or resolution changed
//     (bytes in proportion to them, not to the day); a reading posted again unchanged keeps its
//     version and recordedAt;
//   - the block as recorded at any instant T is rebuilt from both: for each time, the version
//     with recordedAt ≤ T < supersededAt (the current one has no supersededAt);
//   - a block whose latest recordedAt is ≤ T is, as of T, what it is now (any version superseded
//     after T was superseded by one recorded after T), so only blocks written after T are rebuilt.
// Plain typed-array work shared by the main thread (writes, reads) and the worker (aggregation).
import { ByteWriter, decodeColumns, encodeColumns, type Columns, type ColumnsScratch } from './codec.ts';
import { copyReading, type BlockReadings } from './blocks.ts';

/** Superseded versions of a block, by time then recordedAt. */
export interface History {
  times: Float64Array;
  values: Float64Array;
  resolutions: Int32Array;
  recordedAt: Float64Array;
  supersededAt: Float64Array;
}

export const EMPTY_HISTORY: History = { times: new Float64Array(0), values: new Float64Array(0), resolutions: new Int32Array(0), recordedAt: new Float64Array(0), supersededAt: new Float64Array(0) };

export function encodeHistory(day: number, h: History): Uint8Array | null {
  if (h.times.length === 0) return null;
  const w = new ByteWriter(64 + 4 * h.times.length);
  encodeColumns(w, day, h.times, h.values, h.resolutions, h.recordedAt, 0, h.times.length, h.supersededAt);
  return w.result();
}

export function decodeHistory(bytes: Uint8Array | null | undefined, day: number, scratch?: ColumnsScratch): History {
  if (!bytes || bytes.length === 0) return EMPTY_HISTORY;
  const c: Columns = decodeColumns(bytes, day, scratch);
  if (!c.supersededAt) throw new RangeError('reading block history without supersededAt');
  return { times: c.times, values: c.values, resolutions: c.resolutions, recordedAt: c.recordedAt, supersededAt: c.supersededAt };
}

/** The earliest supersededAt of a history (what a retention purge looks for), or null. */
export function historyMin(h: History): number | null {
  let min = Infinity;
  for (const s of h.supersededAt) if (s < min) min = s;
  return min === Infinity ? null : min;
}

/** A block after a write: its current readings, its history, and whether anything changed. */
export interface Corrected {
  current: BlockReadings;
  history: History;
  changed: boolean;
  /** The history grew (the history column must be written). */
  superseded: number;
}

function readings(n: number): BlockReadings {
  return { times: new Float64Array(n), values: new Float64Array(n), resolutions: new Int32Array(n), updatedAt: new Float64Array(n) };
}

function cut(r: BlockReadings, k: number): BlockReadings {
  return { times: r.times.subarray(0, k), values: r.values.subarray(0, k), resolutions: r.resolutions.subarray(0, k), updatedAt: r.updatedAt.subarray(0, k) };
}

/** Merges two histories (each by time, recordedAt) into one. */
export function mergeHistories(a: History, b: History): History {
  if (b.times.length === 0) return a;
  if (a.times.length === 0) return b;
  const n = a.times.length + b.times.length;
  const out: History = { times: new Float64Array(n), values: new Float64Array(n), resolutions: new Int32Array(n), recordedAt: new Float64Array(n), supersededAt: new Float64Array(n) };
  let i = 0;
  let j = 0;
  for (let k = 0; k < n; k += 1) {
    const fromA = j >= b.times.length || (i < a.times.length && (a.times[i]! < b.times[j]! || (a.times[i] === b.times[j] && a.recordedAt[i]! <= b.recordedAt[j]!)));
    const src = fromA ? a : b;
    const at = fromA ? i++ : j++;
    out.times[k] = src.times[at]!;
    out.values[k] = src.values[at]!;
    out.resolutions[k] = src.resolutions[at]!;
    out.recordedAt[k] = src.recordedAt[at]!;
    out.supersededAt[k] = src.supersededAt[at]!;
  }
  return out;
}

/**
 * `incoming` (time-ordered, unique times, each with the recordedAt of this write as updatedAt)
 * written over a stored block: an incoming reading whose value (bit for bit) or resolution
 * differs from the stored one at its time replaces it, and the stored version goes to the history
 * with supersededAt = the incoming recordedAt; an equal one leaves the stored version as it is.
 */
export function correct(stored: BlockReadings, history: History, incoming: BlockReadings): Corrected {
  const a = stored;
  const b = incoming;
  const out = readings(a.times.length + b.times.length);
  const gone = { times: [] as number[], values: [] as number[], resolutions: [] as number[], recordedAt: [] as number[], supersededAt: [] as number[] };
  let changed = false;
  let i = 0;
  let j = 0;
  let k = 0;
  const take = (src: BlockReadings, at: number) => copyReading(out, k++, src, at);
  while (i < a.times.length || j < b.times.length) {
    if (j >= b.times.length || (i < a.times.length && a.times[i]! < b.times[j]!)) take(a, i++);
    else if (i < a.times.length && a.times[i] === b.times[j]) {
      if (Object.is(a.values[i], b.values[j]) && a.resolutions[i] === b.resolutions[j]) take(a, i);
      else {
        gone.times.push(a.times[i]!);
        gone.values.push(a.values[i]!);
        gone.resolutions.push(a.resolutions[i]!);
        gone.recordedAt.push(a.updatedAt[i]!);
        gone.supersededAt.push(b.updatedAt[j]!);
        take(b, j);
        changed = true;
      }
      i += 1;
      j += 1;
    } else {
      take(b, j++);
      changed = true;
    }
  }
  const added: History = {
    times: Float64Array.from(gone.times),
    values: Float64Array.from(gone.values),
    resolutions: Int32Array.from(gone.resolutions),
    recordedAt: Float64Array.from(gone.recordedAt),
    supersededAt: Float64Array.from(gone.supersededAt),
  };
  return { current: cut(out, k), history: mergeHistories(history, added), changed, superseded: gone.times.length };
}

/** The block as recorded at `asOf`: for each time the version with recordedAt ≤ asOf < supersededAt
 * (into `scratch` when given: valid until its next use). */
export function asOfReadings(current: BlockReadings, history: History, asOf: number, scratch?: ColumnsScratch): BlockReadings {
  const h = history;
  let out: BlockReadings;
  if (scratch) {
    const c = scratch.columns(current.times.length, false);
    out = { times: c.times, values: c.values, resolutions: c.resolutions, updatedAt: c.recordedAt };
  } else out = readings(current.times.length);
  let k = 0;
  let j = 0;
  for (let i = 0; i < current.times.length; i += 1) {
    const t = current.times[i]!;
    // Superseded versions of times before this one are of readings no longer current: none, as
    // readings are never removed one by one; skipped all the same.
    while (j < h.times.length && h.times[j]! < t) j += 1;
    if (current.updatedAt[i]! <= asOf) {
      out.times[k] = t;
      out.values[k] = current.values[i]!;
      out.resolutions[k] = current.resolutions[i]!;
      out.updatedAt[k] = current.updatedAt[i]!;
      k += 1;
      while (j < h.times.length && h.times[j] === t) j += 1;
      continue;
    }
    for (; j < h.times.length && h.times[j] === t; j += 1) {
      if (h.recordedAt[j]! <= asOf && asOf < h.supersededAt[j]!) {
        out.times[k] = t;
        out.values[k] = h.values[j]!;
        out.resolutions[k] = h.resolutions[j]!;
        out.updatedAt[k] = h.recordedAt[j]!;
        k += 1;
      }
    }
  }
  return cut(out, k);
}

/** The history without the versions superseded before `cutoff` (a retention purge). */
export function purgeHistory(h: History, cutoff: number): History {
  let kept = 0;
  for (const s of h.supersededAt) if (s >= cutoff) kept += 1;
  if (kept === h.times.length) return h;
  const out: History = { times: new Float64Array(kept), values: new Float64Array(kept), resolutions: new Int32Array(kept), recordedAt: new Float64Array(kept), supersededAt: new Float64Array(kept) };
  let k = 0;
  for (let i = 0; i < h.times.length; i += 1) {
    if (h.supersededAt[i]! < cutoff) continue;
    out.times[k] = h.times[i]!;
    out.values[k] = h.values[i]!;
    out.resolutions[k] = h.resolutions[i]!;
    out.recordedAt[k] = h.recordedAt[i]!;
    out.supersededAt[k] = h.supersededAt[i]!;
    k += 1;
  }
  return out;
}

/** One version of a reading: supersededAt NaN for the current one. */
export interface VersionColumns {
  times: number[];
  values: number[];
  resolutions: number[];
  recordedAt: number[];
  supersededAt: number[];
}

/** Every version of each time in [start, end) that has more than one (superseded ones by
 * recordedAt, then the current), appended to `out`; returns how many were appended. */
export function versionsOf(current: BlockReadings, history: History, start: number, end: number, out: VersionColumns): number {
  const h = history;
  let added = 0;
  let i = 0;
  for (let j = 0; j < h.times.length; ) {
    const t = h.times[j]!;
    let e = j;
    while (e < h.times.length && h.times[e] === t) e += 1;
    if (t >= start && t < end) {
      for (let x = j; x < e; x += 1) {
        out.times.push(t);
        out.values.push(h.values[x]!);
        out.resolutions.push(h.resolutions[x]!);
        out.recordedAt.push(h.recordedAt[x]!);
        out.supersededAt.push(h.supersededAt[x]!);
        added += 1;
      }
      while (i < current.times.length && current.times[i]! < t) i += 1;
      if (i < current.times.length && current.times[i] === t) {
        out.times.push(t);
        out.values.push(current.values[i]!);
        out.resolutions.push(current.resolutions[i]!);
        out.recordedAt.push(current.updatedAt[i]!);
        out.supersededAt.push(NaN);
        added += 1;
      }
    }
    j = e;
  }
  return added;
}
