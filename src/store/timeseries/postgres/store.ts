// The PostgreSQL time-series store (default). Readings live in register-day blocks with hourly
// rollups (table `reading_blocks`, src/store/migrations/004_reading_blocks.sql; format and
// reasons in src/shared/readings/blocks.ts and docs/meter-data.md):
//   writes: ingest.ts (bodies: blocks built in a worker) and blockWrite.ts (one transaction,
//   corrections merged into the blocks they touch);
//   reads: blockRead.ts (blocks, split over several connections when large), aggregated by
//   src/shared/readings/aggregate.ts (rollups where they answer, on the event loop: ≤ 24 slots a
//   block; readings where they do not, in the worker pool: aggregateTask.ts);
//   JSON by ../readingJson.ts; rows of the former row table converted at start (convertRows.ts);
//   daily rollups per register zone (blockDays.ts): on write, on a zone change, at start.
import type { Pool, Queryable } from '../../database.ts';
import type { WorkerPool } from '../../../workerPool.ts';
import { aggregateBlocks, daysMissing, rawNeeded, readingsOfBlocks, type Bucketing } from '../../../shared/readings/aggregate.ts';
import type { AggregateTask } from '../../../shared/readings/contract.ts';
import { decodeData, dayOf } from '../../../shared/readings/blocks.ts';
import { seriesJsonById } from '../readingJson.ts';
import { TooManyPoints, type BucketQuery, type ChangeQuery, type RangeQuery, type ReadingVersion, type ReadingsInput, type Series, type TimeSeriesStore, type WriteOutcome } from '../types.ts';
import { rebuildDays } from './blockDays.ts';
import { fetchBlocks, fillData, localDays, type BlockRow } from './blockRead.ts';
import { writeRows } from './blockWrite.ts';
import { ingestBody } from './ingest.ts';

/** Blocks of each query's registers over its days, updated after its `since`: a block wholly
 * inside the range answers at once, one at an end of the range is decoded to look at its
 * readings inside the range. */
const CHANGED_SQL = `SELECT p.i, b.day, CASE WHEN b.day::float8 * 86400000 >= p.lo AND (b.day + 1)::float8 * 86400000 <= p.hi THEN NULL ELSE b.data END AS data, p.lo, p.hi, p.since
  FROM unnest($1::int[], $2::int[], $3::float8[], $4::float8[], $5::float8[]) AS p(i, id, lo, hi, since)
  JOIN reading_blocks b ON b.register_id = p.id AND b.day >= floor(p.lo / 86400000) AND b.day <= floor((p.hi - 1) / 86400000) AND b.updated_max > p.since`;

const EMPTY = { timestamps: new Float64Array(0), values: new Float64Array(0), resolutions: new Int32Array(0), updatedAt: new Float64Array(0) };

export class PostgresTimeSeriesStore implements TimeSeriesStore {
  readonly backend = 'postgres' as const;

  constructor(
    private readonly pool: Pool,
    private readonly workers: WorkerPool,
    /** Large reads are fetched in up to this many parts at once (queryParts.ts). */
    private readonly queryParts = 1,
  ) {}

  async write(input: ReadingsInput): Promise<WriteOutcome> {
    if ('body' in input) return ingestBody(this.pool, this.workers, input);
    await writeRows(this.pool, input.rows, input.updatedAtMs ?? Date.now());
    return { ok: true, readings: input.rows.timestamps.length };
  }

  async readJson(q: RangeQuery, maxPoints: number): Promise<Map<number, Buffer>> {
    // The blocks wholly inside the range count exactly: refuse before fetching when they are too many.
    const { rows } = await this.pool.query<{ n: string | null }>('SELECT sum(n) AS n FROM reading_blocks WHERE register_id = ANY($1::int[]) AND day > $2 AND day < $3', [
      q.registerIds,
      dayOf(q.start),
      dayOf(q.end - 1),
    ]);
    if (Number(rows[0]!.n ?? 0) > maxPoints) throw new TooManyPoints(maxPoints);
    const series = await this.readSeries(q);
    if (series.reduce((n, s) => n + s.timestamps.length, 0) > maxPoints) throw new TooManyPoints(maxPoints);
    return seriesJsonById(series);
  }

  async bucketsJson(q: BucketQuery): Promise<Map<number, Buffer>> {
    return seriesJsonById(await this.bucketSeries(q), q.resolutionSeconds);
  }

  async readSeries(q: RangeQuery): Promise<Series[]> {
    const blocks = await fetchBlocks(this.pool, q.registerIds, q.start, q.end, 'data', this.queryParts);
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
    // Hourly rollups answer buckets of whole hours; other lengths aggregate the readings.
    const rollups = days || q.resolutionSeconds % 3600 === 0;
    const [blocks, zones] = await Promise.all([
      fetchBlocks(this.pool, ids, q.start, q.end, days ? 'days' : rollups ? 'hours' : 'data', this.queryParts),
      days ? localDays(this.pool, [...new Set(q.registers.map((r) => r.timeZone))], q.start, q.end) : undefined,
    ]);
    const bucketing = (tz: string): Bucketing => (zones ? { kind: 'days', ...zones.get(tz)! } : { kind: 'epoch', ms: q.resolutionSeconds * 1000 });
    if (rollups) {
      const missing: BlockRow[] = [];
      for (const r of q.registers) {
        const list = blocks.get(r.id) ?? [];
        // Local days: blocks whose daily pieces do not fit get their hours and data.
        const needed = days ? daysMissing(list, bucketing(r.timeZone), q.start, q.end) : rawNeeded(list, bucketing(r.timeZone), q.start, q.end);
        for (const i of needed) missing.push(list[i]!);
      }
      await fillData(this.pool, missing, days);
      // 24 slots per block at most: cheap enough for the event loop.
      return q.registers.map((r) => {
        const list = blocks.get(r.id);
        if (!list) return { registerId: r.id, ...EMPTY };
        return { registerId: r.id, ...aggregateBlocks(list, r.aggregate === 'sum', bucketing(r.timeZone), q.start, q.end) };
      });
    }
    // Every reading decoded: in the worker pool.
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

  /** No superseded version is kept yet (a correction replaces the reading): none has more than one. */
  async versions(_q: RangeQuery, _maxPoints: number): Promise<Map<number, ReadingVersion[]>> {
    return new Map();
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
