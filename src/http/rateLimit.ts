// Fixed-window rate limiting. Windows are aligned to the epoch, so "the current window resets"
// is a well-defined instant for the X-Rate-Limit-Reset header. A request is admitted only when
// every window of its quota has room; a refused request consumes nothing, so a client that
// backs off for Retry-After seconds is always admitted again.
import type { RateLimitWindow } from './types.ts';

export interface WindowState {
  seconds: number;
  max: number;
  /** Requests counted in this window, including this one when admitted. */
  count: number;
  /** Epoch milliseconds at which this window ends. */
  resetAt: number;
}

export interface RateLimitResult {
  allowed: boolean;
  windows: WindowState[];
}

/** Storage of window counters. The in-memory store serves one instance; the PostgreSQL store
 * (src/store/pgRateLimitStore.ts) shares counters between instances. */
export interface RateLimitStore {
  consume(key: string, windows: readonly RateLimitWindow[], now: number): Promise<RateLimitResult> | RateLimitResult;
  /** The windows' counts without counting anything (`allowed`: every window has room). */
  peek(key: string, windows: readonly RateLimitWindow[], now: number): Promise<RateLimitResult> | RateLimitResult;
  close(): void;
}

/** A refusal: 429 with a plain-text body naming the quota and the wait (DESIGN.md, Errors). */
export class RateLimitedError extends Error {
  constructor(
    readonly text: string,
    readonly headers: Record<string, string>,
  ) {
    super('rate limited');
  }
}

/** Counts a request against a quota: its X-Rate-Limit-* headers, or a RateLimitedError. */
export async function consumeQuota(store: RateLimitStore, name: string, key: string, windows: readonly RateLimitWindow[], now: number): Promise<Record<string, string>> {
  const result = await store.consume(`${name}:${key}`, windows, now);
  const headers = rateLimitHeaders(result);
  if (!result.allowed) {
    const retryAfter = retryAfterSeconds(result, now);
    throw new RateLimitedError(tooManyRequestsText(name, windows, retryAfter), { ...headers, 'Retry-After': String(retryAfter) });
  }
  return headers;
}

export function windowStart(now: number, seconds: number): number {
  const ms = seconds * 1000;
  return now - (now % ms);
}

export class MemoryRateLimitStore implements RateLimitStore {
  private readonly counters = new Map<string, { start: number; count: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(sweepEveryMs = 60_000) {
    this.sweeper = setInterval(() => this.sweep(Date.now()), sweepEveryMs);
    this.sweeper.unref();
  }

  consume(key: string, windows: readonly RateLimitWindow[], now: number): RateLimitResult {
    const states: WindowState[] = [];
    const entries: { start: number; count: number }[] = [];
    let allowed = true;
    for (const w of windows) {
      const start = windowStart(now, w.seconds);
      const id = `${key}|${w.seconds}`;
      let entry = this.counters.get(id);
      if (!entry || entry.start !== start) {
        entry = { start, count: 0 };
        this.counters.set(id, entry);
      }
      entries.push(entry);
      if (entry.count >= w.max) allowed = false;
    }
    windows.forEach((w, i) => {
      const entry = entries[i]!;
      if (allowed) entry.count += 1;
      states.push({ seconds: w.seconds, max: w.max, count: entry.count, resetAt: entry.start + w.seconds * 1000 });
    });
    return { allowed, windows: states };
  }

  peek(key: string, windows: readonly RateLimitWindow[], now: number): RateLimitResult {
    let allowed = true;
    const states = windows.map((w) => {
      const start = windowStart(now, w.seconds);
      const entry = this.counters.get(`${key}|${w.seconds}`);
      const count = entry && entry.start === start ? entry.count : 0;
      if (count >= w.max) allowed = false;
      return { seconds: w.seconds, max: w.max, count, resetAt: start + w.seconds * 1000 };
    });
    return { allowed, windows: states };
  }

  private sweep(now: number): void {
    for (const [id, entry] of this.counters) {
      const seconds = Number(id.slice(id.lastIndexOf('|') + 1));
      if (entry.start + seconds * 1000 <= now) this.counters.delete(id);
    }
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

/** The window the headers describe: the minute window when there is one (the interface defines
 * X-Rate-Limit-Limit as requests per minute), otherwise the longest. */
function reportedWindow(windows: WindowState[]): WindowState {
  return windows.find((w) => w.seconds === 60) ?? windows.reduce((a, b) => (b.seconds > a.seconds ? b : a));
}

export function rateLimitHeaders(result: RateLimitResult): Record<string, string> {
  const w = reportedWindow(result.windows);
  return {
    'X-Rate-Limit-Limit': String(w.max),
    'X-Rate-Limit-Remaining': String(Math.max(0, w.max - w.count)),
    'X-Rate-Limit-Reset': new Date(w.resetAt).toISOString(),
  };
}

/** Seconds until every full window has reset (at least 1). */
export function retryAfterSeconds(result: RateLimitResult, now: number): number {
  let wait = 0;
  for (const w of result.windows) {
    if (w.count >= w.max) wait = Math.max(wait, w.resetAt - now);
  }
  return Math.max(1, Math.ceil(wait / 1000));
}

export function describeQuota(name: string, windows: readonly RateLimitWindow[]): string {
  const parts = windows.map((w) => `${w.max} request${w.max === 1 ? '' : 's'} per ${w.seconds === 1 ? 'second' : w.seconds === 60 ? 'minute' : `${w.seconds} seconds`}`);
  return `quota "${name}" allows ${parts.join(' and ')}`;
}

export function tooManyRequestsText(name: string, windows: readonly RateLimitWindow[], retryAfter: number): string {
  return `Rate limit exceeded: ${describeQuota(name, windows)}. Retry after ${retryAfter} second${retryAfter === 1 ? '' : 's'}.\n`;
}
