// The QuestDB time-series store (TIMESERIES_BACKEND=questdb), written against QuestDB's
// documented protocols: writes with InfluxDB line protocol over HTTP (@questdb/nodejs-client),
// reads over the PostgreSQL wire protocol (`pg`) with SAMPLE BY for buckets.
//
// - Table `readings` (created at connect): register_id SYMBOL, value DOUBLE, resolution INT,
//   updated_at TIMESTAMP, designated timestamp ts, PARTITION BY MONTH, WAL, with
//   DEDUP UPSERT KEYS(ts, register_id) so re-sent readings replace the stored ones.
// - A batch is sent in one HTTP request (auto-flush off), which QuestDB commits as one
//   transaction: all rows or none.
// - WAL tables apply commits asynchronously: a read right after a write can miss it for a
//   moment (normally well under a second). Document this to users of this backend.
// This backend cannot run in our CI (no QuestDB there); test/integration/timeseriesContract
// runs the same contract against it when QUESTDB_HTTP_URL and QUESTDB_PG_URL are set.
import { Sender } from '@questdb/nodejs-client';
import pg from 'pg';
import type { Logger } from 'pino';
import { nextLocalMidnight } from '../../../workers/virtual/time.ts';
import { TooManyPoints, type BucketQuery, type RangeQuery, type Series, type TimeSeriesStore, type WriteBatch } from './types.ts';

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS readings (
  register_id SYMBOL CAPACITY 100000 INDEX, value DOUBLE, resolution INT, updated_at TIMESTAMP, ts TIMESTAMP
) TIMESTAMP(ts) PARTITION BY MONTH WAL DEDUP UPSERT KEYS(ts, register_id)`;

interface Row {
  register_id: string;
  ts: Date;
  value: number;
  resolution: number;
  updated_at: Date;
}

const iso = (ms: number) => new Date(ms).toISOString();

function readingText(start: number, end: number, updated: number, value: number, resolution: number): string {
  return `{"timestamp":"${iso(start)}","periodTo":"${iso(end)}","updatedAt":"${iso(updated)}","value":${value},"resolution":${resolution}}`;
}

export class QuestDbTimeSeriesStore implements TimeSeriesStore {
  readonly backend = 'questdb' as const;
  readonly acceptsPgCopy = false;

  private constructor(
    private readonly httpUrl: string,
    private readonly pool: pg.Pool,
    private readonly log: Logger,
  ) {}

  static async connect(httpUrl: string, pgUrl: string, log: Logger): Promise<QuestDbTimeSeriesStore> {
    const pool = new pg.Pool({ connectionString: pgUrl, max: 8 });
    pool.on('error', (err) => log.warn({ err: err.message }, 'idle QuestDB connection failed'));
    await pool.query(CREATE_TABLE);
    return new QuestDbTimeSeriesStore(httpUrl, pool, log);
  }

  private senderConfig(): string {
    const url = new URL(this.httpUrl);
    const auth = url.username ? `username=${decodeURIComponent(url.username)};password=${decodeURIComponent(url.password)};` : '';
    // One request per batch (a single QuestDB transaction); buffers sized for large batches.
    return `${url.protocol.replace(':', '')}::addr=${url.host};${auth}auto_flush=off;init_buf_size=1048576;max_buf_size=1073741824;request_timeout=60000;retry_timeout=10000;`;
  }

  async write(batch: WriteBatch): Promise<void> {
    if (batch.timestamps.length === 0) return;
    const sender = await Sender.fromConfig(this.senderConfig());
    try {
      for (let s = 0; s < batch.registerIds.length; s += 1) {
        const id = String(batch.registerIds[s]);
        for (let i = batch.offsets[s]!; i < batch.offsets[s + 1]!; i += 1) {
          await sender
            .table('readings')
            .symbol('register_id', id)
            .floatColumn('value', batch.values[i]!)
            .intColumn('resolution', batch.resolutions[i]!)
            .timestampColumn('updated_at', batch.updatedAtMs, 'ms')
            .at(batch.timestamps[i]!, 'ms');
        }
      }
      await sender.flush();
    } finally {
      await sender.close().catch((err: unknown) => this.log.warn({ err }, 'closing the QuestDB sender failed'));
    }
  }

  private async rows(q: RangeQuery, limit?: number): Promise<Row[]> {
    if (q.registerIds.length === 0) return [];
    const ids = q.registerIds.map((id, i) => `$${i + 3}`).join(', ');
    const { rows } = await this.pool.query<Row>(
      `SELECT register_id, ts, value, resolution, updated_at FROM readings WHERE register_id IN (${ids}) AND ts >= $1 AND ts < $2 ORDER BY register_id, ts${limit ? ` LIMIT ${limit + 1}` : ''}`,
      [new Date(q.start), new Date(q.end), ...q.registerIds.map(String)],
    );
    return rows;
  }

  async readJson(q: RangeQuery, maxPoints: number): Promise<Map<number, string>> {
    const rows = await this.rows(q, maxPoints);
    if (rows.length > maxPoints) throw new TooManyPoints(maxPoints);
    const parts = new Map<number, string[]>();
    for (const r of rows) {
      const id = Number(r.register_id);
      const t = r.ts.getTime();
      (parts.get(id) ?? parts.set(id, []).get(id)!).push(readingText(t, t + r.resolution * 1000, r.updated_at.getTime(), r.value, r.resolution));
    }
    return new Map([...parts].map(([id, list]) => [id, `[${list.join(',')}]`]));
  }

  /** SAMPLE BY per time zone group (day buckets follow each register's local midnight). */
  private async buckets(q: BucketQuery): Promise<{ id: number; ts: number; end: number; value: number; updated: number }[]> {
    const out: { id: number; ts: number; end: number; value: number; updated: number }[] = [];
    const day = q.resolutionSeconds === 86400;
    const groups = new Map<string, BucketQuery['registers'][number][]>();
    for (const r of q.registers) {
      const zone = day ? r.timeZone : 'UTC';
      (groups.get(zone) ?? groups.set(zone, []).get(zone)!).push(r);
    }
    for (const [zone, registers] of groups) {
      const ids = registers.map((_, i) => `$${i + 3}`).join(', ');
      const align = day && zone !== 'UTC' ? `ALIGN TO CALENDAR TIME ZONE '${zone.replace(/'/g, "''")}'` : 'ALIGN TO CALENDAR';
      const { rows } = await this.pool.query<{ register_id: string; ts: Date; total: number; mean: number; updated: Date }>(
        `SELECT register_id, ts, sum(value) AS total, avg(value) AS mean, max(updated_at) AS updated FROM readings
         WHERE register_id IN (${ids}) AND ts >= $1 AND ts < $2 SAMPLE BY ${q.resolutionSeconds}s ${align} ORDER BY register_id, ts`,
        [new Date(q.start), new Date(q.end), ...registers.map((r) => String(r.id))],
      );
      const summed = new Set(registers.filter((r) => r.aggregate === 'sum').map((r) => r.id));
      for (const r of rows) {
        const id = Number(r.register_id);
        const ts = r.ts.getTime();
        const end = day ? nextLocalMidnight(ts, zone) : ts + q.resolutionSeconds * 1000;
        out.push({ id, ts, end, value: summed.has(id) ? r.total : r.mean, updated: r.updated.getTime() });
      }
    }
    return out;
  }

  async bucketsJson(q: BucketQuery): Promise<Map<number, string>> {
    const parts = new Map<number, string[]>();
    for (const b of await this.buckets(q)) (parts.get(b.id) ?? parts.set(b.id, []).get(b.id)!).push(readingText(b.ts, b.end, b.updated, b.value, q.resolutionSeconds));
    return new Map([...parts].map(([id, list]) => [id, `[${list.join(',')}]`]));
  }

  async readSeries(q: RangeQuery): Promise<Series[]> {
    const rows = await this.rows(q);
    return q.registerIds.map((id) => {
      const mine = rows.filter((r) => Number(r.register_id) === id);
      return {
        registerId: id,
        timestamps: Float64Array.from(mine, (r) => r.ts.getTime()),
        values: Float64Array.from(mine, (r) => r.value),
        resolutions: Int32Array.from(mine, (r) => r.resolution),
        updatedAt: Float64Array.from(mine, (r) => r.updated_at.getTime()),
      };
    });
  }

  async bucketSeries(q: BucketQuery): Promise<Series[]> {
    const buckets = await this.buckets(q);
    return q.registers.map(({ id }) => {
      const mine = buckets.filter((b) => b.id === id);
      return {
        registerId: id,
        timestamps: Float64Array.from(mine, (b) => b.ts),
        values: Float64Array.from(mine, (b) => b.value),
        resolutions: Int32Array.from(mine, (b) => Math.round((b.end - b.ts) / 1000)),
        updatedAt: Float64Array.from(mine, (b) => b.updated),
      };
    });
  }

  async hasReadings(registerId: number): Promise<boolean> {
    const { rows } = await this.pool.query('SELECT ts FROM readings WHERE register_id = $1 LIMIT 1', [String(registerId)]);
    return rows.length > 0;
  }

  /** QuestDB has no row DELETE: the register's rows are dropped by rewriting the table without them. */
  async deleteRegister(registerId: number): Promise<void> {
    const id = String(registerId);
    await this.pool.query(`CREATE TABLE readings_keep AS (SELECT * FROM readings WHERE register_id != $1) TIMESTAMP(ts) PARTITION BY MONTH WAL DEDUP UPSERT KEYS(ts, register_id)`, [id]);
    await this.pool.query('DROP TABLE readings');
    await this.pool.query('RENAME TABLE readings_keep TO readings');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
