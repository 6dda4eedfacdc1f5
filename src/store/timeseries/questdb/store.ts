// The QuestDB time-series store (TIMESERIES_BACKEND=questdb): writes InfluxDB line protocol over
// HTTP, reads over the PostgreSQL wire protocol (`pg`) with SAMPLE BY for buckets; JSON by
// ../readingJson.ts. docs/questdb.md has the design, its guarantees and what they cost.
//
// - The table (QUESTDB_TABLE, default `readings`, created at connect): register_id SYMBOL,
//   value DOUBLE, resolution INT, updated_at TIMESTAMP, designated timestamp ts, PARTITION BY
//   MONTH, WAL, DEDUP UPSERT KEYS(ts, register_id): a re-sent reading replaces the stored one.
// - Write: the worker pool parses and validates the whole body and the resolver gives its
//   register ids before anything is sent. The batch is recorded in the pending-batch journal
//   (PostgreSQL, journal.ts), cut into chunks by time (chunks.ts: QuestDB appends them) that the
//   workers encode as ILP (src/shared/readings/ilp.ts), and the chunks go over several HTTP
//   connections at once (ilpHttp.ts). Once all are
//   acknowledged, write() waits until QuestDB has applied the table's WAL up to the last
//   transaction (read-your-writes), then clears the journal entry and returns.
// - All or nothing: a batch is in the journal before its first chunk is sent, and leaves it
//   only when all of it is applied; a batch left there (Flex killed, QuestDB down past the retry
//   time) is sent again in full at start and every minute, by any instance once its owner is
//   gone, and before any later batch of the same readings (journal.ts). Re-sending is idempotent.
// - Delete: a tombstone in PostgreSQL; reads leave out a tombstoned register's rows. A periodic
//   purge (purge.ts) rewrites, one month partition at a time while writes to that month wait,
//   the partitions holding them, then drops the tombstone.
// test/integration/timeseriesContract.test.ts and readingsBackends.test.ts run against a real
// QuestDB when QUESTDB_HTTP_URL and QUESTDB_PG_URL are set.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Pool } from '../../database.ts';
import type { WorkerPool } from '../../../workerPool.ts';
import { localDayAt, localDayIndex, localDayNear, type LocalDay } from '../../../shared/virtual/time.ts';
import { ilpBound, type IlpChunk } from '../../../shared/readings/ilp.ts';
import { bodyBytes, parseBodySliced, parsedRows, refused } from '../parseBody.ts';
import { seriesJsonById } from '../readingJson.ts';
import { TimeSeriesUnavailable, TooManyPoints, type BucketQuery, type ChangeQuery, type RangeQuery, type ReadingRows, type ReadingVersion, type ReadingsInput, type Series, type TimeSeriesStore, type WriteOutcome } from '../types.ts';
import { SharedBuffers } from '../sharedBuffers.ts';
import { IlpHttp } from './ilpHttp.ts';
import { ilpProtocolVersion, type IlpProtocolSetting } from './ilpSender.ts';
import { planChunks, type ChunkPlan } from './chunks.ts';
import { BatchJournal, Tombstones, type Completion } from './journal.ts';
import { PartitionGate, Purger, type PurgeDeps } from './purge.ts';
import { RawRowClient, rawLong, rawNumber, type RawRow } from './rawRows.ts';

const createTable = (table: string) => `CREATE TABLE IF NOT EXISTS ${table} (
  register_id SYMBOL CAPACITY 100000 INDEX, value DOUBLE, resolution INT, updated_at TIMESTAMP, ts TIMESTAMP
) TIMESTAMP(ts) PARTITION BY MONTH WAL DEDUP UPSERT KEYS(ts, register_id)`;
/** Rows per ILP chunk (one HTTP request, one QuestDB transaction; ~10 MB of text). */
const CHUNK_ROWS = 100_000;
/** How long write() waits for QuestDB to apply a batch it acknowledged. */
const APPLY_TIMEOUT_MS = 60_000;
/** The longest pause between two looks at wal_tables() while a batch is applied (a look is a
 * ~1 ms PG-wire round trip; 50 ms left the 204 up to 50 ms late). */
const APPLY_POLL_MS = 10;
/** How often orphaned pending batches (their writer gone) are looked for and sent again. */
const REPLAY_INTERVAL_MS = 60_000;
/** Change probes run at once (the PG-wire pool's size). */
const PROBE_CONCURRENCY = 8;

/** Rows of a read: int8 (QuestDB `long`) as a JavaScript number, each row an array. */
const INT8_AS_NUMBER = { getTypeParser: (oid: number, format?: string) => (oid === 20 ? Number : (pg.types.getTypeParser as (o: number, f?: string) => (v: string) => unknown)(oid, format)) };

/** Runs a read and hands each row to `onRow` as it arrives, as the bytes QuestDB sent
 * (rawRows.ts), instead of letting node-postgres decode every field and keep every row as an
 * array until the result ends. Hand-written hot path, measured (docs/benchmarks-meter.md,
 * QuestDB, sixth and seventh sessions): the kept rows outlived V8's young generation, and
 * garbage collection was half of the Node CPU of a large read; 100 register-months of hourly
 * averages (74,400 rows) went from 166 to 65 ms of Node CPU, and lower again without the text.
 * An exception in `onRow` skips the remaining rows and is thrown once the result has ended. */
export async function streamRows(pool: pg.Pool, text: string, values: unknown[], onRow: (row: RawRow) => void): Promise<void> {
  const client = (await pool.connect()) as unknown as RawRowClient & pg.PoolClient;
  let failure: { err: unknown } | undefined;
  let broken: Error | undefined;
  // A connection lost mid-read: the query fails with the error (pg hands it to every query of
  // the client); the client's own 'error' event needs a listener while it is checked out, as
  // pool.query attaches one, or it would be an uncaught exception.
  const lost = (err: Error) => (broken = err);
  client.on('error', lost);
  // Called from the socket's data handler: nothing may be thrown there.
  client.rawRow = (row) => {
    if (failure) return;
    try {
      onRow(row);
    } catch (err) {
      failure = { err };
    }
  };
  try {
    await new Promise<void>((resolve, reject) => {
      client.query(new pg.Query({ text, values }, (err) => (err ? reject(err) : resolve())));
    });
  } catch (err) {
    broken = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.rawRow = undefined;
    client.removeListener('error', lost);
    client.release(broken);
  }
  if (failure) throw failure.err;
}

/** Columns of one register's answer, filled row by row straight into typed arrays (sized for
 * the rows expected, doubled when more come): JavaScript arrays pushed row by row and copied
 * into typed arrays at the end were a third of the Node CPU of a bucket read
 * (docs/benchmarks-meter.md, QuestDB, seventh session). */
class SeriesBuilder {
  constructor(
    readonly registerId: number,
    capacity: number,
  ) {
    this.timestamps = new Float64Array(capacity);
    this.values = new Float64Array(capacity);
    this.resolutions = new Int32Array(capacity);
    this.updatedAt = new Float64Array(capacity);
  }
  private timestamps: Float64Array;
  private values: Float64Array;
  private resolutions: Int32Array;
  private updatedAt: Float64Array;
  private n = 0;
  /** Rows came in time order (as QuestDB sends them); otherwise series() sorts. */
  private ordered = true;

  push(timestamp: number, value: number, resolution: number, updatedAt: number): void {
    const i = this.n;
    if (i === this.timestamps.length) this.grow();
    if (i > 0 && !(this.timestamps[i - 1]! < timestamp)) this.ordered = false;
    this.timestamps[i] = timestamp;
    this.values[i] = value;
    this.resolutions[i] = resolution;
    this.updatedAt[i] = updatedAt;
    this.n = i + 1;
  }

  private grow(): void {
    const size = Math.max(16, this.timestamps.length * 2);
    const more = <T extends Float64Array | Int32Array>(xs: T): T => {
      const out = new (xs.constructor as new (n: number) => T)(size);
      out.set(xs);
      return out;
    };
    this.timestamps = more(this.timestamps);
    this.values = more(this.values);
    this.resolutions = more(this.resolutions);
    this.updatedAt = more(this.updatedAt);
  }

  series(): Series {
    const n = this.n;
    const [timestamps, values, resolutions, updatedAt] = [this.timestamps.subarray(0, n), this.values.subarray(0, n), this.resolutions.subarray(0, n), this.updatedAt.subarray(0, n)];
    if (this.ordered) return { registerId: this.registerId, timestamps, values, resolutions, updatedAt };
    const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => timestamps[x]! - timestamps[y]!);
    return {
      registerId: this.registerId,
      timestamps: Float64Array.from(order, (i) => timestamps[i]!),
      values: Float64Array.from(order, (i) => values[i]!),
      resolutions: Int32Array.from(order, (i) => resolutions[i]!),
      updatedAt: Float64Array.from(order, (i) => updatedAt[i]!),
    };
  }
}

/** One builder per register asked, in that order, each sized for `capacity` rows. */
const builders = (ids: readonly number[], capacity: number) => new Map(ids.map((id) => [id, new SeriesBuilder(id, capacity)]));
const built = (map: Map<number, SeriesBuilder>) => [...map.values()].map((b) => b.series());

/** The builder of a row's register (its register_id, a SYMBOL holding the id's digits), looked
 * up once per run of rows of the same register; undefined for a register not asked for. */
function registerRows(map: Map<number, SeriesBuilder>): (key: number) => SeriesBuilder | undefined {
  let lastKey = NaN;
  let last: SeriesBuilder | undefined;
  return (key) => {
    if (key !== lastKey) {
      lastKey = key;
      last = map.get(key);
    }
    return last;
  };
}

export interface QuestDbOptions {
  httpUrl: string;
  pgUrl: string;
  ilpProtocolVersion?: IlpProtocolSetting;
  /** QUESTDB_TABLE (default `readings`). */
  table?: string;
  /** QUESTDB_WRITE_CONNECTIONS: ILP requests in flight per batch (default 4). */
  connections?: number;
  /** QUESTDB_WRITE_RETRY_MS: how long a chunk is re-sent while QuestDB is unreachable (default 30 s). */
  retryMs?: number;
  chunkRows?: number;
  /** QUESTDB_PURGE_INTERVAL_MS: how often deleted registers' rows are purged (default 60 s; 0: never). */
  purgeIntervalMs?: number;
  /** Age of a tombstone before its rows are purged (default 60 s). */
  purgeAfterMs?: number;
  /** Tests: a throw at a purge step stands for a crash there. */
  purgeCheckpoint?: PurgeDeps['checkpoint'];
}

export interface QuestDbDeps {
  /** The platform's PostgreSQL: the pending-batch journal and the tombstones. */
  pool: Pool;
  workers: WorkerPool;
  log: Logger;
}

export const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,126}$/;

/** `$from`, `$from+1`, … for a list of query parameters. */
const placeholders = (n: number, from: number) => Array.from({ length: n }, (_, i) => `$${i + from}`).join(', ');

/** The chunk `plan` of the batch (chunks.ts), made when a lane takes it, so the first chunk is
 * encoded before the others are made. Columns in shared memory are handed over whole (the
 * worker encodes the plan's ranges of them); others are gathered into new arrays (transferred). */
export function chunkOf(rows: ReadingRows, plan: ChunkPlan, table: string, updatedAtMs: number): IlpChunk {
  const offsets = new Int32Array(plan.series.length + 1);
  for (let k = 0; k < plan.counts.length; k += 1) offsets[k + 1] = offsets[k]! + plan.counts[k]!;
  const registerIds = plan.series.map((s) => rows.registerIds[s]!);
  const { timestamps, values, resolutions } = rows;
  if ([timestamps, values, resolutions].every((c) => c.buffer instanceof SharedArrayBuffer)) return { table, registerIds, offsets, starts: plan.starts, timestamps, values, resolutions, updatedAtMs };
  const gather = <T extends Float64Array | Int32Array>(column: T): T => {
    const out = new (column.constructor as new (n: number) => T)(plan.rows);
    for (let k = 0; k < plan.counts.length; k += 1) out.set(column.subarray(plan.starts[k]!, plan.starts[k]! + plan.counts[k]!), offsets[k]!);
    return out;
  };
  return { table, registerIds, offsets, timestamps: gather(timestamps), values: gather(values), resolutions: gather(resolutions), updatedAtMs };
}

export class QuestDbTimeSeriesStore implements TimeSeriesStore {
  readonly backend = 'questdb' as const;
  private readonly journal: BatchJournal;
  private readonly tombstones: Tombstones;
  /** What the workers write ILP into, used again chunk after chunk: encoding into fresh memory
   * took 2–3× the CPU time. */
  private readonly buffers: SharedBuffers;
  private readonly completion: Completion;
  private readonly purger: Purger;
  readonly periodicWork: { name: string; intervalMs: number; step: () => Promise<number> }[];

  private constructor(
    private readonly table: string,
    private readonly http: IlpHttp,
    private readonly pool: pg.Pool,
    deps: QuestDbDeps,
    private readonly chunkRows: number,
    private readonly connections: number,
    options: QuestDbOptions,
  ) {
    this.workers = deps.workers;
    this.log = deps.log;
    this.buffers = new SharedBuffers(connections);
    this.journal = new BatchJournal(deps.pool);
    this.tombstones = new Tombstones(deps.pool);
    this.purger = new Purger({
      pool: deps.pool,
      table,
      questdb: (sql) => this.select(sql, []),
      applied: () => this.waitApplied(),
      log: deps.log,
      afterMs: options.purgeAfterMs ?? 60_000,
      checkpoint: options.purgeCheckpoint,
    });
    this.completion = {
      send: async (batch) => void (await this.send(batch.rows, batch.updatedAtMs, Promise.resolve())),
      gate: new PartitionGate(table, (client) => this.purger.finishInterrupted(client)),
    };
    // Run by src/app.ts with the platform's periodic jobs (src/jobs/periodicJob.ts).
    this.periodicWork = [{ name: 'questdb-replay', intervalMs: REPLAY_INTERVAL_MS, step: () => this.replayPending() }];
    const purgeMs = options.purgeIntervalMs ?? 60_000;
    if (purgeMs > 0) this.periodicWork.push({ name: 'questdb-purge', intervalMs: purgeMs, step: () => this.purge() });
  }
  private readonly workers: WorkerPool;
  private readonly log: Logger;

  static async connect(options: QuestDbOptions, deps: QuestDbDeps): Promise<QuestDbTimeSeriesStore> {
    const table = options.table ?? 'readings';
    if (!TABLE_NAME.test(table)) throw new Error(`QUESTDB_TABLE ${JSON.stringify(table)}: letters, digits and _ only, not starting with a digit`);
    const pool = new pg.Pool({ connectionString: options.pgUrl, max: PROBE_CONCURRENCY, Client: RawRowClient });
    pool.on('error', (err) => deps.log.warn({ err: err.message }, 'idle QuestDB connection failed'));
    const connections = Math.max(1, options.connections ?? 4);
    const http = new IlpHttp({ url: options.httpUrl, connections, retryMs: options.retryMs ?? 30_000 });
    try {
      await pool.query(createTable(table));
      // Our encoder writes version 1 (text), which every QuestDB with ILP over HTTP reads; the
      // server's version is still settled (and logged) as configured.
      const version = await ilpProtocolVersion(options.httpUrl, options.ilpProtocolVersion ?? 'auto', deps.log);
      deps.log.debug({ version }, 'QuestDB ILP protocol version');
      const store = new QuestDbTimeSeriesStore(table, http, pool, deps, options.chunkRows ?? CHUNK_ROWS, connections, options);
      await store.replayPending();
      return store;
    } catch (err) {
      http.close();
      await pool.end().catch(() => undefined);
      throw err;
    }
  }

  async write(input: ReadingsInput): Promise<WriteOutcome> {
    const updatedAtMs = input.updatedAtMs ?? Date.now();
    const t0 = performance.now();
    if ('rows' in input) return this.writeRows(input.rows, updatedAtMs, t0, 0);
    const parsed = await parseBodySliced(this.workers, bodyBytes(input.body), updatedAtMs);
    const parseMs = performance.now() - t0;
    try {
      if (!parsed.ok) return refused(parsed);
      return await this.writeRows(parsedRows(parsed, await input.resolve(parsed.series)), updatedAtMs, t0, parseMs);
    } finally {
      // Nothing reads the columns any more: writeRows returns only once every lane has stopped.
      parsed.release?.();
    }
  }

  private async writeRows(rows: ReadingRows, updatedAtMs: number, t0: number, parseMs: number): Promise<WriteOutcome> {
    const readings = rows.timestamps.length;
    if (readings === 0) return { ok: true, readings };
    const t1 = performance.now();
    // The journal entry is written while the workers encode; no chunk is sent before it commits,
    // older batches of the same readings are complete and no purge holds the batch's months.
    const journaled = this.journal.begin(rows, updatedAtMs, this.completion);
    try {
      const sent = await this.send(rows, updatedAtMs, journaled);
      await (await journaled).done();
      this.log.debug({ readings, parseMs, resolveMs: t1 - t0 - parseMs, ...sent, totalMs: performance.now() - t0 }, 'QuestDB batch written');
    } catch (err) {
      // A batch that failed stays journaled, an orphan: the periodic replay completes it.
      await (await journaled.catch(() => undefined))?.abandon();
      throw err;
    }
    return { ok: true, readings };
  }

  /** Encodes the chunks in the workers and sends them, `connections` at a time, then waits until
   * QuestDB has applied them. */
  private async send(rows: ReadingRows, updatedAtMs: number, journaled: Promise<unknown>): Promise<{ journalMs: number; firstSentMs: number; sendMs: number; applyMs: number }> {
    const t0 = performance.now();
    let journalMs = 0;
    let firstSentMs = 0;
    const recorded = journaled.then(() => (journalMs = performance.now() - t0));
    recorded.catch(() => undefined);
    const plans = planChunks(rows, this.chunkRows);
    const count = plans.length;
    let next = 0;
    let failed = false;
    const lane = async () => {
      for (let i = next++; i < count && !failed; i = next++) {
        const chunk = chunkOf(rows, plans[i]!, this.table, updatedAtMs);
        const into = this.buffers.take(ilpBound(chunk));
        try {
          const transfers = [chunk.offsets.buffer, chunk.timestamps.buffer, chunk.values.buffer, chunk.resolutions.buffer].filter((b) => b instanceof ArrayBuffer);
          const bytes = await this.workers.run('readings/ilpTask', { chunk, into }, transfers);
          await recorded;
          await this.http.send(bytes);
        } finally {
          this.buffers.give(into);
        }
        firstSentMs ||= performance.now() - t0;
      }
    };
    // Every lane stopped before send() settles (the rows may be lent: parseBodySliced).
    const lanes = await Promise.allSettled(
      Array.from({ length: Math.min(this.connections, count) }, () =>
        lane().catch((err: unknown) => {
          failed = true;
          throw err;
        }),
      ),
    );
    for (const l of lanes) if (l.status === 'rejected') throw l.reason;
    const t1 = performance.now();
    await this.waitApplied();
    return { journalMs, firstSentMs, sendMs: t1 - t0, applyMs: performance.now() - t1 };
  }

  /** Read-your-writes: QuestDB applies WAL transactions asynchronously. Waits until the table's
   * writer has applied every transaction the sequencer had after our chunks were acknowledged. */
  private async waitApplied(): Promise<void> {
    const state = async () => {
      const { rows } = await this.pool.query<{ writerTxn: string; sequencerTxn: string; suspended: boolean }>(
        `SELECT writerTxn, sequencerTxn, suspended FROM wal_tables() WHERE name = '${this.table}'`,
      );
      const row = rows[0];
      if (!row) throw new TimeSeriesUnavailable(`QuestDB table ${this.table} is not listed in wal_tables()`);
      return { writer: Number(row.writerTxn), sequencer: Number(row.sequencerTxn), suspended: row.suspended };
    };
    const start = Date.now();
    const first = await state();
    let current = first;
    for (let pause = 1; current.writer < first.sequencer; pause = Math.min(pause * 2, APPLY_POLL_MS)) {
      if (current.suspended) throw new TimeSeriesUnavailable(`QuestDB suspended the WAL of table ${this.table}`);
      if (Date.now() - start > APPLY_TIMEOUT_MS) throw new TimeSeriesUnavailable(`QuestDB did not apply table ${this.table} within ${APPLY_TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, pause));
      current = await state();
    }
  }

  /** Sends again, in full and in journal order, every orphaned batch (its writer gone). */
  replayPending(): Promise<number> {
    return this.journal.replayOrphans(this.completion, this.log);
  }

  /** One purge step (purge.ts): a partition rewritten without deleted registers' rows, or the
   * tombstones of registers with no rows left dropped. */
  purge(): Promise<number> {
    return this.purger.step();
  }

  /** A read over the PostgreSQL wire, rows as arrays (measured: parsing row objects with Date
   * timestamps doubled the time of a one-register-year answer; docs/questdb.md). */
  private async select(text: string, values: unknown[]): Promise<unknown[][]> {
    const { rows } = await this.pool.query({ text, values, rowMode: 'array', types: INT8_AS_NUMBER });
    return rows as unknown[][];
  }

  /** Readings as stored. Timestamps travel as microseconds (long), not text. No ORDER BY: rows
   * come in time order and are grouped by register here. */
  private async series(q: RangeQuery, limit?: number): Promise<Series[]> {
    if (q.registerIds.length === 0) return [];
    const out = builders(q.registerIds, 64);
    let count = 0;
    const rowOf = registerRows(out);
    await streamRows(
      this.pool,
      `SELECT register_id, cast(ts AS long), value, resolution, cast(updated_at AS long) FROM ${this.table}
       WHERE register_id IN (${placeholders(q.registerIds.length, 3)}) AND ts >= $1 AND ts < $2${await this.hidden(q.registerIds)}${limit ? ` LIMIT ${limit + 1}` : ''}`,
      [new Date(q.start), new Date(q.end), ...q.registerIds.map(String)],
      (row) => {
        count += 1;
        rowOf(rawLong(row, 0))?.push(rawLong(row, 1) / 1000, rawNumber(row, 2), rawLong(row, 3), rawLong(row, 4) / 1000);
      },
    );
    if (limit !== undefined && count > limit) throw new TooManyPoints(limit);
    return built(out);
  }

  readJson(q: RangeQuery, maxPoints: number): Promise<Map<number, Buffer>> {
    return this.series(q, maxPoints).then((series) => seriesJsonById(series));
  }

  readSeries(q: RangeQuery): Promise<Series[]> {
    return this.series(q);
  }

  /** SAMPLE BY per time zone group (day buckets follow each register's local midnight), asking
   * only for the aggregates the group needs; grouped by register here (no ORDER BY). */
  async bucketSeries(q: BucketQuery): Promise<Series[]> {
    // Buckets per register: one per resolution in the span, one more where the first starts
    // before it (calendar alignment, a local midnight before a UTC one); at most a year of
    // hours to start with (a builder grows past it).
    const out = builders(
      q.registers.map((r) => r.id),
      Math.min(8786, Math.ceil((q.end - q.start) / (q.resolutionSeconds * 1000)) + 2),
    );
    // Which of the registers are deleted, asked of PostgreSQL while QuestDB answers; their rows
    // are dropped at the end (a bucket read has no row limit that they could take up).
    const gone = this.tombstones.among([...out.keys()]);
    gone.catch(() => undefined);
    const day = q.resolutionSeconds === 86400;
    const groups = new Map<string, BucketQuery['registers'][number][]>();
    for (const r of q.registers) {
      const zone = day ? r.timeZone : 'UTC';
      (groups.get(zone) ?? groups.set(zone, []).get(zone)!).push(r);
    }
    for (const [zone, registers] of groups) {
      const align = day && zone !== 'UTC' ? `ALIGN TO CALENDAR TIME ZONE '${zone.replace(/'/g, "''")}'` : 'ALIGN TO CALENDAR';
      const summed = new Set(registers.filter((r) => r.aggregate === 'sum').map((r) => r.id));
      const averaged = summed.size < registers.length;
      // The local day of a bucket found from the row before's (arithmetic, cached days): with
      // Intl for every row (nextLocalMidnight) it was the largest self time of a daily read of
      // 100 registers × 1 year (docs/benchmarks-meter.md).
      let near: LocalDay | undefined;
      // Only the columns needed, register_id only when the group has several registers (a
      // field fewer per row for QuestDB to write and for us to read: docs/benchmarks-meter.md).
      let k = 2;
      const totalAt = summed.size > 0 ? k++ : -1;
      const meanAt = averaged ? k++ : -1;
      const keyAt = registers.length > 1 ? k++ : -1;
      const only = keyAt === -1 ? out.get(registers[0]!.id) : undefined;
      const rowOf = registerRows(out);
      await streamRows(
        this.pool,
        `SELECT cast(ts AS long), cast(updated AS long)${totalAt > 0 ? ', total' : ''}${meanAt > 0 ? ', mean' : ''}${keyAt > 0 ? ', register_id' : ''} FROM (
           SELECT register_id, ts${summed.size > 0 ? ', sum(value) AS total' : ''}${averaged ? ', avg(value) AS mean' : ''}, max(updated_at) AS updated FROM ${this.table}
           WHERE register_id IN (${placeholders(registers.length, 3)}) AND ts >= $1 AND ts < $2 SAMPLE BY ${q.resolutionSeconds}s ${align})`,
        [new Date(q.start), new Date(q.end), ...registers.map((r) => String(r.id))],
        (row) => {
          const b = only ?? rowOf(rawLong(row, keyAt));
          if (!b) return;
          const ts = rawLong(row, 0) / 1000;
          if (day) near = near ? localDayNear(ts, near, zone) : localDayAt(localDayIndex(ts, zone), zone);
          b.push(ts, rawNumber(row, summed.has(b.registerId) ? totalAt : meanAt), near ? Math.round((near.end - ts) / 1000) : q.resolutionSeconds, rawLong(row, 1) / 1000);
        },
      );
    }
    for (const id of await gone) out.set(id, new SeriesBuilder(id, 0));
    return built(out);
  }

  async bucketsJson(q: BucketQuery): Promise<Map<number, Buffer>> {
    return seriesJsonById(await this.bucketSeries(q), q.resolutionSeconds);
  }

  /** One probe per query, PROBE_CONCURRENCY at a time. */
  async changedSince(queries: readonly ChangeQuery[]): Promise<boolean[]> {
    const out = new Array<boolean>(queries.length).fill(false);
    let next = 0;
    const probe = async () => {
      for (let i = next++; i < queries.length; i = next++) {
        const q = queries[i]!;
        if (q.registerIds.length === 0) continue;
        const { rows } = await this.pool.query(
          `SELECT ts FROM ${this.table} WHERE register_id IN (${placeholders(q.registerIds.length, 4)}) AND ts >= $1 AND ts < $2 AND updated_at > $3${await this.hidden(q.registerIds)} LIMIT 1`,
          [new Date(q.start), new Date(q.end), new Date(q.since), ...q.registerIds.map(String)],
        );
        out[i] = rows.length > 0;
      }
    };
    await Promise.all(Array.from({ length: Math.min(PROBE_CONCURRENCY, queries.length) }, probe));
    return out;
  }

  /** No superseded version is kept yet on QuestDB (DEDUP UPSERT replaces a reading). */
  async versions(_q: RangeQuery, _maxPoints: number): Promise<Map<number, ReadingVersion[]>> {
    return new Map();
  }

  async hasReadings(registerId: number): Promise<boolean> {
    const { rows } = await this.pool.query(`SELECT ts FROM ${this.table} WHERE register_id = $1${await this.hidden([registerId])} LIMIT 1`, [String(registerId)]);
    return rows.length > 0;
  }

  /** The condition that leaves out the rows of tombstoned registers among `ids` ('' when none
   * is, as nearly always: a deleted register is not asked for). Register ids are never reused and
   * a deleted register takes no more writes, so all its rows go. The literals are numbers. */
  private async hidden(ids: readonly number[]): Promise<string> {
    const gone = await this.tombstones.among([...new Set(ids)]);
    return gone.size === 0 ? '' : ` AND register_id NOT IN (${[...gone].map((id) => `'${Number(id)}'`).join(', ')})`;
  }

  /** QuestDB has no row DELETE, and rewriting the table would lose rows written meanwhile: the
   * register gets a tombstone and reads leave its rows out (docs/questdb.md). */
  async deleteRegister(registerId: number): Promise<void> {
    await this.tombstones.add(registerId, Date.now());
  }

  async close(): Promise<void> {
    this.http.close();
    await this.pool.end();
  }
}
