// The streaming path of a large body (PostgreSQL): the worker posts encoded chunks of completed
// meters while it keeps parsing, and this side resolves their registers and feeds them into one
// COPY, so parsing (≈1.2 s per million readings here) overlaps the COPY (≈3 s) instead of
// preceding it (bench/ingest.ts, docs/benchmarks-meter.md).
//
// It is an optimistic fast path. Whenever it cannot finish the job exactly like the sequential
// path would — a register named again in a later chunk (the last duplicate must win), readings
// already stored in a chunk's range (corrections take the merge path), a later chunk's month
// without a partition yet (it cannot be created under the open COPY), a concurrent writer — it
// is abandoned (rolled back) and the whole batch is written the ordinary way from the worker's
// complete result (which also reports any refused value, and the resolver any meter the caller
// may not write, with its path: nothing is committed here before the worker's verdict, so the
// batch stays all or nothing).
import type { MessagePort } from 'node:worker_threads';
import type { Pool } from '../../database.ts';
import { fillRegisterIds } from '../../../../workers/readings/pgCopy.ts';
import type { ReadingChunk } from '../../../../workers/readings/task.ts';
import type { RegisterResolver } from '../types.ts';
import { overlaps } from './copyWrite.ts';
import { ReadingStream } from './readingStream.ts';

export type StreamOutcome = 'committed' | 'fallback';

export class ChunkStreamer {
  private stream: ReadingStream | undefined;
  private readonly months = new Set<number>();
  private readonly registerIds: number[] = [];
  private readonly streamed = new Set<number>();
  private chain: Promise<void> = Promise.resolve();
  private processed = 0;
  private fallback = false;
  private port: MessagePort | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly resolve: RegisterResolver,
  ) {}

  listen(port: MessagePort): void {
    this.port = port;
    port.on('message', (chunk: ReadingChunk) => {
      this.chain = this.chain.then(() => this.take(chunk)).catch(() => this.giveUp());
    });
  }

  private async giveUp(): Promise<void> {
    this.fallback = true;
    const stream = this.stream;
    this.stream = undefined;
    await stream?.abort().catch(() => undefined);
  }

  private async take(chunk: ReadingChunk): Promise<void> {
    this.processed += 1;
    if (this.fallback) return;
    const fresh = await this.resolve(chunk.newSeries);
    this.registerIds.push(...fresh);
    if (chunk.seriesIndexes.some((s) => this.streamed.has(s))) return this.giveUp();
    const newMonths = chunk.months.filter((m) => !this.months.has(m));
    if (!this.stream) this.stream = await ReadingStream.open(this.pool, chunk.months);
    else if (newMonths.length > 0 && !(await this.stream.accepts(newMonths))) return this.giveUp();
    newMonths.forEach((m) => this.months.add(m));
    const ids = chunk.seriesIndexes.map((s) => this.registerIds[s]!);
    if (await overlaps(this.pool, ids, [...chunk.firsts], [...chunk.lasts])) return this.giveUp();
    chunk.seriesIndexes.forEach((s) => this.streamed.add(s));
    const rows = Buffer.from(chunk.copy.buffer, chunk.copy.byteOffset, chunk.copy.byteLength);
    fillRegisterIds(rows, chunk.offsets, ids, 0);
    await this.stream.write(rows);
  }

  /** After the worker answered: wait for every chunk it sent, then commit, or fall back. */
  async settle(chunks: number, ok: boolean): Promise<StreamOutcome> {
    // The worker's answer and its chunks travel on different ports: wait for the chunks.
    const deadline = Date.now() + 60_000;
    while (this.processed < chunks && Date.now() < deadline) {
      await this.chain;
      if (this.processed < chunks) await new Promise((r) => setTimeout(r, 1));
    }
    // No chunk is taken after this point: the decision below sees the final state.
    this.port?.close();
    await this.chain;
    const stream = this.stream;
    if (!ok || this.fallback || !stream || this.processed < chunks) {
      await this.giveUp();
      return 'fallback';
    }
    try {
      await stream.finish();
      return 'committed';
    } catch {
      // A concurrent writer got there first (unique violation) or the connection failed.
      return 'fallback';
    }
  }
}
