// Large scratch buffers kept and used again instead of allocated per request: on this platform's
// machines fresh memory costs a page fault per 4 KiB on first touch, measured as most of the cost
// of copying or encoding into it (docs/benchmarks-meter.md, QuestDB section). Shared
// (SharedArrayBuffer), so worker threads read and write them in place, with no transfer or copy.
/** A server that has not taken a large batch for this long gives the memory back. */
const IDLE_MS = 60_000;

/** A new buffer's size: `bytes` rounded up to a step of an eighth of its power of two (at most
 * 12.5% more), so that bodies and batches of about the same size use the same kept memory: sized
 * exactly, a body one byte longer than the last took fresh memory (a 66 MiB body: 1.6 s to read
 * on this platform's machines instead of 15–30 ms; docs/benchmarks-meter.md, QuestDB, eighth
 * session). */
export function sizeClass(bytes: number): number {
  if (bytes <= 4096) return 4096;
  const step = 2 ** (Math.floor(Math.log2(bytes)) - 3);
  return Math.ceil(bytes / step) * step;
}

export class SharedBuffers {
  private free: Uint8Array[] = [];
  private idle: NodeJS.Timeout | undefined;

  /** At most `keep` buffers are kept between uses. */
  constructor(private readonly keep: number) {}

  /** A buffer of at least `bytes` (a kept one when one is large enough; the smallest such). */
  take(bytes: number): Uint8Array {
    let best = -1;
    for (let i = 0; i < this.free.length; i += 1) if (this.free[i]!.length >= bytes && (best === -1 || this.free[i]!.length < this.free[best]!.length)) best = i;
    return best === -1 ? new Uint8Array(new SharedArrayBuffer(sizeClass(bytes))) : this.free.splice(best, 1)[0]!;
  }

  /** Back for the next use; kept buffers unused for IDLE_MS are let go. */
  give(buffer: Uint8Array): void {
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
