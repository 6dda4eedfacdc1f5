// Buckets (sum or average, latest updatedAt) of one register from its register-day blocks
// (blocks.ts), the way the PostgreSQL store answers GET /api/readings at a resolution and the
// hourly averages. Each UTC hour of a block with readings is taken from its rollup when the hour
// lies wholly inside the range asked and inside one bucket; otherwise (a bucket edge or the
// range's end inside the hour: resolutions that are not whole hours, local midnights at 30- or
// 45-minute offsets, ranges that start mid-hour) the hour's readings are aggregated one by one
// from the block's data. `rawNeeded` names the blocks whose data that takes, so the store fetches
// data only for them. Local days are taken from a block's daily pieces (`days`) instead when
// every piece with readings lies inside the range and inside one local day as the bucketing
// (the zone's days now) has them; `daysMissing` names the blocks where they do not, whose hours
// and data the store then fetches. Buckets are visited in time order, so one running bucket suffices.
import { DAY_MS, DAY_PIECE_BYTES, HOUR_MS, SLOT_BYTES, decodeData, type BlockReadings } from './blocks.ts';

/** A block as read: `hours` null = aggregate from data only; `data` null = not fetched; `days`
 * (pieces between local midnights) used for local days when present and fitting. */
export interface StoredBlock {
  day: number;
  data: Uint8Array | null;
  hours: Uint8Array | null;
  days?: Uint8Array | null;
  /** The block's readings decoded already (as recorded at an earlier instant): used instead of
   * data and rollups. */
  readings?: BlockReadings;
}

/** Buckets of `ms` aligned to the UTC epoch, or local days listed as [starts[k], ends[k]) (UTC ms). */
export type Bucketing = { kind: 'epoch'; ms: number } | { kind: 'days'; starts: Float64Array; ends: Float64Array };

export interface BucketColumns {
  timestamps: Float64Array;
  values: Float64Array;
  /** Real bucket lengths in seconds. */
  resolutions: Int32Array;
  updatedAt: Float64Array;
}

/** Finds the bucket of instants asked in non-decreasing order. */
class BucketCursor {
  private k = 0;
  /** Start and end of the last bucket found (NaN: none). */
  start = NaN;
  end = NaN;

  constructor(private readonly b: Bucketing) {}

  /** Moves to the bucket holding t; false when no bucket holds it. */
  find(t: number): boolean {
    const b = this.b;
    if (b.kind === 'epoch') {
      this.start = Math.floor(t / b.ms) * b.ms;
      this.end = this.start + b.ms;
      return true;
    }
    while (this.k < b.starts.length && b.ends[this.k]! <= t) this.k += 1;
    if (this.k < b.starts.length && b.starts[this.k]! <= t) {
      this.start = b.starts[this.k]!;
      this.end = b.ends[this.k]!;
      return true;
    }
    return false;
  }
}

const SKIP = 0;
const WHOLE = 1;
const RAW = 2;

/** How the UTC hour [t0, t0 + 1 h) is taken; moves the cursor to t0's bucket. */
function classify(cursor: BucketCursor, t0: number, start: number, end: number): number {
  const t1 = t0 + HOUR_MS;
  if (t1 <= start || t0 >= end) return SKIP;
  if (t0 < start || t1 > end) return RAW;
  if (!cursor.find(t0) || cursor.end < t1) return RAW;
  return WHOLE;
}

/** Whether the block's daily pieces answer local-day buckets: computed (k > 0) and each piece with
 * readings inside [start, end) and inside one bucket. `cursor` only moves forward. */
function piecesAnswer(cursor: BucketCursor, block: StoredBlock, start: number, end: number): boolean {
  const days = block.days;
  if (!days || days.byteLength < 4) return false;
  const view = new DataView(days.buffer, days.byteOffset, days.byteLength);
  const k = view.getInt32(0);
  if (k === 0) return false;
  const dayStart = block.day * DAY_MS;
  for (let p = 0; p < k; p += 1) {
    const at = 4 + p * DAY_PIECE_BYTES;
    if (view.getInt32(at + 4) === 0) continue;
    const a = dayStart + view.getInt32(at);
    const b = p + 1 < k ? dayStart + view.getInt32(at + DAY_PIECE_BYTES) : dayStart + DAY_MS;
    if (a < start || b > end || !cursor.find(a) || cursor.end < b) return false;
  }
  return true;
}

/** Indexes of the blocks (one register's, in day order) whose daily pieces do not answer these
 * local-day buckets: their hours (and data) are needed. */
export function daysMissing(blocks: readonly StoredBlock[], bucketing: Bucketing, start: number, end: number): number[] {
  const cursor = new BucketCursor(bucketing);
  const out: number[] = [];
  blocks.forEach((block, i) => {
    if (!block.readings && !piecesAnswer(cursor, block, start, end)) out.push(i);
  });
  return out;
}

/** Indexes of the blocks (one register's, in day order) whose readings must be read one by one. */
export function rawNeeded(blocks: readonly StoredBlock[], bucketing: Bucketing, start: number, end: number): number[] {
  const cursor = new BucketCursor(bucketing);
  const out: number[] = [];
  // Buckets of whole hours from the epoch never cut an hour: only the range's ends can.
  const ends = bucketing.kind === 'epoch' && bucketing.ms % HOUR_MS === 0 ? [Math.floor(start / DAY_MS), Math.floor((end - 1) / DAY_MS)] : undefined;
  blocks.forEach((block, i) => {
    if (block.readings) return;
    if (!block.hours) return void out.push(i);
    if (ends && block.day !== ends[0] && block.day !== ends[1]) return;
    const view = new DataView(block.hours.buffer, block.hours.byteOffset, block.hours.byteLength);
    const mask = view.getInt32(0);
    for (let h = 0; h < 24; h += 1) {
      if (!(mask & (1 << h))) continue;
      if (classify(cursor, block.day * DAY_MS + h * HOUR_MS, start, end) === RAW) return void out.push(i);
    }
  });
  return out;
}

/** Hourly buckets straight from the hourly rollups (one slot = one bucket), or undefined when
 * an hour is cut by the range and needs its readings. The hot path of the hourly averages. */
function hourly(blocks: readonly StoredBlock[], summed: boolean, start: number, end: number): BucketColumns | undefined {
  const most = 24 * blocks.length;
  const ts = new Float64Array(most);
  const vs = new Float64Array(most);
  const us = new Float64Array(most);
  let k = 0;
  for (const block of blocks) {
    if (!block.hours) return undefined;
    const view = new DataView(block.hours.buffer, block.hours.byteOffset, block.hours.byteLength);
    const mask = view.getInt32(0);
    const dayStart = block.day * DAY_MS;
    let at = 4;
    for (let h = 0; h < 24; h += 1) {
      if (!(mask & (1 << h))) continue;
      const t0 = dayStart + h * HOUR_MS;
      if (t0 >= start && t0 + HOUR_MS <= end) {
        const count = view.getInt32(at);
        const sum = view.getFloat64(at + 4);
        ts[k] = t0;
        vs[k] = summed ? sum : sum / count;
        us[k] = view.getFloat64(at + 12);
        k += 1;
      } else if (t0 < end && t0 + HOUR_MS > start) return undefined;
      at += SLOT_BYTES;
    }
  }
  return { timestamps: ts.slice(0, k), values: vs.slice(0, k), resolutions: new Int32Array(k).fill(3600), updatedAt: us.slice(0, k) };
}

/** The buckets with data of one register's blocks (in day order) over [start, end). */
export function aggregateBlocks(blocks: readonly StoredBlock[], summed: boolean, bucketing: Bucketing, start: number, end: number): BucketColumns {
  if (bucketing.kind === 'epoch' && bucketing.ms === HOUR_MS) {
    const fast = hourly(blocks, summed, start, end);
    if (fast) return fast;
  }
  const cursor = new BucketCursor(bucketing);
  const ts: number[] = [];
  const vs: number[] = [];
  const rs: number[] = [];
  const us: number[] = [];
  let bucket = NaN;
  let bucketEnd = NaN;
  let sum = 0;
  let count = 0;
  let latest = -Infinity;
  const flush = () => {
    if (count > 0) {
      ts.push(bucket);
      vs.push(summed ? sum : sum / count);
      rs.push(Math.round((bucketEnd - bucket) / 1000));
      us.push(latest);
    }
    sum = 0;
    count = 0;
    latest = -Infinity;
  };
  const into = (b: number, e: number) => {
    if (b !== bucket) {
      flush();
      bucket = b;
      bucketEnd = e;
    }
  };
  const rawRange = (r: BlockReadings, from: number, to: number) => {
    for (let i = 0; i < r.times.length; i += 1) {
      const t = r.times[i]!;
      if (t < from || t >= to || t < start || t >= end) continue;
      if (!cursor.find(t)) continue;
      into(cursor.start, cursor.end);
      sum += r.values[i]!;
      count += 1;
      if (r.updatedAt[i]! > latest) latest = r.updatedAt[i]!;
    }
  };
  const pieces = bucketing.kind === 'days' ? new BucketCursor(bucketing) : undefined;
  for (const block of blocks) {
    const dayStart = block.day * DAY_MS;
    if (pieces && block.days && piecesAnswer(pieces, block, start, end)) {
      const view = new DataView(block.days.buffer, block.days.byteOffset, block.days.byteLength);
      const k = view.getInt32(0);
      for (let p = 0; p < k; p += 1) {
        const at = 4 + p * DAY_PIECE_BYTES;
        const n = view.getInt32(at + 4);
        if (n === 0) continue;
        cursor.find(dayStart + view.getInt32(at));
        into(cursor.start, cursor.end);
        count += n;
        sum += view.getFloat64(at + 8);
        const u = view.getFloat64(at + 16);
        if (u > latest) latest = u;
      }
      continue;
    }
    let readings: BlockReadings | undefined = block.readings;
    const raw = () => {
      if (readings) return readings;
      if (!block.data) throw new Error(`reading block ${block.day} needed without its data`);
      return (readings = decodeData(block.data, block.day));
    };
    if (readings || !block.hours) {
      rawRange(raw(), dayStart, dayStart + DAY_MS);
      continue;
    }
    const view = new DataView(block.hours.buffer, block.hours.byteOffset, block.hours.byteLength);
    const mask = view.getInt32(0);
    let at = 4;
    for (let h = 0; h < 24; h += 1) {
      if (!(mask & (1 << h))) continue;
      const t0 = dayStart + h * HOUR_MS;
      const how = classify(cursor, t0, start, end);
      if (how === WHOLE) {
        into(cursor.start, cursor.end);
        count += view.getInt32(at);
        sum += view.getFloat64(at + 4);
        const u = view.getFloat64(at + 12);
        if (u > latest) latest = u;
      } else if (how === RAW) rawRange(raw(), t0, t0 + HOUR_MS);
      at += SLOT_BYTES;
    }
  }
  flush();
  return { timestamps: Float64Array.from(ts), values: Float64Array.from(vs), resolutions: Int32Array.from(rs), updatedAt: Float64Array.from(us) };
}

/** The readings of one register's blocks (in day order) in [start, end), as columns. */
export function readingsOfBlocks(blocks: readonly StoredBlock[], start: number, end: number): BlockReadings {
  const parts = blocks.map((b) => b.readings ?? decodeData(b.data!, b.day));
  let n = 0;
  for (const p of parts) n += p.times.length;
  const out: BlockReadings = { times: new Float64Array(n), values: new Float64Array(n), resolutions: new Int32Array(n), updatedAt: new Float64Array(n) };
  let k = 0;
  for (const p of parts) {
    for (let i = 0; i < p.times.length; i += 1) {
      const t = p.times[i]!;
      if (t < start || t >= end) continue;
      out.times[k] = t;
      out.values[k] = p.values[i]!;
      out.resolutions[k] = p.resolutions[i]!;
      out.updatedAt[k] = p.updatedAt[i]!;
      k += 1;
    }
  }
  return { times: out.times.subarray(0, k), values: out.values.subarray(0, k), resolutions: out.resolutions.subarray(0, k), updatedAt: out.updatedAt.subarray(0, k) };
}
