// Running the reading-batch worker task (workers/readings/task.ts) for a backend: the body is
// transferred to a worker thread (not copied), parsed, validated, grouped and encoded in the
// backend's wire format there; the columns (and the encoding) come back transferred.
import type { MessagePort } from 'node:worker_threads';
import { transferableCopy, type WorkerPool } from '../../workerPool.ts';
import type { ParseResult, ParseTask, ReadingEncoding, SliceResult } from '../../shared/readings/contract.ts';
import type { EncodedBlocks } from '../../shared/readings/blocks.ts';
import { MIN_READING_BYTES, meterCuts, type ParsedSeries } from '../../shared/readings/parseReadings.ts';
import { SharedBuffers } from './sharedBuffers.ts';
import type { ReadingRows, WriteOutcome } from './types.ts';

export type { ParseResult };

export interface ParseOptions {
  encoding: ReadingEncoding;
  updatedAtMs: number;
  /** Streaming: the port the worker posts encoded chunks on while it parses, every `chunkRows` rows. */
  stream?: MessagePort;
  chunkRows?: number;
}

/** The body's bytes in a buffer of their own, ready to transfer to a worker. */
export function bodyBytes(body: Uint8Array): Uint8Array {
  return transferableCopy(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
}

export function parseBody(workers: WorkerPool, bytes: Uint8Array, options: ParseOptions): Promise<ParseResult> {
  const task: ParseTask = { body: bytes, ...options };
  return workers.run('readings/task', task, [bytes.buffer, ...(options.stream ? [options.stream] : [])]);
}

/** The refusal of a body the worker did not accept. */
export function refused(result: ParseResult & { ok: false }): WriteOutcome {
  return { ok: false, syntax: result.syntax, errors: result.errors };
}

/** The accepted body's rows, once its series have register ids. */
export function parsedRows(result: ParseResult & { ok: true }, registerIds: readonly number[]): ReadingRows {
  return { registerIds, offsets: result.offsets, timestamps: result.timestamps, values: result.values, resolutions: result.resolutions };
}

/** Bodies below this are parsed in one piece (a slice costs a task round trip and a copy). */
const SLICED_BYTES = 1 << 20;

/** Parses a large body on up to `workers.size` threads at once: cut between meters
 * (meterCuts), each slice parsed and validated on its own (with `pgBlocks`, its register-day
 * blocks encoded too), the columns (and blocks) joined in body order. When a slice is not
 * accepted, or a series is named in two slices, the whole body is parsed in one piece
 * (parseBody): the outcome, errors included, is always parseBody's. Measured
 * (docs/benchmarks.md, QuestDB; docs/benchmarks-readings.md): a 1M-reading body
 * on two threads. */
export async function parseBodySliced(workers: WorkerPool, bytes: Uint8Array, updatedAtMs: number, minBytes = SLICED_BYTES, encoding: 'none' | 'pgBlocks' = 'none'): Promise<ParseResult & { release?: () => void }> {
  const cuts = bytes.length >= minBytes && workers.size > 1 ? meterCuts(bytes, workers.size) : [];
  if (cuts.length === 0) return parseBody(workers, bytes, { encoding, updatedAtMs });
  const ends = [...cuts, bytes.length];
  // The first slice takes the body itself (transferred, given back); the others read a copy of
  // theirs in a kept shared buffer, or the body itself when it is in shared memory (a large
  // HTTP body, src/http/body.ts).
  const shared = bytes.buffer instanceof SharedArrayBuffer;
  const rest = shared ? bytes.subarray(cuts[0]) : scratch.take(bytes.length - cuts[0]!);
  // Each slice writes its rows into kept shared memory too, sized for the most readings its
  // bytes can hold.
  const capacities = ends.map((end, k) => Math.floor((end - (k === 0 ? 0 : cuts[k - 1]!)) / MIN_READING_BYTES) + 1);
  const rowMemory = rowScratch.take(capacities.reduce((a, c) => a + c * 24, 0));
  try {
    if (!shared) rest.set(bytes.subarray(cuts[0]));
    const parts = ends.map((end, k) => (k === 0 ? bytes : rest.subarray(cuts[k - 1]! - cuts[0]!, end - cuts[0]!)));
    let at = rowMemory.byteOffset;
    const columns = capacities.map((c) => {
      const b = rowMemory.buffer;
      const cols = { timestamps: new Float64Array(b, at, c), values: new Float64Array(b, at + 8 * c, c), resolutions: new Int32Array(b, at + 16 * c, c), series: new Int32Array(b, at + 20 * c, c) };
      at += 24 * c;
      return cols;
    });
    const slices = await Promise.all(
      parts.map((body, k) =>
        workers.run(
          'readings/sliceTask',
          { body, end: k === 0 ? cuts[0]! : body.length, first: k === 0, last: k === ends.length - 1, giveBack: k === 0, columns: columns[k], ...(encoding === 'pgBlocks' ? { encoding, updatedAtMs } : {}) },
          k === 0 ? [body.buffer] : [],
        ),
      ),
    );
    return joined(slices) ?? parseBody(workers, slices[0]!.body!, { encoding, updatedAtMs });
  } finally {
    if (!shared) scratch.give(rest);
    rowScratch.give(rowMemory);
  }
}

/** Where the slices after the first are copied, and where their columns are joined (kept:
 * fresh memory costs more than the copy). */
const scratch = new SharedBuffers(1);
const rowScratch = new SharedBuffers(1);
const columns = new SharedBuffers(1);

/** `meters[i]…` of a slice, counted in the whole body. */
const renumbered = (path: string, base: number) => (base === 0 ? path : path.replace(/^meters\[(\d+)\]/, (_, m: string) => `meters[${Number(m) + base}]`));

/** The slices' batches as one, or undefined when one was not accepted or two name a series. The
 * columns are in a kept shared buffer (no copy is needed to hand a part of them to a worker),
 * lent until `release`. */
function joined(slices: readonly SliceResult[]): (ParseResult & { ok: true; release: () => void }) | undefined {
  let n = 0;
  let seriesCount = 0;
  for (const slice of slices) {
    if (!slice.ok) return undefined;
    n += slice.timestamps.length;
    seriesCount += slice.series.length;
  }
  const names = new Set<string>();
  const series: ParsedSeries[] = [];
  for (const slice of slices as (SliceResult & { ok: true })[]) {
    for (const s of slice.series) {
      const name = `${s.meterId}\u0000${s.registerId}`;
      if (names.has(name)) return undefined;
      names.add(name);
    }
  }
  const offsets = new Int32Array(seriesCount + 1);
  const shared = columns.take(n * 20);
  const timestamps = new Float64Array(shared.buffer, shared.byteOffset, n);
  const values = new Float64Array(shared.buffer, shared.byteOffset + n * 8, n);
  const resolutions = new Int32Array(shared.buffer, shared.byteOffset + n * 16, n);
  const months = new Set<number>();
  let row = 0;
  let meterBase = 0;
  for (const slice of slices as (SliceResult & { ok: true })[]) {
    for (let k = 0; k < slice.series.length; k += 1) {
      const s = slice.series[k]!;
      offsets[series.length] = row + slice.offsets[k]!;
      series.push({ ...s, meterPath: renumbered(s.meterPath, meterBase), registerPath: renumbered(s.registerPath, meterBase) });
    }
    timestamps.set(slice.timestamps, row);
    values.set(slice.values, row);
    resolutions.set(slice.resolutions, row);
    for (const month of slice.months) months.add(month);
    row += slice.timestamps.length;
    meterBase += slice.meters;
  }
  offsets[seriesCount] = row;
  const blocks = (slices as (SliceResult & { ok: true })[]).every((slice) => slice.blocks) ? joinedBlocks(slices as (SliceResult & { ok: true; blocks: EncodedBlocks })[]) : undefined;
  return { ok: true, series, offsets, timestamps, values, resolutions, months: [...months].sort((a, b) => a - b), copy: undefined, blocks, chunks: 0, release: () => columns.give(shared) };
}

/** The slices' register-day blocks as one batch's (series numbered across the slices). */
function joinedBlocks(slices: readonly (SliceResult & { ok: true; blocks: EncodedBlocks })[]): EncodedBlocks {
  let count = 0;
  let bytes = 0;
  for (const { blocks } of slices) {
    count += blocks.counts.length;
    bytes += blocks.data.length;
  }
  const out: EncodedBlocks = {
    data: new Uint8Array(bytes),
    dataStarts: new Int32Array(count + 1),
    counts: new Int32Array(count),
    blockSeries: new Int32Array(count),
    blockDays: new Int32Array(count),
    hourCounts: new Int32Array(24 * count),
    hourSums: new Float64Array(24 * count),
    sumDigits: new Int8Array(count),
  };
  let k = 0;
  let at = 0;
  let seriesBase = 0;
  for (const { blocks, series } of slices) {
    const n = blocks.counts.length;
    out.data.set(blocks.data, at);
    for (let j = 0; j < n; j += 1) {
      out.dataStarts[k + j] = at + blocks.dataStarts[j]!;
      out.blockSeries[k + j] = seriesBase + blocks.blockSeries[j]!;
    }
    out.counts.set(blocks.counts, k);
    out.blockDays.set(blocks.blockDays, k);
    out.hourCounts.set(blocks.hourCounts, 24 * k);
    out.hourSums.set(blocks.hourSums, 24 * k);
    out.sumDigits.set(blocks.sumDigits, k);
    at += blocks.data.length;
    k += n;
    seriesBase += series.length;
  }
  out.dataStarts[count] = at;
  return out;
}
