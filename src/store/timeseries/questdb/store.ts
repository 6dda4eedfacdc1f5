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
import { CHANGED, SAME, copyStatements, createVersionsTable, dropExpiredVersions, rowStates, rowsWhere, storedStatements, versionsTableOf, type VersionsRetention } from './versions.ts';
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
/** How often superseded versions past READING_VERSIONS_RETENTION are looked for. */
const RETENTION_INTERVAL_MS = 3_600_000;
/** Change probes run at once (the PG-wire pool's size). */
const PROBE_CONCURRENCY = 8;

/** Rows of a read: int8 (QuestDB `long`) as a JavaScript number, each row an array. */
const INT8_AS_NUMBER = { getTypeParser: (oid: number, format?: string) => (oid === 20 ? Number : (pg.types.getTypeParser as (o: number, f?: string) => (v: string) => unknown)(oid, format)) };

/** Runs a read and hands each row to `onRow` as it arrives, as the bytes QuestDB sent
 * (rawRows.ts), instead of letting node-postgres decode every field and keep every row as an
 * array until the result ends. Hand-written hot path, measured (docs/benchmarks.md,
 * QuestDB): the kept rows outlived V8's young generation, and
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

/** The journal entry left rows of the batch out (posted again unchanged): these are to be sent. */
class FewerRows extends Error {
  constructor(readonly rows: ReadingRows) {
    super('rows left out');
  }
}

/** Columns of one register's answer, filled row by row straight into typed arrays (sized for
 * the rows expected, doubled when more come): JavaScript arrays pushed row by row and copied
 * into typed arrays at the end were a third of the Node CPU of a bucket read
 * (docs/benchmarks.md, QuestDB). */
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
    // In time order; of equal timestamps (versions given out-of-order recordedAts) the one recorded last.
    const sorted = Array.from({ length: n }, (_, i) => i).sort((x, y) => timestamps[x]! - timestamps[y]! || updatedAt[x]! - updatedAt[y]!);
    const order = sorted.filter((x, k) => k + 1 === n || timestamps[sorted[k + 1]!] !== timestamps[x]);
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

/** A register's answer as of an instant: its current rows recorded by then, and the superseded
 * versions current then, both in time order, as one series. A timestamp in both (possible only
 * when a caller gave recordedAts out of order) shows the version recorded last. */
export function asOfMerge(current: Series, earlier: Series): Series {
  const m = earlier.timestamps.length;
  if (m === 0) return current;
  const n = current.timestamps.length;
  const out = { registerId: current.registerId, timestamps: new Float64Array(n + m), values: new Float64Array(n + m), resolutions: new Int32Array(n + m), updatedAt: new Float64Array(n + m) };
  let i = 0;
  let j = 0;
  let k = 0;
  const take = (from: Series, x: number) => {
    out.timestamps[k] = from.timestamps[x]!;
    out.values[k] = from.values[x]!;
    out.resolutions[k] = from.resolutions[x]!;
    out.updatedAt[k] = from.updatedAt[x]!;
    k += 1;
  };
  while (i < n || j < m) {
    const a = i < n ? current.timestamps[i]! : Infinity;
    const b = j < m ? earlier.timestamps[j]! : Infinity;
    if (a < b) take(current, i++);
    else if (b < a) take(earlier, j++);
    else {
      take(earlier.updatedAt[j]! > current.updatedAt[i]! ? earlier : current, earlier.updatedAt[j]! > current.updatedAt[i]! ? j : i);
      i += 1;
      j += 1;
    }
  }
  return { registerId: out.registerId, timestamps: out.timestamps.subarray(0, k), values: out.values.subarray(0, k), resolutions: out.resolutions.subarray(0, k), updatedAt: out.updatedAt.subarray(0, k) };
}

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
  /** READING_VERSIONS_RETENTION: versions superseded before `cutoff(now)` may go (undefined, or a
   * cutoff of -Infinity: kept forever). */
  versionsRetention?: VersionsRetention;
}

export interface QuestDbDeps {
  /** The platform's PostgreSQL: the pending-batch journal and the tombstones. */
  pool: Pool;
  workers: WorkerPool;
  log: Logger;
}

/** A QuestDB table name of at most 127 characters, with room for the `_versions` of its versions table. */
export const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,117}$/;

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
    this.platform = deps.pool;
    this.buffers = new SharedBuffers(connections);
    this.journal = new BatchJournal(deps.pool);
    this.tombstones = new Tombstones(deps.pool);
    this.versionsTable = versionsTableOf(table);
    this.purger = new Purger({
      pool: deps.pool,
      table,
      versionsTable: this.versionsTable,
      questdb: (sql) => this.select(sql, []),
      applied: () => this.waitApplied(),
      log: deps.log,
      afterMs: options.purgeAfterMs ?? 60_000,
      checkpoint: options.purgeCheckpoint,
    });
    this.completion = {
      send: async (batch) => void (await this.send(batch.rows, batch.updatedAtMs, Promise.resolve(undefined))),
      keepVersions: (batch, options) => this.keepVersions(batch.rows, batch.updatedAtMs, options),
      gate: new PartitionGate(table, this.versionsTable, (client) => this.purger.finishInterrupted(client)),
    };
    // Run by src/app.ts with the platform's periodic jobs (src/jobs/periodicJob.ts).
    this.periodicWork = [{ name: 'questdb-replay', intervalMs: REPLAY_INTERVAL_MS, step: () => this.replayPending() }];
    const purgeMs = options.purgeIntervalMs ?? 60_000;
    if (purgeMs > 0) this.periodicWork.push({ name: 'questdb-purge', intervalMs: purgeMs, step: () => this.purge() });
    this.retention = options.versionsRetention;
    if (this.retention && Number.isFinite(this.retention.cutoff(Date.now()))) this.periodicWork.push({ name: 'reading-versions-purge', intervalMs: RETENTION_INTERVAL_MS, step: () => this.dropExpiredVersions() });
  }
  private readonly versionsTable: string;
  private readonly retention: VersionsRetention | undefined;
  private readonly workers: WorkerPool;
  private readonly log: Logger;
  /** The platform's PostgreSQL. */
  private readonly platform: Pool;

  static async connect(options: QuestDbOptions, deps: QuestDbDeps): Promise<QuestDbTimeSeriesStore> {
    const table = options.table ?? 'readings';
    if (!TABLE_NAME.test(table)) throw new Error(`QUESTDB_TABLE ${JSON.stringify(table)}: letters, digits and _ only, not starting with a digit, at most 118 characters`);
    const pool = new pg.Pool({ connectionString: options.pgUrl, max: PROBE_CONCURRENCY, Client: RawRowClient });
    pool.on('error', (err) => deps.log.warn({ err: err.message }, 'idle QuestDB connection failed'));
    const connections = Math.max(1, options.connections ?? 4);
    const http = new IlpHttp({ url: options.httpUrl, connections, retryMs: options.retryMs ?? 30_000 });
    try {
      await pool.query(createTable(table));
      // Existing installations need nothing more: their rows are the current versions (recorded
      // at their updated_at); superseded versions are kept from now on.
      await pool.query(createVersionsTable(table));
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
    // The batch's recordedAt is given by the journal (the write clock) unless the caller gives one.
    const requestedAtMs = input.updatedAtMs;
    const t0 = performance.now();
    if ('rows' in input) return this.writeRows(input.rows, requestedAtMs, t0, 0);
    const parsed = await parseBodySliced(this.workers, bodyBytes(input.body), requestedAtMs ?? Date.now());
    const parseMs = performance.now() - t0;
    try {
      if (!parsed.ok) return refused(parsed);
      return await this.writeRows(parsedRows(parsed, await input.resolve(parsed.series)), requestedAtMs, t0, parseMs);
    } finally {
      // Nothing reads the columns any more: writeRows returns only once every lane has stopped.
      parsed.release?.();
    }
  }

  private async writeRows(rows: ReadingRows, requestedAtMs: number | undefined, t0: number, parseMs: number): Promise<WriteOutcome> {
    const readings = rows.timestamps.length;
    if (readings === 0) return { ok: true, readings };
    const t1 = performance.now();
    // The journal entry's header gives the recordedAt the chunks carry; the rest of the journal
    // is written while the workers encode. No chunk is sent before the entry is ready: its parts
    // committed, older batches of the same readings complete, no purge holding the batch's
    // months, and the values it replaces copied into the versions table.
    const entry = await this.journal.begin(rows, requestedAtMs, this.completion);
    try {
      const sent = await this.send(rows, entry.recordedAtMs, entry.ready);
      await entry.done();
      this.log.debug({ readings, parseMs, resolveMs: t1 - t0 - parseMs, ...this.copyMs.get(rows), ...sent, totalMs: performance.now() - t0 }, 'QuestDB batch written');
    } catch (err) {
      // A batch that failed stays journaled, an orphan: the periodic replay completes it.
      await entry.abandon();
      throw err;
    }
    return { ok: true, readings };
  }

  /** Compares `rows` with the stored readings (one query per key group: versions.ts), and copies
   * the stored rows they change into the versions table, superseded at `recordedAtMs`, inside
   * QuestDB. A fresh batch's keys hold nothing: one index lookup per register, nothing copied.
   * Returns the rows to send: a reading posted again unchanged keeps its version and updatedAt,
   * so it is left out (undefined: none is). `again` (a replay): QuestDB's WAL is applied first,
   * and a copy statement whose rows are there already is not run again (each is one QuestDB
   * transaction: all of its rows are there, or none). */
  private async keepVersions(rows: ReadingRows, recordedAtMs: number, { copy, again, after }: { copy: boolean; again: boolean; after?: Promise<unknown> }): Promise<ReadingRows | undefined> {
    const t0 = performance.now();
    if (again) await this.waitApplied();
    const { states, stored } = rowStates(rows);
    // Two queries at once (QuestDB answers each on its own connection).
    const reads = storedStatements(rows, this.table);
    let next = 0;
    const reader = async () => {
      for (let k = next++; k < reads.length; k = next++) await streamRows(this.pool, reads[k]!, [], (row) => stored(rawLong(row, 0), rawLong(row, 1) / 1000, rawNumber(row, 2), rawLong(row, 3)));
    };
    for (const r of await Promise.allSettled([reader(), reader()])) if (r.status === 'rejected') throw r.reason;
    const compared = performance.now();
    let changed = 0;
    let same = 0;
    for (let i = 0; i < states.length; i += 1) {
      if (states[i] === CHANGED) changed += 1;
      else if (states[i] === SAME) same += 1;
    }
    if (copy && changed > 0) {
      await after;
      const replaced = changed === states.length ? rows : rowsWhere(rows, states, (state) => state === CHANGED);
      for (const statement of copyStatements(replaced, this.table, recordedAtMs)) {
        if (again && Number((await this.select(statement.done, []))[0]![0]) > 0) continue;
        await this.pool.query(statement.copy);
      }
    }
    this.copyMs.set(rows, { compareMs: compared - t0, copyMs: performance.now() - compared });
    return same === 0 ? undefined : rowsWhere(rows, states, (state) => state !== SAME);
  }
  /** How long each batch's comparison and copy took (the debug line of its write). */
  private readonly copyMs = new WeakMap<ReadingRows, { compareMs: number; copyMs: number }>();

  /** Encodes the chunks in the workers and sends them, `connections` at a time, then waits until
   * QuestDB has applied them. The chunks are encoded while the journal entry gets ready; none is
   * sent before it is, and if it leaves some rows out (readings posted again unchanged) the rest
   * is planned and encoded again. */
  private async send(rows: ReadingRows, updatedAtMs: number, ready: Promise<ReadingRows | undefined>): Promise<{ journalMs: number; firstSentMs: number; sendMs: number; applyMs: number }> {
    const t0 = performance.now();
    let journalMs = 0;
    const recorded = ready.then((fewer) => {
      journalMs = performance.now() - t0;
      if (fewer) throw new FewerRows(fewer);
    });
    recorded.catch(() => undefined);
    let sent: { firstSentMs: number; sendMs: number; applyMs: number };
    try {
      sent = await this.sendChunks(rows, updatedAtMs, recorded, t0);
    } catch (err) {
      if (!(err instanceof FewerRows)) throw err;
      sent = err.rows.timestamps.length === 0 ? { firstSentMs: 0, sendMs: performance.now() - t0, applyMs: 0 } : await this.sendChunks(err.rows, updatedAtMs, Promise.resolve(), t0);
    }
    return { journalMs, ...sent };
  }

  private async sendChunks(rows: ReadingRows, updatedAtMs: number, recorded: Promise<void>, t0: number): Promise<{ firstSentMs: number; sendMs: number; applyMs: number }> {
    let firstSentMs = 0;
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
    return { firstSentMs, sendMs: t1 - t0, applyMs: performance.now() - t1 };
  }

  /** Read-your-writes: QuestDB applies WAL transactions asynchronously. Waits until the writers
   * of the readings table and of its versions table have applied every transaction their
   * sequencers had after our chunks (and copies) were acknowledged. */
  private async waitApplied(): Promise<void> {
    const tables = [this.table, this.versionsTable];
    const state = async () => {
      const { rows } = await this.pool.query<{ name: string; writerTxn: string; sequencerTxn: string; suspended: boolean }>(
        `SELECT name, writerTxn, sequencerTxn, suspended FROM wal_tables() WHERE name IN ('${tables.join("', '")}')`,
      );
      return tables.map((name) => {
        const row = rows.find((r) => r.name === name);
        if (!row) throw new TimeSeriesUnavailable(`QuestDB table ${name} is not listed in wal_tables()`);
        if (row.suspended) throw new TimeSeriesUnavailable(`QuestDB suspended the WAL of table ${name}`);
        return { writer: Number(row.writerTxn), sequencer: Number(row.sequencerTxn) };
      });
    };
    const start = Date.now();
    const first = await state();
    let current = first;
    for (let pause = 1; current.some((c, k) => c.writer < first[k]!.sequencer); pause = Math.min(pause * 2, APPLY_POLL_MS)) {
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

  /** One retention step (versions.ts): months of superseded versions past the retention dropped. */
  dropExpiredVersions(now = Date.now()): Promise<number> {
    if (!this.retention) return Promise.resolve(0);
    return dropExpiredVersions({ pool: this.platform, table: this.table, cutoff: this.retention.cutoff(now), questdb: (sql) => this.select(sql, []), applied: () => this.waitApplied(), log: this.log });
  }

  /** A read over the PostgreSQL wire, rows as arrays (measured: parsing row objects with Date
   * timestamps doubled the time of a one-register-year answer; docs/questdb.md). */
  private async select(text: string, values: unknown[]): Promise<unknown[][]> {
    const { rows } = await this.pool.query({ text, values, rowMode: 'array', types: INT8_AS_NUMBER });
    return rows as unknown[][];
  }

  /** Readings as stored (or as they were at `asOf`). Timestamps travel as microseconds (long),
   * not text. No ORDER BY: rows come in time order and are grouped by register here. */
  private async series(q: RangeQuery, limit?: number): Promise<Series[]> {
    if (q.registerIds.length === 0) return [];
    const out = builders(q.registerIds, 64);
    let count = 0;
    const rowOf = registerRows(out);
    const hidden = await this.hidden(q.registerIds);
    const ids = q.registerIds.map(String);
    const asOf = q.asOf === undefined ? undefined : new Date(q.asOf);
    const rowLimit = limit ? ` LIMIT ${limit + 1}` : '';
    // As of an instant: the current rows recorded by then, and the versions then current that
    // were superseded since (versions table, months superseded after the instant only).
    const earlier = asOf ? builders(q.registerIds, 16) : undefined;
    const current = streamRows(
      this.pool,
      `SELECT register_id, cast(ts AS long), value, resolution, cast(updated_at AS long) FROM ${this.table}
       WHERE register_id IN (${placeholders(ids.length, 3)}) AND ts >= $1 AND ts < $2${asOf ? ` AND updated_at <= $${ids.length + 3}` : ''}${hidden}${rowLimit}`,
      [new Date(q.start), new Date(q.end), ...ids, ...(asOf ? [asOf] : [])],
      (row) => {
        count += 1;
        rowOf(rawLong(row, 0))?.push(rawLong(row, 1) / 1000, rawNumber(row, 2), rawLong(row, 3), rawLong(row, 4) / 1000);
      },
    );
    const superseded = earlier
      ? (() => {
          const earlierOf = registerRows(earlier);
          return streamRows(
            this.pool,
            `SELECT register_id, cast(reading_ts AS long), value, resolution, cast(recorded_at AS long) FROM ${this.versionsTable}
             WHERE register_id IN (${placeholders(ids.length, 4)}) AND superseded_at > $3 AND reading_ts >= $1 AND reading_ts < $2 AND recorded_at <= $3${hidden}${rowLimit}`,
            [new Date(q.start), new Date(q.end), asOf, ...ids],
            (row) => {
              count += 1;
              earlierOf(rawLong(row, 0))?.push(rawLong(row, 1) / 1000, rawNumber(row, 2), rawLong(row, 3), rawLong(row, 4) / 1000);
            },
          );
        })()
      : undefined;
    superseded?.catch(() => undefined);
    await current;
    await superseded;
    if (limit !== undefined && count > limit) throw new TooManyPoints(limit);
    const series = built(out);
    return earlier ? series.map((s) => asOfMerge(s, earlier.get(s.registerId)!.series())) : series;
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
      if (q.asOf !== undefined) {
        await this.bucketsAsOf(q, q.asOf, zone, align, registers, out);
        continue;
      }
      const summed = new Set(registers.filter((r) => r.aggregate === 'sum').map((r) => r.id));
      const averaged = summed.size < registers.length;
      // The local day of a bucket found from the row before's (arithmetic, cached days): with
      // Intl for every row (nextLocalMidnight) it was the largest self time of a daily read of
      // 100 registers × 1 year (docs/benchmarks.md).
      let near: LocalDay | undefined;
      // Only the columns needed, register_id only when the group has several registers (a
      // field fewer per row for QuestDB to write and for us to read: docs/benchmarks.md).
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

  /** One time zone group's buckets as they were at `asOf`: SAMPLE BY over the superseded
   * versions current then (their reading time made the designated timestamp of a sorted
   * subquery; few rows: only months superseded after the instant are scanned), then over the
   * current rows recorded by then; a bucket in both gets their sums, counts and latest recordedAt
   * together. Both use the same calendar alignment, so their buckets start at the same instants. */
  private async bucketsAsOf(q: BucketQuery, asOf: number, zone: string, align: string, registers: BucketQuery['registers'][number][], out: Map<number, SeriesBuilder>): Promise<void> {
    const day = q.resolutionSeconds === 86400;
    const summed = new Set(registers.filter((r) => r.aggregate === 'sum').map((r) => r.id));
    const averaged = summed.size < registers.length;
    const ids = registers.map((r) => String(r.id));
    const params = [new Date(q.start), new Date(q.end), new Date(asOf), ...ids];
    const partial = new Map<number, Map<number, { total: number; n: number; updated: number }>>();
    await streamRows(
      this.pool,
      `SELECT cast(ts AS long), cast(updated AS long), total, n, register_id FROM (
         SELECT register_id, ts, sum(value) AS total, count() AS n, max(recorded_at) AS updated FROM (
           SELECT register_id, reading_ts AS ts, value, recorded_at FROM ${this.versionsTable}
           WHERE register_id IN (${placeholders(ids.length, 4)}) AND superseded_at > $3 AND reading_ts >= $1 AND reading_ts < $2 AND recorded_at <= $3 ORDER BY reading_ts
         ) timestamp(ts) SAMPLE BY ${q.resolutionSeconds}s ${align})`,
      params,
      (row) => {
        const id = rawLong(row, 4);
        const buckets = partial.get(id) ?? partial.set(id, new Map()).get(id)!;
        buckets.set(rawLong(row, 0) / 1000, { total: rawNumber(row, 2), n: rawLong(row, 3), updated: rawLong(row, 1) / 1000 });
      },
    );
    const rowOf = registerRows(out);
    let near: LocalDay | undefined;
    const resolutionAt = (ts: number, local: LocalDay | undefined) => (local ? Math.round((local.end - ts) / 1000) : q.resolutionSeconds);
    await streamRows(
      this.pool,
      `SELECT cast(ts AS long), cast(updated AS long), total, n, register_id${averaged ? ', mean' : ''} FROM (
         SELECT register_id, ts, sum(value) AS total, count() AS n${averaged ? ', avg(value) AS mean' : ''}, max(updated_at) AS updated FROM ${this.table}
         WHERE register_id IN (${placeholders(ids.length, 4)}) AND ts >= $1 AND ts < $2 AND updated_at <= $3 SAMPLE BY ${q.resolutionSeconds}s ${align})`,
      params,
      (row) => {
        const b = rowOf(rawLong(row, 4));
        if (!b) return;
        const ts = rawLong(row, 0) / 1000;
        if (day) near = near ? localDayNear(ts, near, zone) : localDayAt(localDayIndex(ts, zone), zone);
        const sum = summed.has(b.registerId);
        let value = rawNumber(row, sum ? 2 : 5);
        let updated = rawLong(row, 1) / 1000;
        const other = partial.get(b.registerId)?.get(ts);
        if (other) {
          partial.get(b.registerId)!.delete(ts);
          const total = rawNumber(row, 2) + other.total;
          value = sum ? total : total / (rawLong(row, 3) + other.n);
          updated = Math.max(updated, other.updated);
        }
        b.push(ts, value, resolutionAt(ts, near), updated);
      },
    );
    // Buckets whose every reading was recorded after `asOf` again (the builder sorts them in).
    for (const [id, buckets] of partial) {
      const b = out.get(id);
      if (!b) continue;
      for (const [ts, { total, n, updated }] of buckets) {
        b.push(ts, summed.has(id) ? total : total / n, resolutionAt(ts, day ? localDayAt(localDayIndex(ts, zone), zone) : undefined), updated);
      }
    }
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

  /** Every version of the (register, timestamp)s in [start, end) that have been corrected: their
   * superseded versions (versions table), then their current rows. `asOf` plays no part. */
  async versions(q: RangeQuery, maxPoints: number): Promise<Map<number, ReadingVersion[]>> {
    const out = new Map<number, ReadingVersion[]>();
    if (q.registerIds.length === 0) return out;
    const ids = [...new Set(q.registerIds)].map(String);
    const hidden = await this.hidden(q.registerIds);
    let count = 0;
    /** Per register, per timestamp: its versions. */
    const keys = new Map<number, Map<number, ReadingVersion[]>>();
    await streamRows(
      this.pool,
      `SELECT register_id, cast(reading_ts AS long), value, resolution, cast(recorded_at AS long), cast(superseded_at AS long) FROM ${this.versionsTable}
       WHERE register_id IN (${placeholders(ids.length, 3)}) AND reading_ts >= $1 AND reading_ts < $2${hidden} LIMIT ${maxPoints + 1}`,
      [new Date(q.start), new Date(q.end), ...ids],
      (row) => {
        count += 1;
        const id = rawLong(row, 0);
        const timestamp = rawLong(row, 1) / 1000;
        const byTs = keys.get(id) ?? keys.set(id, new Map()).get(id)!;
        const list = byTs.get(timestamp) ?? byTs.set(timestamp, []).get(timestamp)!;
        list.push({ timestamp, value: rawNumber(row, 2), resolution: rawLong(row, 3), recordedAt: rawLong(row, 4) / 1000, supersededAt: rawLong(row, 5) / 1000 });
      },
    );
    if (count === 0) return out;
    if (count > maxPoints) throw new TooManyPoints(maxPoints);
    // The current version of each corrected timestamp: one query over the registers and the span
    // of their corrected timestamps, the timestamps listed.
    let first = Infinity;
    let last = -Infinity;
    const stamps = new Set<number>();
    for (const byTs of keys.values()) {
      for (const t of byTs.keys()) {
        stamps.add(t);
        first = Math.min(first, t);
        last = Math.max(last, t);
      }
    }
    const corrected = [...keys.keys()].map(String);
    await streamRows(
      this.pool,
      `SELECT register_id, cast(ts AS long), value, resolution, cast(updated_at AS long) FROM ${this.table}
       WHERE register_id IN (${placeholders(corrected.length, 3)}) AND ts >= $1 AND ts <= $2 AND cast(ts AS long) IN (${[...stamps].map((t) => Math.round(t * 1000)).join(', ')})`,
      [new Date(first), new Date(last), ...corrected],
      (row) => {
        const timestamp = rawLong(row, 1) / 1000;
        keys.get(rawLong(row, 0))?.get(timestamp)?.push({ timestamp, value: rawNumber(row, 2), resolution: rawLong(row, 3), recordedAt: rawLong(row, 4) / 1000, supersededAt: null });
      },
    );
    for (const id of q.registerIds) {
      const byTs = keys.get(id);
      if (!byTs || out.has(id)) continue;
      const list: ReadingVersion[] = [];
      for (const t of [...byTs.keys()].sort((a, b) => a - b)) {
        const versions = byTs.get(t)!.sort((a, b) => a.recordedAt - b.recordedAt || (a.supersededAt ?? Infinity) - (b.supersededAt ?? Infinity));
        count += versions.filter((v) => v.supersededAt === null).length;
        list.push(...versions);
      }
      out.set(id, list);
    }
    if (count > maxPoints) throw new TooManyPoints(maxPoints);
    return out;
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
