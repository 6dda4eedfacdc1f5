// What the reading tasks (workers/readings/task.ts, aggregateTask.ts) take and return: the
// contract both sides of the thread boundary import, so the server never imports an entry point.
import type { MessagePort } from 'node:worker_threads';
import type { Bucketing, StoredBlock } from './aggregate.ts';
import type { EncodedBlocks } from './blocks.ts';
import type { FieldError, ParsedBatch, ParsedSeries, RowColumns } from './parseReadings.ts';

/** What the rows are encoded as besides columns: `pgCopy` = PostgreSQL binary COPY rows
 * (pgCopy.ts), `pgBlocks` = COPY rows of register-day blocks (blocks.ts), register ids left 0
 * for the store to fill in. */
export type ReadingEncoding = 'none' | 'pgCopy' | 'pgBlocks';

export interface ParseTask {
  body: Uint8Array;
  encoding: ReadingEncoding;
  updatedAtMs: number;
  stream?: MessagePort;
  chunkRows?: number;
}

/** One streamed chunk: COPY rows (no header or trailer) of complete series parts. */
export interface ReadingChunk {
  index: number;
  /** Series (indexes into the final series list) present in the chunk, in row order. */
  seriesIndexes: number[];
  /** Rows of seriesIndexes[k] are offsets[k] .. offsets[k+1]-1 within the chunk. */
  offsets: Int32Array;
  /** Series first seen in this chunk (their index is their position in the final list). */
  newSeries: ParsedSeries[];
  firsts: Float64Array;
  lasts: Float64Array;
  months: number[];
  copy: Uint8Array;
}

/** `chunks`: chunks posted on the stream port (0 without streaming). */
export type ParseResult =
  | (ParsedBatch & { ok: true; copy: Uint8Array | undefined; blocks?: EncodedBlocks; chunks: number })
  | { ok: false; syntax: boolean; errors: FieldError[]; chunks: number };

export interface AggregateTask {
  registers: { blocks: StoredBlock[]; summed: boolean; bucketing: Bucketing }[];
  start: number;
  end: number;
}

/** One slice of a body cut at meter boundaries (parseReadingsSlice): `body` up to `end`. With
 * `giveBack`, the body's buffer (transferred in) comes back with the result. */
export interface SliceTask {
  body: Uint8Array;
  end: number;
  first: boolean;
  last: boolean;
  giveBack: boolean;
  /** Where to write the rows (shared memory the caller lends; parseReadingsSlice). */
  columns?: RowColumns;
  /** `pgBlocks`: the slice's register-day blocks encoded too (recordedAt updatedAtMs). */
  encoding?: 'pgBlocks';
  updatedAtMs?: number;
}

export type SliceResult = ((ParsedBatch & { ok: true; meters: number; blocks?: EncodedBlocks }) | { ok: false }) & { body?: Uint8Array };
