// Rate-limit counters shared by several app instances (RATE_LIMIT_STORE=postgres). Same
// semantics as the in-memory store in src/http/rateLimit.ts (which it satisfies structurally):
// fixed epoch-aligned windows, and a refused request consumes nothing — the increments run in
// a transaction that is rolled back when any window is full. Row locks serialize concurrent
// requests of one client across instances.
import type { Pool } from './database.ts';

interface Window {
  seconds: number;
  max: number;
}

interface WindowState extends Window {
  count: number;
  resetAt: number;
}

const SWEEP_EVERY_MS = 60_000;

export class PgRateLimitStore {
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly pool: Pool) {
    this.sweeper = setInterval(() => {
      this.pool.query("DELETE FROM rate_limit_counters WHERE window_start < now() - interval '1 day'").catch(() => undefined);
    }, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  async consume(key: string, windows: readonly Window[], now: number): Promise<{ allowed: boolean; windows: WindowState[] }> {
    const starts = windows.map((w) => now - (now % (w.seconds * 1000)));
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ window_seconds: number; count: number }>(
        `INSERT INTO rate_limit_counters (key, window_seconds, window_start, count)
         SELECT $1, s, to_timestamp(st / 1000.0), 1 FROM unnest($2::int[], $3::float8[]) AS t(s, st)
         ON CONFLICT (key, window_seconds, window_start) DO UPDATE SET count = rate_limit_counters.count + 1
         RETURNING window_seconds, count`,
        [key, windows.map((w) => w.seconds), starts],
      );
      const counts = new Map(rows.map((r) => [r.window_seconds, r.count]));
      const allowed = windows.every((w) => (counts.get(w.seconds) ?? 0) <= w.max);
      await client.query(allowed ? 'COMMIT' : 'ROLLBACK');
      return {
        allowed,
        windows: windows.map((w, i) => ({
          seconds: w.seconds,
          max: w.max,
          count: allowed ? counts.get(w.seconds)! : counts.get(w.seconds)! - 1,
          resetAt: starts[i]! + w.seconds * 1000,
        })),
      };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async peek(key: string, windows: readonly Window[], now: number): Promise<{ allowed: boolean; windows: WindowState[] }> {
    const starts = windows.map((w) => now - (now % (w.seconds * 1000)));
    const { rows } = await this.pool.query<{ window_seconds: number; count: number }>(
      `SELECT c.window_seconds, c.count FROM rate_limit_counters c
       JOIN unnest($2::int[], $3::float8[]) AS t(s, st) ON c.window_seconds = t.s AND c.window_start = to_timestamp(t.st / 1000.0)
       WHERE c.key = $1`,
      [key, windows.map((w) => w.seconds), starts],
    );
    const counts = new Map(rows.map((r) => [r.window_seconds, r.count]));
    const states = windows.map((w, i) => ({ seconds: w.seconds, max: w.max, count: counts.get(w.seconds) ?? 0, resetAt: starts[i]! + w.seconds * 1000 }));
    return { allowed: states.every((w) => w.count < w.max), windows: states };
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
