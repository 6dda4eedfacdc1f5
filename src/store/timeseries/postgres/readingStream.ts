// A COPY into `readings` in its own transaction, fed chunk by chunk while the batch is still being
// parsed (chunkStreamer.ts). Nothing is visible until finish(); abort() leaves nothing behind.
import { from as copyFrom } from 'pg-copy-streams';
import type { Pool, PoolClient } from '../../database.ts';
import { COPY_HEADER } from '../../../../workers/readings/pgCopy.ts';
import { COPY_SQL, ensurePartitions } from './copyWrite.ts';

const COPY_TRAILER = Buffer.from([0xff, 0xff]);

export class ReadingStream {
  private failure: Error | undefined;
  private released = false;
  private readonly done: Promise<void>;

  private constructor(
    private readonly pool: Pool,
    private readonly client: PoolClient,
    private readonly copy: ReturnType<typeof copyFrom>,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      copy.on('finish', resolve);
      copy.on('error', (err: Error) => {
        this.failure = err;
        reject(err);
      });
    });
    this.done.catch(() => undefined);
  }

  /** Opens a stream into these months (UTC month starts; their partitions are created first). */
  static async open(pool: Pool, months: readonly number[]): Promise<ReadingStream> {
    await ensurePartitions(pool, months);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const stream = new ReadingStream(pool, client, client.query(copyFrom(COPY_SQL)));
      await stream.write(COPY_HEADER);
      return stream;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(err as Error);
      throw err;
    }
  }

  /** Whether rows of these months can be written: the stream was opened for other months, and
   * their partitions cannot be created while it is open (that would wait for this COPY's lock on
   * the parent), so only months whose partitions exist already. */
  async accepts(months: readonly number[]): Promise<boolean> {
    const { rows } = await this.pool.query<{ ok: boolean }>(
      `SELECT bool_and(to_regclass(format('readings_%s', to_char(m AT TIME ZONE 'UTC', 'YYYYMM'))) IS NOT NULL) AS ok FROM unnest($1::timestamptz[]) m`,
      [months.map((m) => new Date(m))],
    );
    return rows[0]!.ok !== false;
  }

  /** COPY rows (binary, no header) with register ids filled in. */
  async write(rows: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    if (!this.copy.write(rows)) await Promise.race([new Promise((r) => this.copy.once('drain', r)), this.done]);
    if (this.failure) throw this.failure;
  }

  async finish(): Promise<void> {
    try {
      this.copy.end(COPY_TRAILER);
      await this.done;
      await this.client.query('COMMIT');
      this.released = true;
      this.client.release();
    } catch (err) {
      await this.abort();
      throw err;
    }
  }

  async abort(): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (!this.failure) {
      this.failure = new Error('aborted');
      // Ending the COPY without its trailer makes PostgreSQL refuse it; the ROLLBACK follows.
      this.copy.destroy(this.failure);
    }
    await this.done.catch(() => undefined);
    await this.client.query('ROLLBACK').catch(() => undefined);
    // A connection whose COPY was cut may be unusable: do not return it to the pool.
    this.client.release(this.failure);
  }
}
