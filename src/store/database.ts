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
    /** A page in id order and the number of rows across all pages (one more query: admin lists are small). */
    list: async (db: Queryable, page: { limit: number; offset: number }): Promise<{ items: T[]; total: number }> => {
      const [items, count] = await Promise.all([
        db.query<T>(`${select} ORDER BY ${id} LIMIT $1 OFFSET $2`, [page.limit, page.offset]),
        db.query<{ total: number }>(`SELECT count(*) AS total FROM (${select}) listed`),
      ]);
      return { items: items.rows, total: count.rows[0]!.total };
    },
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
  /** What the client did wrong, in our words: never a table, constraint, column or SQLSTATE text. */
  detail: string;
}

/** SQLSTATE → our words. Domains that know the constraint say more (`programName "x" is already
 * used`); this is the fallback at the storage boundary, so that a database message never reaches
 * a client (docs/errors.md, "What the database refuses"). */
const STORE_ERRORS: Readonly<Record<string, StoreError>> = {
  // Integrity constraints.
  '23505': { kind: 'conflict', detail: 'An object with the same unique value (such as a name or an id) already exists' },
  '23P01': { kind: 'conflict', detail: 'The object overlaps an existing one' },
  '23514': { kind: 'invalid_input', detail: 'A value is outside the range this field allows' },
  '23502': { kind: 'invalid_input', detail: 'A required value is missing' },
  // Data exceptions: values the column types cannot hold.
  '22P02': { kind: 'invalid_input', detail: 'A value has the wrong form for its field' },
  '22003': { kind: 'invalid_input', detail: 'A number is too large or too small for its field' },
  '22007': { kind: 'invalid_input', detail: 'A date or time is not valid' },
  '22008': { kind: 'invalid_input', detail: 'A date or time is out of the supported range' },
  '22001': { kind: 'invalid_input', detail: 'A text value is too long for its field' },
  '22021': { kind: 'invalid_input', detail: 'Text contains U+0000 (NUL) or other characters that cannot be stored' },
  '22P05': { kind: 'invalid_input', detail: 'Text contains U+0000 (NUL) or other characters that cannot be stored' },
  '2200H': { kind: 'invalid_input', detail: 'A value is out of the supported range' },
  '22012': { kind: 'invalid_input', detail: 'A value leads to a division by zero' },
  '54000': { kind: 'invalid_input', detail: 'A value is too large to be stored (shorten it)' },
  '54001': { kind: 'invalid_input', detail: 'The request is too complex to be processed (make it smaller)' },
  // Still contended after withTransaction's retries: worth retrying later.
  '40001': { kind: 'unavailable', detail: 'The database is busy with conflicting changes; retry shortly' },
  '40P01': { kind: 'unavailable', detail: 'The database is busy with conflicting changes; retry shortly' },
  '57014': { kind: 'unavailable', detail: 'The database took too long to answer; retry later' },
};

const UNAVAILABLE: StoreError = { kind: 'unavailable', detail: 'The database is unavailable; retry later' };

/** SQLSTATE → storage error kind and our words; undefined for anything unexpected (a bug: 500). */
export function classifyPgError(err: unknown): StoreError | undefined {
  const code = sqlState(err);
  if (!code) return undefined;
  if (code === '23503') {
    // PostgreSQL's detail says which way the foreign key was hit; only that fact is kept.
    return /still referenced/.test((err as { detail?: string }).detail ?? '')
      ? { kind: 'in_use', detail: 'It is still used by other objects; delete or change those first' }
      : { kind: 'invalid_reference', detail: 'A referenced object does not exist' };
  }
  const known = STORE_ERRORS[code];
  if (known) return known;
  if (UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('53')) return UNAVAILABLE;
  return undefined;
}
