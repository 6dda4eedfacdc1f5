// Large scratch buffers kept and used again instead of allocated per request: on this platform's
// machines fresh memory costs a page fault per 4 KiB on first touch, measured as most of the cost
// of copying or encoding into it (docs/benchmarks-meter.md, QuestDB section). By default shared
// (SharedArrayBuffer), so worker threads read and write them in place, with no transfer or copy;
// the JSON of reads (readingJson.ts) keeps plain Buffers.
/** A server that has not taken a large batch for this long gives the memory back. */
const IDLE_MS = 60_000;

const shared = (bytes: number) => new Uint8Array(new SharedArrayBuffer(bytes));

export class SharedBuffers<T extends Uint8Array = Uint8Array> {
  private free: T[] = [];
  private idle: NodeJS.Timeout | undefined;

  /** At most `keep` buffers are kept between uses; `make` allocates a new one. */
  constructor(
    private readonly keep: number,
    private readonly make: (bytes: number) => T = shared as (bytes: number) => T,
  ) {}

  /** A buffer of at least `bytes`: the smallest kept one large enough, else a new one. */
  take(bytes: number): T {
    let i = -1;
    this.free.forEach((b, k) => {
      if (b.length >= bytes && (i === -1 || b.length < this.free[i]!.length)) i = k;
    });
    return i === -1 ? this.make(bytes) : this.free.splice(i, 1)[0]!;
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
