// Running the reading-batch worker task (workers/readings/task.ts) for a backend: the body is
// transferred to a worker thread (not copied), parsed, validated, grouped and encoded in the
// backend's wire format there; the columns (and the encoding) come back transferred.
import type { MessagePort } from 'node:worker_threads';
import { transferableCopy, type WorkerPool } from '../../workerPool.ts';
import type { ParseResult, ParseTask, ReadingEncoding } from '../../shared/readings/contract.ts';
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
