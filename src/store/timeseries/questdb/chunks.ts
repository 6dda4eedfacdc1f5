// How the QuestDB store cuts a batch into chunks (one ILP request, one QuestDB transaction each).
//
// A batch comes grouped by series (register), each series in time order. Cut by rows, every chunk
// of a batch like 1,000 registers × 10 days spans the whole 10 days, so each transaction overlaps
// the ones before it in time and QuestDB merges it out of order into what they wrote. Cut by
// time, the chunks cover one span after another and QuestDB appends them: measured on QuestDB
// 7.4.2 with 1M readings in 10 chunks over 4 connections, the batch was readable 100–290 ms after
// the last acknowledgement instead of 280–600 ms (docs/benchmarks.md, QuestDB).
// So the batch is cut at instants (quantiles of its timestamps) into time slices, and
// a slice larger than a chunk (1.5 × `chunkRows`: a slice of a quantile a little over
// `chunkRows` stays one chunk) is cut again by series and rows, whatever the shape of the batch
// (one instant for a million registers included).
// A batch with a series out of time order (not what the parser gives, but the type allows it)
// is cut by rows.
import type { ReadingRows } from '../types.ts';

/** One chunk: for each of its series (an index into the batch's series), the rows
 * [start, start + count) of the batch's columns. */
export interface ChunkPlan {
  series: number[];
  starts: number[];
  counts: number[];
  rows: number;
}

/** Timestamps sampled to place the cuts. */
const SAMPLES = 8192;

export function planChunks(rows: ReadingRows, chunkRows: number): ChunkPlan[] {
  const n = rows.timestamps.length;
  if (n <= chunkRows || !inTimeOrder(rows)) return byRows(rows, chunkRows);
  const cuts = timeCuts(rows.timestamps, Math.ceil(n / chunkRows));
  const series = rows.registerIds.length;
  const cursor = Int32Array.from(rows.offsets.subarray(0, series));
  const plans = new Plans(Math.ceil(chunkRows * 1.5));
  for (let slice = 0; slice <= cuts.length; slice += 1) {
    const until = slice < cuts.length ? cuts[slice]! : Infinity;
    for (let s = 0; s < series; s += 1) {
      const from = cursor[s]!;
      const to = until === Infinity ? rows.offsets[s + 1]! : lowerBound(rows.timestamps, from, rows.offsets[s + 1]!, until);
      plans.add(s, from, to - from);
      cursor[s] = to;
    }
    plans.close();
  }
  return plans.done();
}

/** Whether every series is in strictly increasing time order. */
function inTimeOrder({ offsets, timestamps }: ReadingRows): boolean {
  for (let s = 0; s + 1 < offsets.length; s += 1) for (let i = offsets[s]! + 1; i < offsets[s + 1]!; i += 1) if (!(timestamps[i - 1]! < timestamps[i]!)) return false;
  return true;
}

/** Up to `slices - 1` increasing instants splitting the timestamps into slices of about equal
 * size (from an evenly spread sample). */
function timeCuts(timestamps: Float64Array, slices: number): number[] {
  const step = Math.max(1, Math.floor(timestamps.length / SAMPLES));
  const sample = new Float64Array(Math.ceil(timestamps.length / step));
  for (let i = 0, k = 0; i < timestamps.length; i += step, k += 1) sample[k] = timestamps[i]!;
  sample.sort();
  const cuts: number[] = [];
  for (let j = 1; j < slices; j += 1) {
    const at = sample[Math.floor((j * sample.length) / slices)]!;
    if (at > (cuts.at(-1) ?? sample[0]!)) cuts.push(at);
  }
  return cuts;
}

/** The first row in [from, to) whose timestamp is at least `t` (to if none). */
function lowerBound(timestamps: Float64Array, from: number, to: number, t: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (timestamps[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The batch cut by rows: chunkRows rows after another, a series split where a chunk ends. */
function byRows(rows: ReadingRows, chunkRows: number): ChunkPlan[] {
  const plans = new Plans(chunkRows);
  for (let s = 0; s + 1 < rows.offsets.length; s += 1) plans.add(s, rows.offsets[s]!, rows.offsets[s + 1]! - rows.offsets[s]!);
  plans.close();
  return plans.done();
}

/** Chunks filled range by range, none above `limit` rows. */
class Plans {
  private readonly plans: ChunkPlan[] = [];
  private open: ChunkPlan = { series: [], starts: [], counts: [], rows: 0 };
  constructor(private readonly limit: number) {}

  add(series: number, start: number, count: number): void {
    while (count > 0) {
      const take = Math.min(count, this.limit - this.open.rows);
      this.open.series.push(series);
      this.open.starts.push(start);
      this.open.counts.push(take);
      this.open.rows += take;
      start += take;
      count -= take;
      if (this.open.rows === this.limit) this.close();
    }
  }

  /** Ends the open chunk (if it has rows). */
  close(): void {
    if (this.open.rows > 0) this.plans.push(this.open);
    this.open = { series: [], starts: [], counts: [], rows: 0 };
  }

  done(): ChunkPlan[] {
    this.close();
    return this.plans;
  }
}
