// The PostgreSQL time-series store (default). Readings live in register-day blocks, compact
// (table `reading_blocks`, src/store/migrations/010_reading_blocks_compact.sql; format and
// reasons in src/shared/readings/blocks.ts, codec.ts and docs/meter-data.md), with the versions
// they superseded (src/shared/readings/versions.ts):
//   writes: ingest.ts (bodies: blocks encoded in a worker) and blockWrite.ts (one transaction,
//   corrections merged into the blocks they touch, superseded versions kept);
//   reads: blockRead.ts (blocks, split over several connections when large; asOf rebuilds blocks
//   written since), aggregated by src/shared/readings/aggregate.ts (daily pieces where they
//   answer local days, the readings otherwise; on the event loop when small, in the worker pool
//   when large: aggregateTask.ts);
//   JSON by ../readingJson.ts; former layouts converted at start (convertRows.ts, convertBlocks.ts);
//   daily pieces per register zone (blockDays.ts): on write, on a zone change, on conversion.
import { withTransaction, type Pool, type Queryable } from '../../database.ts';
import type { WorkerPool } from '../../../workerPool.ts';
import { aggregateBlocks, daysMissing, readingsOfBlocks, type Bucketing } from '../../../shared/readings/aggregate.ts';
import type { AggregateTask } from '../../../shared/readings/contract.ts';
import { decodeData, dayOf } from '../../../shared/readings/blocks.ts';
import { FOREVER, type Retention } from '../../../shared/readings/retention.ts';
import { decodeHistory, encodeHistory, historyMin, purgeHistory, versionsOf, type VersionColumns } from '../../../shared/readings/versions.ts';
import { seriesJsonById } from '../readingJson.ts';
import { TooManyPoints, type BucketQuery, type ChangeQuery, type RangeQuery, type ReadingVersion, type ReadingsInput, type Series, type TimeSeriesStore, type WriteOutcome } from '../types.ts';
import { rebuildDays } from './blockDays.ts';
import { DATA_AND_HISTORY_SQL, blocksWithHistory, fetchBlocks, fillData, localDays, type BlockRow } from './blockRead.ts';
import { writeRows } from './blockWrite.ts';
import { ingestBody } from './ingest.ts';

/** Blocks of each query's registers over its days, updated after its `since`: a block wholly
 * inside the range answers at once, one at an end of the range is decoded to look at its
 * readings inside the range. */
const CHANGED_SQL = `SELECT p.i, b.day, CASE WHEN b.day::float8 * 86400000 >= p.lo AND (b.day + 1)::float8 * 86400000 <= p.hi THEN NULL ELSE b.data END AS data, p.lo, p.hi, p.since
  FROM unnest($1::int[], $2::int[], $3::float8[], $4::float8[], $5::float8[]) AS p(i, id, lo, hi, since)
  JOIN reading_blocks b ON b.register_id = p.id AND b.day >= floor(p.lo / 86400000) AND b.day <= floor((p.hi - 1) / 86400000) AND b.updated_max > p.since`;

/** Blocks with superseded versions in the range, one result row per register (as blockRead.ts reads them). */
const VERSIONS_SQL = `SELECT register_id AS id, string_agg(int4send(day) || ${DATA_AND_HISTORY_SQL}, ''::bytea ORDER BY day) AS blob
  FROM reading_blocks WHERE register_id = ANY($1::int[]) AND day >= $2 AND day <= $3 AND history IS NOT NULL GROUP BY register_id`;
/** Blocks holding versions superseded before the cutoff (found through the BRIN index on
 * history_min; no order, which would walk the primary key), locked; blocks a writer or another
 * purge holds are skipped, so a purge never waits for a lock and never deadlocks with a write. */
const PURGE_SQL = `SELECT register_id AS id, day, history FROM reading_blocks WHERE history_min < $1 LIMIT $2 FOR UPDATE SKIP LOCKED`;
const PURGED_SQL = `UPDATE reading_blocks b SET history = u.history, history_min = u.history_min
  FROM unnest($1::int[], $2::int[], $3::bytea[], $4::float8[]) AS u(id, day, history, history_min) WHERE b.register_id = u.id AND b.day = u.day`;
const PURGE_BATCH = 500;
/** Batches one purge step takes at most (the rest waits for the next step). */
const PURGE_BATCHES = 20;
const PURGE_INTERVAL_MS = 600_000;

/** Blocks of up to this many bytes of data are aggregated on the event loop (a register-year of
 * quarter hours is ~40 kB, decoded in ~1 ms); more go to the worker pool. */
const MAIN_THREAD_BYTES = 256 * 1024;

const EMPTY = { timestamps: new Float64Array(0), values: new Float64Array(0), resolutions: new Int32Array(0), updatedAt: new Float64Array(0) };

export class PostgresTimeSeriesStore implements TimeSeriesStore {
  readonly backend = 'postgres' as const;

  readonly periodicWork: { name: string; intervalMs: number; step: () => Promise<number> }[] = [];

  constructor(
    private readonly pool: Pool,
    private readonly workers: WorkerPool,
    /** Large reads are fetched in up to this many parts at once (queryParts.ts). */
    private readonly queryParts = 1,
    /** How long superseded versions are kept (READING_VERSIONS_RETENTION). */
    private readonly retention: Retention = FOREVER,
  ) {
    if (retention !== FOREVER) this.periodicWork.push({ name: 'reading-versions-purge', intervalMs: PURGE_INTERVAL_MS, step: () => this.purgeVersions() });
  }

  async write(input: ReadingsInput): Promise<WriteOutcome> {
    if ('body' in input) return ingestBody(this.pool, this.workers, input);
    await writeRows(this.pool, input.rows, input.updatedAtMs);
    return { ok: true, readings: input.rows.timestamps.length };
  }

  async readJson(q: RangeQuery, maxPoints: number): Promise<Map<number, Buffer>> {
    // The blocks wholly inside the range count exactly (as of an earlier instant, at most as
    // many: readings are never removed one by one): refuse before fetching when they are too many.
    const { rows } = await this.pool.query<{ n: string | null }>('SELECT sum(n) AS n FROM reading_blocks WHERE register_id = ANY($1::int[]) AND day > $2 AND day < $3', [
      q.registerIds,
      dayOf(q.start),
      dayOf(q.end - 1),
    ]);
    if (q.asOf === undefined && Number(rows[0]!.n ?? 0) > maxPoints) throw new TooManyPoints(maxPoints);
    const series = await this.readSeries(q);
    if (series.reduce((n, s) => n + s.timestamps.length, 0) > maxPoints) throw new TooManyPoints(maxPoints);
    return seriesJsonById(series);
  }

  async bucketsJson(q: BucketQuery): Promise<Map<number, Buffer>> {
    return seriesJsonById(await this.bucketSeries(q), q.resolutionSeconds);
  }

  async readSeries(q: RangeQuery): Promise<Series[]> {
    const blocks = await fetchBlocks(this.pool, q.registerIds, q.start, q.end, 'data', this.queryParts, q.asOf);
    return q.registerIds.map((id) => {
      const list = blocks.get(id);
      if (!list) return { registerId: id, ...EMPTY };
      const r = readingsOfBlocks(list, q.start, q.end);
      return { registerId: id, timestamps: r.times, values: r.values, resolutions: r.resolutions, updatedAt: r.updatedAt };
    });
  }

  async bucketSeries(q: BucketQuery): Promise<Series[]> {
    const ids = q.registers.map((r) => r.id);
    const days = q.resolutionSeconds === 86400;
    const [blocks, zones] = await Promise.all([
      fetchBlocks(this.pool, ids, q.start, q.end, days ? 'days' : 'data', this.queryParts, q.asOf),
      days ? localDays(this.pool, [...new Set(q.registers.map((r) => r.timeZone))], q.start, q.end) : undefined,
    ]);
    const bucketing = (tz: string): Bucketing => (zones ? { kind: 'days', ...zones.get(tz)! } : { kind: 'epoch', ms: q.resolutionSeconds * 1000 });
    if (days) {
      // Local days: blocks whose daily pieces do not fit get their data.
      const missing: BlockRow[] = [];
      for (const r of q.registers) {
        const list = blocks.get(r.id) ?? [];
        for (const i of daysMissing(list, bucketing(r.timeZone), q.start, q.end)) missing.push(list[i]!);
      }
      await fillData(this.pool, missing, q.asOf);
    }
    // What is left to decode decides where: daily pieces take a fraction of a microsecond a block,
    // readings (and blocks rebuilt as of an instant) about a microsecond a hundred bytes. The
    // worker pool takes a question only when the blocks to decode are most of what it would have
    // to copy there (36,500 blocks of daily pieces cost more to copy than to read).
    let bytes = 0;
    let blockCount = 0;
    let decoded = 0;
    for (const list of blocks.values())
      for (const b of list) {
        blockCount += 1;
        const n = (b.data?.length ?? 0) + (b.asOf ? b.asOf.data.length + b.asOf.history.length : 0);
        bytes += n;
        if (n > 0) decoded += 1;
      }
    if (bytes <= MAIN_THREAD_BYTES || decoded < blockCount / 2)
      return q.registers.map((r) => {
        const list = blocks.get(r.id);
        if (!list) return { registerId: r.id, ...EMPTY };
        return { registerId: r.id, ...aggregateBlocks(list, r.aggregate === 'sum', bucketing(r.timeZone), q.start, q.end) };
      });
    // Many readings to decode: in the worker pool, off the event loop.
    const task: AggregateTask = { registers: q.registers.map((r) => ({ blocks: blocks.get(r.id) ?? [], summed: r.aggregate === 'sum', bucketing: bucketing(r.timeZone) })), start: q.start, end: q.end };
    const columns = await this.workers.run('readings/aggregateTask', task);
    return q.registers.map((r, k) => ({ registerId: r.id, ...columns[k]! }));
  }

  async changedSince(queries: readonly ChangeQuery[]): Promise<boolean[]> {
    const columns: number[][] = [[], [], [], [], []];
    queries.forEach((q, i) => {
      for (const id of q.registerIds) {
        columns[0]!.push(i);
        columns[1]!.push(id);
        columns[2]!.push(q.start);
        columns[3]!.push(q.end);
        columns[4]!.push(q.since);
      }
    });
    const { rows } = await this.pool.query<{ i: number; day: number; data: Buffer | null; lo: number; hi: number; since: number }>(CHANGED_SQL, columns);
    const changed = new Array<boolean>(queries.length).fill(false);
    for (const row of rows) {
      if (changed[row.i]) continue;
      if (!row.data) {
        changed[row.i] = true;
        continue;
      }
      const r = decodeData(row.data, row.day);
      for (let k = 0; k < r.times.length; k += 1) if (r.times[k]! >= row.lo && r.times[k]! < row.hi && r.updatedAt[k]! > row.since) changed[row.i] = true;
    }
    return changed;
  }

  async versions(q: RangeQuery, maxPoints: number): Promise<Map<number, ReadingVersion[]>> {
    const { rows } = await this.pool.query<{ id: number; blob: Buffer }>({ name: 'flex_block_versions', text: VERSIONS_SQL, values: [q.registerIds, dayOf(q.start), dayOf(q.end - 1)] });
    const out = new Map<number, ReadingVersion[]>();
    let total = 0;
    for (const { id, blob } of rows) {
      const columns: VersionColumns = { times: [], values: [], resolutions: [], recordedAt: [], supersededAt: [] };
      for (const block of blocksWithHistory([{ id, blob }])) {
        total += versionsOf(decodeData(block.data, block.day), decodeHistory(block.history, block.day), q.start, q.end, columns);
        if (total > maxPoints) throw new TooManyPoints(maxPoints);
      }
      if (columns.times.length === 0) continue;
      out.set(
        id,
        columns.times.map((timestamp, k) => ({
          timestamp,
          value: columns.values[k]!,
          resolution: columns.resolutions[k]!,
          recordedAt: columns.recordedAt[k]!,
          supersededAt: Number.isNaN(columns.supersededAt[k]!) ? null : columns.supersededAt[k]!,
        })),
      );
    }
    return out;
  }

  /** Removes versions superseded before the retention's cutoff; returns the blocks rewritten. */
  async purgeVersions(now = Date.now()): Promise<number> {
    const cutoff = this.retention.cutoff(now);
    let purged = 0;
    for (let batch = 0; batch < PURGE_BATCHES; batch += 1) {
      const done = await withTransaction(this.pool, async (tx) => {
        const { rows } = await tx.query<{ id: number; day: number; history: Buffer }>(PURGE_SQL, [cutoff, PURGE_BATCH]);
        const update: [number[], number[], (Buffer | null)[], (number | null)[]] = [[], [], [], []];
        for (const r of rows) {
          const kept = purgeHistory(decodeHistory(r.history, r.day), cutoff);
          const bytes = encodeHistory(r.day, kept);
          update[0].push(r.id);
          update[1].push(r.day);
          update[2].push(bytes && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
          update[3].push(historyMin(kept));
        }
        if (rows.length > 0) await tx.query(PURGED_SQL, update);
        return rows.length;
      });
      purged += done;
      if (done < PURGE_BATCH) break;
    }
    return purged;
  }

  async hasReadings(registerId: number): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM reading_blocks WHERE register_id = $1 LIMIT 1', [registerId]);
    return rowCount === 1;
  }

  async deleteRegister(registerId: number): Promise<void> {
    await this.pool.query('DELETE FROM reading_blocks WHERE register_id = $1', [registerId]);
  }

  async timeZoneChanged(tx: Queryable, registerId: number): Promise<void> {
    await rebuildDays(tx, registerId);
  }

  async close(): Promise<void> {}
}
