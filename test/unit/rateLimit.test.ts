import { describe, expect, it } from 'vitest';
import { MemoryRateLimitStore, rateLimitHeaders, retryAfterSeconds, tooManyRequestsText } from '../../src/http/rateLimit.ts';

const windows = [
  { seconds: 1, max: 5 },
  { seconds: 60, max: 20 },
];

describe('MemoryRateLimitStore', () => {
  it('admits up to the per-second limit, then refuses without consuming', () => {
    const store = new MemoryRateLimitStore();
    const t0 = Date.UTC(2024, 0, 1, 0, 0, 0, 100);
    const results = Array.from({ length: 7 }, () => store.consume('k', windows, t0));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false, false]);
    // Refused requests consumed nothing: the minute window counts 5.
    expect(results[6]!.windows[1]!.count).toBe(5);
    expect(retryAfterSeconds(results[6]!, t0)).toBe(1);
    store.close();
  });

  it('enforces the minute window across seconds and reports its reset', () => {
    const store = new MemoryRateLimitStore();
    const minute = Date.UTC(2024, 0, 1, 0, 1, 0);
    let last;
    for (let s = 0; s < 5; s += 1) for (let i = 0; i < 4; i += 1) last = store.consume('k', windows, minute + s * 1000);
    expect(last!.allowed).toBe(true);
    const refused = store.consume('k', windows, minute + 10_000);
    expect(refused.allowed).toBe(false);
    expect(retryAfterSeconds(refused, minute + 10_000)).toBe(50);
    const headers = rateLimitHeaders(refused);
    expect(headers).toEqual({ 'X-Rate-Limit-Limit': '20', 'X-Rate-Limit-Remaining': '0', 'X-Rate-Limit-Reset': '2024-01-01T00:02:00.000Z' });
    expect(store.consume('k', windows, minute + 60_000).allowed).toBe(true);
    expect(store.consume('other', windows, minute + 10_000).allowed).toBe(true);
    store.close();
  });

  it('words the 429 text with the quota and the wait', () => {
    expect(tooManyRequestsText('readings', windows, 3)).toBe('Rate limit exceeded: quota "readings" allows 5 requests per second and 20 requests per minute. Retry after 3 seconds.\n');
  });
});
