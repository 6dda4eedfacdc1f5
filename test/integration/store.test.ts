// Storage pieces against the real PostgreSQL: concurrent migrations and the shared rate limiter.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrationSources.ts';
import { createPool, type Pool } from '../../src/store/database.ts';
import { loadMigrations, migrate } from '../../src/store/migrate.ts';
import { PgRateLimitStore } from '../../src/store/pgRateLimitStore.ts';
import { createTestDatabase } from '../support/testApp.ts';

const log = pino({ level: 'silent' });

async function emptyDatabase(): Promise<string> {
  const admin = new pg.Client({ connectionString: `${inject('pgAdminUrl')}/postgres` });
  await admin.connect();
  const name = `m_${randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return `${inject('pgAdminUrl')}/${name}`;
}

describe('migrations', () => {
  it('two instances migrating at once apply each migration exactly once', async () => {
    const url = await emptyDatabase();
    const a = createPool(url, 2, log);
    const b = createPool(url, 2, log);
    try {
      const [na, nb] = await Promise.all([migrate(a, MIGRATIONS, log), migrate(b, MIGRATIONS, log)]);
      const total = loadMigrations(MIGRATIONS).length;
      expect(na + nb).toBe(total);
      expect(Math.min(na, nb)).toBe(0);
      const { rows } = await a.query('SELECT count(*)::int AS n FROM schema_migrations');
      expect(rows[0].n).toBe(total);
      expect(await migrate(a, MIGRATIONS, log)).toBe(0);
    } finally {
      await a.end();
      await b.end();
    }
  });
});

describe('PgRateLimitStore', () => {
  let pool: Pool;
  beforeAll(async () => {
    pool = createPool(await createTestDatabase(), 8, log);
  });
  afterAll(() => pool?.end());

  it('admits exactly max requests per window across concurrent callers, refusals consume nothing', async () => {
    const a = new PgRateLimitStore(pool);
    const b = new PgRateLimitStore(pool);
    const windows = [{ seconds: 60, max: 20 }];
    const now = Date.UTC(2030, 0, 1, 0, 0, 5);
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).consume('client:x', windows, now)));
    expect(results.filter((r) => r.allowed)).toHaveLength(20);
    const { rows } = await pool.query("SELECT count FROM rate_limit_counters WHERE key = 'client:x'");
    expect(rows[0].count).toBe(20);
    const refused = results.find((r) => !r.allowed)!;
    expect(refused.windows[0]).toMatchObject({ count: 20, max: 20, resetAt: Date.UTC(2030, 0, 1, 0, 1, 0) });
    expect((await a.consume('client:x', windows, Date.UTC(2030, 0, 1, 0, 1, 0))).allowed).toBe(true);
    a.close();
    b.close();
  });
});
