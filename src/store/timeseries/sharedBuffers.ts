// Large scratch buffers kept and used again instead of allocated per request: on this platform's
// machines fresh memory costs a page fault per 4 KiB on first touch, measured as most of the cost
// of copying or encoding into it (docs/benchmarks-meter.md, QuestDB section). Shared
// (SharedArrayBuffer), so worker threads read and write them in place, with no transfer or copy.
/** A server that has not taken a large batch for this long gives the memory back. */
const IDLE_MS = 60_000;

export class SharedBuffers {
  private free: Uint8Array[] = [];
  private idle: NodeJS.Timeout | undefined;

  /** At most `keep` buffers are kept between uses. */
  constructor(private readonly keep: number) {}

  /** A buffer of at least `bytes` (a kept one when one is large enough). */
  take(bytes: number): Uint8Array {
    const i = this.free.findIndex((b) => b.length >= bytes);
    return i === -1 ? new Uint8Array(new SharedArrayBuffer(bytes)) : this.free.splice(i, 1)[0]!;
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
