// Retry policy in explicit tables, shared by the database layer and outgoing HTTP (webhooks):
// which failures are worth retrying, and how long to wait (capped exponential backoff with full
// jitter, so many retrying callers spread out instead of retrying in lockstep).

/** SQLSTATEs after which the whole transaction can be run again: the server rolled it back. */
export const RETRYABLE_SQLSTATES: ReadonlySet<string> = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

/** SQLSTATEs that mean the server or connection is unavailable (connection class 08, shutdown). */
export const UNAVAILABLE_SQLSTATES: ReadonlySet<string> = new Set(['08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03', '53300']);

/** HTTP statuses a webhook receiver may answer that deserve another attempt. */
export const RETRYABLE_HTTP_STATUSES: ReadonlySet<number> = new Set([408, 425, 429, 500, 502, 503, 504]);

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

/** Full jitter: a uniform delay in [0, min(cap, base * 2^attempt)). `attempt` starts at 0. */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}

export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
