// Kept memory (src/store/timeseries/sharedBuffers.ts) was sized exactly: a body or batch a few
// bytes larger than every kept buffer took fresh memory, which costs a page fault per 4 KiB on
// first touch (a 66 MiB body: 1.6 s to read instead of 15–30 ms). Real clients' bodies differ in
// size from one POST to the next. New buffers are now rounded up to a size class.
import { describe, expect, it } from 'vitest';
import { SharedBuffers, sizeClass } from '../../src/store/timeseries/sharedBuffers.ts';

describe('kept memory and bodies of about the same size', () => {
  it('uses the kept buffer again for a request a little larger than the last', () => {
    const kept = new SharedBuffers(1);
    const first = kept.take(66_000_000);
    kept.give(first);
    const next = kept.take(66_000_123);
    expect(next).toBe(first);
    expect(next.length).toBeGreaterThanOrEqual(66_000_123);
  });

  it('rounds new buffers up by at most an eighth, and hands out the smallest kept one that fits', () => {
    for (const bytes of [1, 4097, 1 << 20, (1 << 20) + 1, 66_000_000, 2 ** 31 - 5]) {
      expect(sizeClass(bytes)).toBeGreaterThanOrEqual(bytes);
      expect(sizeClass(bytes)).toBeLessThanOrEqual(Math.max(4096, bytes * 1.125));
    }
    const kept = new SharedBuffers(2);
    const large = kept.take(8 << 20);
    const small = kept.take(1 << 20);
    kept.give(large);
    kept.give(small);
    expect(kept.take(1000)).toBe(small);
  });
});
