// A POST /api/readings body into PostgreSQL: a worker parses, validates, groups and encodes it as
// binary COPY rows; the resolver names its registers; copyWrite.ts stores it in one transaction.
// Bodies of STREAM_MIN_BYTES and more are streamed when a slot is free: the worker posts encoded
// chunks while it parses and chunkStreamer.ts COPYs them at once, falling back to the whole-batch
// write whenever streaming cannot reproduce its result. Nothing is stored unless everything is
// valid and every series resolved.
import { MessageChannel } from 'node:worker_threads';
import type { Pool } from '../../database.ts';
import type { WorkerPool } from '../../../workerPool.ts';
import { bodyBytes, parseBody, parsedRows, refused, type ParseResult } from '../parseBody.ts';
import type { BodyInput, WriteOutcome } from '../types.ts';
import { ChunkStreamer, type StreamOutcome } from './chunkStreamer.ts';
import { writeRows } from './copyWrite.ts';

/** Bodies from this size on are streamed (parse and COPY overlap); smaller ones are not worth it. */
export const STREAM_MIN_BYTES = 4 * 1024 * 1024;
/** Rows per streamed chunk: small enough for the COPY to start early, large enough that the
 * per-chunk queries (register lookup, overlap check) stay negligible. */
export const STREAM_CHUNK_ROWS = 50_000;

/** Slots for streamed writes. Each stream holds a connection for a whole upload while its
 * chunks' lookups need other ones: at most half the pool streams (none with a pool of one), so
 * those lookups always find one. */
export class StreamSlots {
  private used = 0;
  private readonly max: number;

  constructor(poolMax: number) {
    this.max = Math.floor(poolMax / 2);
  }

  /** A slot's release function, or undefined when none is free now. */
  reserve(): (() => void) | undefined {
    if (this.used >= this.max) return undefined;
    this.used += 1;
    let released = false;
    return () => {
      if (!released) this.used -= 1;
      released = true;
    };
  }
}

export async function ingestBody(pool: Pool, workers: WorkerPool, slots: StreamSlots, input: BodyInput): Promise<WriteOutcome> {
  const updatedAtMs = input.updatedAtMs ?? Date.now();
  const bytes = bodyBytes(input.body);
  const release = bytes.length >= STREAM_MIN_BYTES ? slots.reserve() : undefined;
  const channel = release ? new MessageChannel() : undefined;
  const streamer = channel ? new ChunkStreamer(pool, input.resolve) : undefined;
  if (channel && streamer) streamer.listen(channel.port1);
  let parsed: ParseResult | undefined;
  let outcome: StreamOutcome = 'fallback';
  try {
    parsed = await parseBody(workers, bytes, { encoding: streamer ? 'none' : 'pgCopy', updatedAtMs, stream: channel?.port2, chunkRows: STREAM_CHUNK_ROWS });
  } finally {
    // Also when the worker failed: an open stream is rolled back and its connection returned.
    if (streamer) outcome = await streamer.settle(parsed?.chunks ?? 0, parsed?.ok ?? false);
    release?.();
  }
  if (!parsed.ok) return refused(parsed);
  const readings = parsed.timestamps.length;
  if (outcome === 'committed') return { ok: true, readings };
  const registerIds = await input.resolve(parsed.series);
  const payload = parsed.copy ? Buffer.from(parsed.copy.buffer, parsed.copy.byteOffset, parsed.copy.byteLength) : undefined;
  await writeRows(pool, parsedRows(parsed, registerIds), updatedAtMs, payload);
  return { ok: true, readings };
}
