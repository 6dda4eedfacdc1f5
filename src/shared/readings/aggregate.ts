// Buckets (sum or average, latest updatedAt) of one register from its register-day blocks
// (blocks.ts), the way the PostgreSQL store answers GET /api/readings at a resolution and the
// hourly averages. Local days are taken from a block's daily pieces (`days`) when every piece
// with readings lies inside the range asked and inside one local day as the bucketing (the zone's
// days now) has them; `daysMissing` names the blocks where they do not, whose data the store
// then fetches. Everything else is aggregated from the readings, decoded block by block into
// reused arrays (a register-year of quarter hours decodes in about a millisecond:
// docs/benchmarks-readings.md); blocks written after an `asOf` are rebuilt as recorded then. Buckets are visited
// in time order, so one running bucket suffices.
import { DAY_MS, decodeData, readDaysInto, type BlockReadings } from './blocks.ts';
import { ColumnsScratch } from './codec.ts';
import { asOfReadings, decodeHistory } from './versions.ts';

/** A block as read: `data` null = not fetched; `days` (pieces between local midnights, with
 * `updatedMax`) used for local days when present and fitting; `asOf` (a block written after
 * that instant: its data and history, rebuilt as recorded then when read) used instead of both. */
export interface StoredBlock {
  day: number;
  data: Uint8Array | null;
  days?: Uint8Array | null;
  updatedMax?: number;
  asOf?: { at: number; data: Uint8Array; history: Uint8Array };
}

/** Reused for every block an aggregation decodes (one thread, one block at a time). */
const scratch = { data: new ColumnsScratch(), history: new ColumnsScratch(), rebuilt: new ColumnsScratch() };
const pieces = new Float64Array(12);

/** The readings of a block as read (its data, or as rebuilt as of an instant); with `reuse`,
 * in arrays valid until the next block; undefined when neither was fetched. */
export function blockReadings(block: StoredBlock, reuse: boolean): BlockReadings | undefined {
  if (block.asOf) {
    const current = decodeData(block.asOf.data, block.day, reuse ? scratch.data : undefined);
    return asOfReadings(current, decodeHistory(block.asOf.history, block.day, reuse ? scratch.history : undefined), block.asOf.at, reuse ? scratch.rebuilt : undefined);
  }
  return block.data ? decodeData(block.data, block.day, reuse ? scratch.data : undefined) : undefined;
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

/** The number of the block's daily pieces (in `pieces`: start, count, sum, latest each) when
 * they answer these local-day buckets: computed (k > 0) and each piece with readings inside
 * [start, end) and inside one bucket; otherwise 0. `cursor` only moves forward. */
function answeringPieces(cursor: BucketCursor, block: StoredBlock, start: number, end: number): number {
  if (block.asOf || !block.days || block.days.length === 0) return 0;
  const k = readDaysInto(block.days, block.day, block.updatedMax ?? 0, pieces);
  const dayEnd = (block.day + 1) * DAY_MS;
  for (let p = 0; p < k; p += 1) {
    if (pieces[4 * p + 1] === 0) continue;
    const a = pieces[4 * p]!;
    const b = p + 1 < k ? pieces[4 * p + 4]! : dayEnd;
    if (a < start || b > end || !cursor.find(a) || cursor.end < b) return 0;
  }
  return k;
}

/** Indexes of the blocks (one register's, in day order) whose daily pieces do not answer these
 * local-day buckets: their data is needed. */
export function daysMissing(blocks: readonly StoredBlock[], bucketing: Bucketing, start: number, end: number): number[] {
  const cursor = new BucketCursor(bucketing);
  const out: number[] = [];
  blocks.forEach((block, i) => {
    if (!block.asOf && answeringPieces(cursor, block, start, end) === 0) out.push(i);
  });
  return out;
}

/** The buckets with data of one register's blocks (in day order) over [start, end). */
export function aggregateBlocks(blocks: readonly StoredBlock[], summed: boolean, bucketing: Bucketing, start: number, end: number): BucketColumns {
  const cursor = new BucketCursor(bucketing);
  let n = 0;
  const cap = { size: 64 };
  let ts = new Float64Array(cap.size);
  let vs = new Float64Array(cap.size);
  let rs = new Int32Array(cap.size);
  let us = new Float64Array(cap.size);
  let bucket = NaN;
  let bucketEnd = NaN;
  let sum = 0;
  let count = 0;
  let latest = -Infinity;
  const flush = () => {
    if (count > 0) {
      if (n === cap.size) {
        cap.size *= 2;
        const grow = <T extends Float64Array | Int32Array>(a: T, b: T) => (b.set(a), b);
        ts = grow(ts, new Float64Array(cap.size));
        vs = grow(vs, new Float64Array(cap.size));
        rs = grow(rs, new Int32Array(cap.size));
        us = grow(us, new Float64Array(cap.size));
      }
      ts[n] = bucket;
      vs[n] = summed ? sum : sum / count;
      rs[n] = Math.round((bucketEnd - bucket) / 1000);
      us[n] = latest;
      n += 1;
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
  const epochMs = bucketing.kind === 'epoch' ? bucketing.ms : 0;
  const dayCursor = bucketing.kind === 'days' ? new BucketCursor(bucketing) : undefined;
  for (const block of blocks) {
    const k = dayCursor ? answeringPieces(dayCursor, block, start, end) : 0;
    if (k > 0) {
      for (let q = 0; q < k; q += 1) {
        if (pieces[4 * q + 1] === 0) continue;
        cursor.find(pieces[4 * q]!);
        into(cursor.start, cursor.end);
        count += pieces[4 * q + 1]!;
        sum += pieces[4 * q + 2]!;
        if (pieces[4 * q + 3]! > latest) latest = pieces[4 * q + 3]!;
      }
      continue;
    }
    const r = blockReadings(block, true);
    // A block gone between two reads of one question (its register deleted) has nothing.
    if (!r) continue;
    const times = r.times;
    const values = r.values;
    const updated = r.updatedAt;
    for (let i = 0; i < times.length; i += 1) {
      const t = times[i]!;
      if (t < start || t >= end) continue;
      if (epochMs > 0) {
        // Epoch buckets inline (the hot path of the hourly averages).
        if (!(t >= bucket && t < bucketEnd)) {
          const b = Math.floor(t / epochMs) * epochMs;
          into(b, b + epochMs);
        }
      } else if (!(t >= bucket && t < bucketEnd)) {
        // A local day: looked up only when the reading leaves the current one.
        if (!cursor.find(t)) continue;
        into(cursor.start, cursor.end);
      }
      sum += values[i]!;
      count += 1;
      if (updated[i]! > latest) latest = updated[i]!;
    }
  }
  flush();
  return { timestamps: ts.slice(0, n), values: vs.slice(0, n), resolutions: rs.slice(0, n), updatedAt: us.slice(0, n) };
}

/** The readings of one register's blocks (in day order) in [start, end), as columns. */
export function readingsOfBlocks(blocks: readonly StoredBlock[], start: number, end: number): BlockReadings {
  const parts = blocks.flatMap((b) => {
    const r = blockReadings(b, false);
    return r ? [r] : [];
  });
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
