// The PostgreSQL pool and the helpers every domain uses: transactions with retry of
// serialization failures, and the translation of SQLSTATEs into storage error kinds at the
// storage boundary (the app maps kinds to HTTP statuses).
import pg from 'pg';
import type { Logger } from 'pino';
import { RETRYABLE_SQLSTATES, UNAVAILABLE_SQLSTATES, backoffDelay, sqlState } from './retry.ts';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

// int8 (bigint, count(*)) as a JS number: our ids are int4 and counts stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
// numeric stays a string: money is decimal and must not pass through binary floating point.

export function createPool(connectionString: string, max: number, log: Logger): Pool {
  const pool = new pg.Pool({ connectionString, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 10_000 });
  // An idle client losing its connection emits here; without a listener the process would crash.
  pool.on('error', (err) => log.warn({ err: err.message }, 'idle database connection failed'));
  return pool;
}

/** The paged list (id order) and the lookup by id of one resource, from the SELECT of its
 * columns (`select`, rows aliased `alias` when it joins). Every admin resource reads this way. */
export function rowReader<T extends pg.QueryResultRow>(select: string, alias?: string) {
  const id = alias ? `${alias}.id` : 'id';
  return {
    list: async (db: Queryable, page: { limit: number; offset: number }): Promise<T[]> =>
      (await db.query<T>(`${select} ORDER BY ${id} LIMIT $1 OFFSET $2`, [page.limit, page.offset])).rows,
    get: async (db: Queryable, rowId: number): Promise<T | undefined> => (await db.query<T>(`${select} WHERE ${id} = $1`, [rowId])).rows[0],
  };
}

const TX_ATTEMPTS = 5;

/** Runs fn in a transaction; serialization failures and deadlocks re-run it (it must be safe to repeat). */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>, isolation: 'read committed' | 'repeatable read' | 'serializable' = 'read committed'): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    const client = await pool.connect();
    try {
      await client.query(isolation === 'read committed' ? 'BEGIN' : `BEGIN ISOLATION LEVEL ${isolation.toUpperCase()}`);
      const result = await fn(client);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      const broken = UNAVAILABLE_SQLSTATES.has(sqlState(err) ?? '');
      client.release(broken ? (err as Error) : undefined);
      if (attempt + 1 < TX_ATTEMPTS && RETRYABLE_SQLSTATES.has(sqlState(err) ?? '')) {
        await new Promise((r) => setTimeout(r, backoffDelay(attempt, { baseMs: 10, capMs: 500 })));
        continue;
      }
      throw err;
    }
  }
}

export type StoreErrorKind = 'conflict' | 'in_use' | 'invalid_reference' | 'invalid_input' | 'unavailable';

export interface StoreError {
  kind: StoreErrorKind;
  detail: string;
}

/** SQLSTATE → storage error kind; undefined for anything unexpected. */
export function classifyPgError(err: unknown): StoreError | undefined {
  const code = sqlState(err);
  if (!code) return undefined;
  const e = err as { detail?: string; message?: string };
  const detail = (e.detail ?? e.message ?? '').replace(/^Key /, '');
  switch (code) {
    case '23505':
      return { kind: 'conflict', detail: `Already exists: ${detail}` };
    case '23503':
      return /still referenced/.test(e.detail ?? '')
        ? { kind: 'in_use', detail: `Still in use: ${detail}` }
        : { kind: 'invalid_reference', detail: `Unknown reference: ${detail}` };
    case '23514':
    case '23502':
    case '22P02':
    case '22003':
    case '22007':
    case '22008':
      return { kind: 'invalid_input', detail: e.message ?? 'invalid value' };
    default:
      if (UNAVAILABLE_SQLSTATES.has(code) || code === '57014') return { kind: 'unavailable', detail: 'The database is unavailable; retry later' };
      return undefined;
  }
}
