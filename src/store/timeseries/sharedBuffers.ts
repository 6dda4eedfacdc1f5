// Large scratch buffers kept and used again instead of allocated per request: on this platform's
// machines fresh memory costs a page fault per 4 KiB on first touch, measured as most of the cost
// of copying or encoding into it (docs/benchmarks.md, QuestDB). By default shared
// (SharedArrayBuffer), so worker threads read and write them in place, with no transfer or copy;
// the JSON of reads (readingJson.ts) keeps plain Buffers.
/** A server that has not taken a large batch for this long gives the memory back. */
const IDLE_MS = 60_000;

/** A new buffer's size: `bytes` rounded up to a step of an eighth of its power of two (at most
 * 12.5% more), so that bodies and batches of about the same size use the same kept memory: sized
 * exactly, a body one byte longer than the last took fresh memory (a 66 MiB body: 1.6 s to read
 * on this platform's machines instead of 15–30 ms; docs/benchmarks.md,
 * QuestDB). */
export function sizeClass(bytes: number): number {
  if (bytes <= 4096) return 4096;
  const step = 2 ** (Math.floor(Math.log2(bytes)) - 3);
  return Math.ceil(bytes / step) * step;
}

const shared = (bytes: number) => new Uint8Array(new SharedArrayBuffer(bytes));

export class SharedBuffers<T extends Uint8Array = Uint8Array> {
  private free: T[] = [];
  private idle: NodeJS.Timeout | undefined;

  /** At most `keep` buffers are kept between uses; `make` allocates a new one. */
  constructor(
    private readonly keep: number,
    private readonly make: (bytes: number) => T = shared as (bytes: number) => T,
  ) {}

  /** A buffer of at least `bytes` (a kept one when one is large enough; the smallest such). */
  take(bytes: number): T {
    let best = -1;
    for (let i = 0; i < this.free.length; i += 1) if (this.free[i]!.length >= bytes && (best === -1 || this.free[i]!.length < this.free[best]!.length)) best = i;
    return best === -1 ? this.make(sizeClass(bytes)) : this.free.splice(best, 1)[0]!;
  }

  /** Back for the next use; kept buffers unused for IDLE_MS are let go. */
  give(buffer: T): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => (this.free = []), IDLE_MS).unref();
    if (this.free.length < this.keep) this.free.push(buffer);
    else {
      // Keep the largest ones.
      const smallest = this.free.reduce((k, b, i) => (b.length < this.free[k]!.length ? i : k), 0);
      if (this.free[smallest]!.length < buffer.length) this.free[smallest] = buffer;
    }
  }
}
