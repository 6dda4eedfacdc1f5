// Query benchmark: 100 registers × 1 year of 15-minute data (3.5M readings), loaded
// as register-day blocks by COPY (this bench is about reads), then p50/p99 latency over HTTP of
//   - GET /api/readings/average/hourly, one register-year          (8,760 points)
//   - GET /api/readings/average/hourly, 100 registers × one month  (74,400 points)
//   - GET /api/readings?resolution=86400, one register-year          (365 local days)
//   - GET /api/readings?resolution=86400, 100 registers × one year   (36,500 local days)
// and the same questions asked of InfluxDB 1.x loaded with the same points (InfluxQL over HTTP
// /query: mean … GROUP BY time(1h), sum … GROUP BY time(1d) tz(…)), of QuestDB used directly when
// QUESTDB_HTTP_URL is set (SAMPLE BY over HTTP /exec, bench/support/questdbPeer.ts), and of
// PostgreSQL with plain SQL over a table of the former row layout (`row_readings`, one row per
// reading, as migration 002 made `readings`; the same embedded server). Requests to all of them
// alternate one by one, so background load on this shared machine hits all alike.
//   npm run bench:query     (REQUESTS=40 WARMUP=5 CONCURRENCY=1)
//   CPU_PROF=1 npm run bench:query   only ours, no peers: the server under `node --cpu-prof`,
//     restarted for each question (QUESTIONS=0,3 picks some), its top self time printed per
//     question, and EXPLAIN (ANALYZE, BUFFERS) of the store's block query for each.
// BACKEND=questdb (with QUESTDB_HTTP_URL, QUESTDB_PG_URL): Flex on QuestDB against the same
// SAMPLE BY questions sent to QuestDB directly instead (bench/queryQuestdb.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { from as copyFrom } from 'pg-copy-streams';
import { BLOCK_COPY_COLUMNS, encodeBlocks, fillRowDays } from '../src/shared/readings/blocks.ts';
import { withTransaction } from '../src/store/database.ts';
import { dayCuts, lockedZones } from '../src/store/timeseries/postgres/blockDays.ts';
import { blockQuery } from '../src/store/timeseries/postgres/blockRead.ts';
import { numbers, questdbMode } from './support/env.ts';
import { ensureInfluxd, startInflux, type Influx } from './support/influx.ts';
import { ilpBodies, questdbPeer } from './support/questdbPeer.ts';
import { busyMs, hotFunctions, readProfiles } from './support/cpuProfile.ts';
import { writeResults } from './support/load.ts';
import { fmt, mapConcurrent, percentile, timedRequest, waitForCpuIdle } from './support/measure.ts';
import { createFleet } from './support/meterSetup.ts';
import { copyBinary, lineProtocolBatches, valueOf } from './support/readingsData.ts';
import { ROOT, startBenchDatabase, startServerProcess } from './support/serverProcess.ts';

await questdbMode(() => import('./queryQuestdb.ts'));

const { REQUESTS, WARMUP, CONCURRENCY } = numbers({ REQUESTS: 40, WARMUP: 5, CONCURRENCY: 1 });
const METERS = 10;
const REGISTERS_PER_METER = 10;
const YEAR = 2023;
const TIME_ZONE = 'Europe/Amsterdam';
const YEAR_START = Date.UTC(YEAR, 0, 1);
const YEAR_END = Date.UTC(YEAR + 1, 0, 1);
const PER_REGISTER = (YEAR_END - YEAR_START) / 900_000;
const CPU_PROF = process.env.CPU_PROF === '1';
const QUESTIONS = process.env.QUESTIONS?.split(',').map(Number);

const db = await startBenchDatabase();
let server = await startServerProcess({ databaseUrl: db.postgres.connectionString, dataDir: db.dataDir });
// Active-energy registers (summed into days) in a European zone (days are local days, 23 and 25
// hours long at the DST changes).
const fleet = await createFleet(server.baseUrl, server.adminToken, {
  meters: METERS,
  registersPerMeter: REGISTERS_PER_METER,
  permissions: ['Meter.Organization.Read'],
  measurementType: 1,
  timeZone: TIME_ZONE,
});
const ids = fleet.registers.map((r) => r.id);
const total = ids.length * PER_REGISTER;

async function copyIn(sql: string, payload: Uint8Array): Promise<void> {
  const client = await db.pool.connect();
  const stream = client.query(copyFrom(sql));
  await new Promise<void>((resolve, reject) => {
    stream.on('error', reject);
    stream.on('finish', resolve);
    stream.end(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength));
  });
  client.release();
}

console.log(`loading ${fmt(total)} readings into PostgreSQL as register-day blocks by binary COPY`);
let t0 = performance.now();
{
  // The blocks a POST of these readings makes (the worker's encoder), 10 registers per COPY.
  const updatedAt = Date.now();
  for (let r = 0; r < ids.length; r += 10) {
    const chunk = ids.slice(r, r + 10);
    const n = chunk.length * PER_REGISTER;
    const times = new Float64Array(n);
    const values = new Float64Array(n);
    const offsets = Int32Array.from({ length: chunk.length + 1 }, (_, k) => k * PER_REGISTER);
    for (let k = 0; k < chunk.length; k += 1)
      for (let i = 0; i < PER_REGISTER; i += 1) {
        times[k * PER_REGISTER + i] = YEAR_START + i * 900_000;
        values[k * PER_REGISTER + i] = valueOf(r + k, i);
      }
    const blocks = encodeBlocks(offsets, times, values, new Int32Array(n).fill(900), updatedAt, chunk);
    // Their daily rollups for the registers' zone, filled in as a write does (blockWrite.ts).
    const cuts = await withTransaction(db.pool, async (tx) => dayCuts(tx, await lockedZones(tx, chunk), blocks.blockDays[0]!, blocks.blockDays[blocks.blockDays.length - 1]!));
    for (let k = 0; k < blocks.blockDays.length; k += 1) fillRowDays(blocks.copy, blocks.rowStarts[k]!, cuts(chunk[blocks.blockSeries[k]!]!, blocks.blockDays[k]!)!);
    await copyIn(`COPY reading_blocks ${BLOCK_COPY_COLUMNS} FROM STDIN (FORMAT binary)`, blocks.copy);
  }
}
await db.pool.query('VACUUM (ANALYZE) reading_blocks');
console.log(`  ${fmt(performance.now() - t0)} ms including VACUUM ANALYZE`);

let diskPerReading = { blocks: NaN, rows: NaN };
if (!CPU_PROF) {
  console.log('loading the same rows into the former row layout (row_readings) by binary COPY');
  t0 = performance.now();
  await db.pool.query(`CREATE TABLE row_readings (register_id int NOT NULL, ts timestamptz NOT NULL, value double precision NOT NULL,
    resolution int NOT NULL, updated_at timestamptz NOT NULL, PRIMARY KEY (register_id, ts)) PARTITION BY RANGE (ts)`);
  for (let m = 0; m < 12; m += 1)
    await db.pool.query(`CREATE TABLE row_readings_${m} PARTITION OF row_readings FOR VALUES FROM ('${new Date(Date.UTC(YEAR, m, 1)).toISOString()}') TO ('${new Date(Date.UTC(YEAR, m + 1, 1)).toISOString()}')`);
  await copyIn('COPY row_readings (register_id, ts, value, resolution, updated_at) FROM STDIN (FORMAT binary)', copyBinary(ids, YEAR_START, PER_REGISTER, Date.now()));
  // What autovacuum would have done by the time anyone queries a year of history.
  await db.pool.query('VACUUM (ANALYZE) row_readings');
  await db.pool.query('CHECKPOINT');
  console.log(`  ${fmt(performance.now() - t0)} ms including VACUUM ANALYZE`);
  const disk = (await db.pool.query<{ blocks: string; rows: string }>(
    `SELECT pg_total_relation_size('reading_blocks') AS blocks, (SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits WHERE inhparent = 'row_readings'::regclass) AS rows`,
  )).rows[0]!;
  diskPerReading = { blocks: Number(disk.blocks) / total, rows: Number(disk.rows) / total };
  console.log(`disk bytes per reading (table + indexes): blocks ${diskPerReading.blocks.toFixed(1)}, row table ${diskPerReading.rows.toFixed(1)}: ${(diskPerReading.blocks / diskPerReading.rows).toFixed(2)}× (target ≤ 0.33×)`);
}

const questdb = CPU_PROF ? undefined : await questdbPeer('flex_bench_query_blocks');
if (questdb) {
  console.log(`loading the same points into ${questdb.version}`);
  await questdb.dropTable();
  await questdb.createTable();
  t0 = performance.now();
  for (let r = 0; r < ids.length; r += 10) await questdb.ingest(ilpBodies(questdb.table, ids.slice(r, r + 10), YEAR_START, PER_REGISTER, 10), 10);
  console.log(`  ${fmt(performance.now() - t0)} ms until readable`);
}

const influxBinary = CPU_PROF ? undefined : ensureInfluxd();
// Snapshot the write cache to TSM files after 5 s without writes (default 10 min), so queries
// read TSM files as they would in steady state.
const influx: Influx | undefined = influxBinary ? await startInflux(influxBinary, '  cache-snapshot-write-cold-duration = "5s"') : undefined;
if (influx) {
  console.log(`loading the same points into InfluxDB ${influx.version}`);
  await influx.query('CREATE DATABASE bench');
  t0 = performance.now();
  // Register by register, 10 at a time, to keep the line-protocol text small.
  for (let r = 0; r < fleet.registers.length; r += 10) {
    const batches = lineProtocolBatches(fleet.registers.slice(r, r + 10), YEAR_START, PER_REGISTER, 10_000);
    await influx.writeBatches('bench', batches, 2);
  }
  console.log(`  ${fmt(performance.now() - t0)} ms; waiting for its cache snapshot and compactions`);
  await new Promise((r) => setTimeout(r, 6_000));
  console.log(`  idle after ${fmt(await waitForCpuIdle([influx.pid], 0.05, 300_000))} ms more`);
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const monthRange = (k: number) => [Date.UTC(YEAR, k % 12, 1), Date.UTC(YEAR, (k % 12) + 1, 1)] as const;
const registerFilter = (registers: readonly { externalId: string }[]) => `(${registers.map((r) => `"register"='${r.externalId}'`).join(' OR ')})`;
const ourUrl = (path: string, registerIds: readonly number[], start: number, end: number, resolution?: number) => {
  const q = new URLSearchParams({ organizationId: String(fleet.organizationId), start: iso(start), end: iso(end) });
  for (const id of registerIds) q.append('registerId', String(id));
  if (resolution !== undefined) q.set('resolution', String(resolution));
  return `${server.baseUrl}${path}?${q}`;
};

interface Question {
  name: string;
  /** Request k (registers and months rotate so neither side answers from one hot cache line). */
  ours(k: number): string;
  influx(k: number): string;
  questdb(k: number): Promise<{ ms: number; bytes: number; rows: number }>;
  /** Plain SQL over the row table: text and parameters. */
  rows(k: number): [string, unknown[]];
}

const ROW_HOURLY = `SELECT register_id, date_bin('1 hour', ts, timestamptz '1970-01-01Z') AS bucket, avg(value) AS value, max(updated_at) AS updated
  FROM row_readings WHERE register_id = ANY($1::int[]) AND ts >= $2 AND ts < $3 GROUP BY 1, 2 ORDER BY 1, 2`;
const ROW_DAILY = `SELECT register_id, date_trunc('day', ts AT TIME ZONE '${TIME_ZONE}') AS day, sum(value) AS value, max(updated_at) AS updated
  FROM row_readings WHERE register_id = ANY($1::int[]) AND ts >= $2 AND ts < $3 GROUP BY 1, 2 ORDER BY 1, 2`;

const questions: Question[] = [
  {
    name: 'hourly average, 1 register × 1 year',
    ours: (k) => ourUrl('/api/readings/average/hourly', [ids[k % ids.length]!], YEAR_START, YEAR_END),
    influx: (k) =>
      `SELECT mean("value") FROM "reading" WHERE "register"='${fleet.registers[k % ids.length]!.externalId}' AND time >= '${iso(YEAR_START)}' AND time < '${iso(YEAR_END)}' GROUP BY time(1h) fill(none)`,
    questdb: (k) => questdb!.hourlyAverages([ids[k % ids.length]!], YEAR_START, YEAR_END),
    rows: (k) => [ROW_HOURLY, [[ids[k % ids.length]!], new Date(YEAR_START), new Date(YEAR_END)]],
  },
  {
    name: 'hourly average, 100 registers × 1 month',
    ours: (k) => ourUrl('/api/readings/average/hourly', ids, ...monthRange(k)),
    influx: (k) => {
      const [start, end] = monthRange(k);
      return `SELECT mean("value") FROM "reading" WHERE ${registerFilter(fleet.registers)} AND time >= '${iso(start)}' AND time < '${iso(end)}' GROUP BY time(1h), "register" fill(none)`;
    },
    questdb: (k) => questdb!.hourlyAverages(ids, ...monthRange(k)),
    rows: (k) => [ROW_HOURLY, [ids, ...monthRange(k).map((t) => new Date(t))]],
  },
  {
    name: 'resolution=86400 (local days, sum), 1 register × 1 year',
    ours: (k) => ourUrl('/api/readings', [ids[k % ids.length]!], YEAR_START, YEAR_END, 86400),
    influx: (k) =>
      `SELECT sum("value") FROM "reading" WHERE "register"='${fleet.registers[k % ids.length]!.externalId}' AND time >= '${iso(YEAR_START)}' AND time < '${iso(YEAR_END)}' GROUP BY time(1d) fill(none) tz('${TIME_ZONE}')`,
    questdb: (k) => questdb!.dailySums([ids[k % ids.length]!], YEAR_START, YEAR_END, TIME_ZONE),
    rows: (k) => [ROW_DAILY, [[ids[k % ids.length]!], new Date(YEAR_START), new Date(YEAR_END)]],
  },
  {
    name: 'resolution=86400 (local days, sum), 100 registers × 1 year',
    ours: () => ourUrl('/api/readings', ids, YEAR_START, YEAR_END, 86400),
    influx: () =>
      `SELECT sum("value") FROM "reading" WHERE ${registerFilter(fleet.registers)} AND time >= '${iso(YEAR_START)}' AND time < '${iso(YEAR_END)}' GROUP BY time(1d), "register" fill(none) tz('${TIME_ZONE}')`,
    questdb: () => questdb!.dailySums(ids, YEAR_START, YEAR_END, TIME_ZONE),
    rows: () => [ROW_DAILY, [ids, new Date(YEAR_START), new Date(YEAR_END)]],
  },
];

const headers = { authorization: `Bearer ${fleet.token}` };
async function ours(url: string): Promise<{ ms: number; bytes: number; points: number }> {
  const r = await timedRequest(url, 'GET', headers, undefined, true);
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${r.body.slice(0, 500)}`);
  const points = (JSON.parse(r.body) as { readings: unknown[] }[]).reduce((n, s) => n + s.readings.length, 0);
  return { ms: r.ms, bytes: r.bytes, points };
}
async function peer(q: string): Promise<{ ms: number; bytes: number; points: number }> {
  const r = await influx!.query(q, 'bench');
  const series = (JSON.parse(r.body) as { results: { series?: { values: unknown[] }[] }[] }).results[0]!.series ?? [];
  return { ms: r.ms, bytes: r.bytes, points: series.reduce((n, s) => n + s.values.length, 0) };
}

async function rowSql([text, values]: [string, unknown[]]): Promise<{ ms: number; rows: number }> {
  const t = performance.now();
  const { rowCount } = await db.pool.query(text, values);
  return { ms: performance.now() - t, rows: rowCount ?? 0 };
}

if (CPU_PROF) {
  await profileQuestions();
  await server.stop();
  await db.close();
  process.exit(0);
}

/** CPU_PROF=1: each question asked of a server started for it under --cpu-prof (start-up is in
 * its profile too, as tsx and module loading, not among the request's functions), then the block
 * query behind it explained by PostgreSQL. */
async function profileQuestions(): Promise<void> {
  const chosen = questions.filter((_, k) => !QUESTIONS || QUESTIONS.includes(k));
  for (const question of chosen) {
    await server.stop();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-bench-query-prof-'));
    server = await startServerProcess({ databaseUrl: db.postgres.connectionString, dataDir: db.dataDir, cpuProfDir: dir });
    const ms: number[] = [];
    for (let k = 0; k < WARMUP + REQUESTS; k += 1) {
      const r = await ours(question.ours(k).replace(/^http:\/\/[^/]+/, server.baseUrl));
      if (k >= WARMUP) ms.push(r.ms);
    }
    await server.stop();
    const profile = readProfiles(dir).sort((a, b) => busyMs(b) - busyMs(a))[0]!;
    console.log(`\n${question.name}: p50 ${percentile(ms, 50).toFixed(1)} ms under the profiler (${REQUESTS} requests); server main thread ${fmt(busyMs(profile))} ms busy in all (start-up included), self time:`);
    console.table(hotFunctions(profile, 25, ROOT));
    fs.rmSync(dir, { recursive: true, force: true });
  }
  server = await startServerProcess({ databaseUrl: db.postgres.connectionString, dataDir: db.dataDir });
  for (const question of chosen) {
    const [, values] = question.rows(0);
    const [ids, start, end] = values as [number[], Date, Date];
    for (const columns of question.name.startsWith('hourly') ? (['hours'] as const) : (['hours', 'days'] as const)) {
      const query = blockQuery(columns, ids, start.getTime(), end.getTime());
      const { rows } = await db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${query.text}`, query.values);
      console.log(`\n${question.name}, ${columns} as one query:\n${rows.map((r) => r['QUERY PLAN']).join('\n')}`);
    }
  }
}

const results = [];
for (const question of questions) {
  const oursMs: number[] = [];
  const peerMs: number[] = [];
  const questMs: number[] = [];
  const rowMs: number[] = [];
  let oursShape = { bytes: 0, points: 0 };
  let peerShape = { bytes: 0, points: 0 };
  await mapConcurrent(
    Array.from({ length: WARMUP + REQUESTS }, (_, k) => k),
    CONCURRENCY,
    async (k) => {
      const a = await ours(question.ours(k));
      const b = influx ? await peer(question.influx(k)) : undefined;
      const c = questdb ? await question.questdb(k) : undefined;
      const d = await rowSql(question.rows(k));
      if (k < WARMUP) return;
      if (c) questMs.push(c.ms);
      rowMs.push(d.ms);
      oursMs.push(a.ms);
      oursShape = a;
      if (b) {
        peerMs.push(b.ms);
        peerShape = b;
      }
    },
  );
  const row = {
    question: question.name,
    'ours p50 ms': Number(percentile(oursMs, 50).toFixed(1)),
    'ours p99 ms': Number(percentile(oursMs, 99).toFixed(1)),
    'InfluxDB p50 ms': influx ? Number(percentile(peerMs, 50).toFixed(1)) : NaN,
    'InfluxDB p99 ms': influx ? Number(percentile(peerMs, 99).toFixed(1)) : NaN,
    'ours/InfluxDB p50': influx ? Number((percentile(oursMs, 50) / percentile(peerMs, 50)).toFixed(2)) : NaN,
    'ours/InfluxDB p99': influx ? Number((percentile(oursMs, 99) / percentile(peerMs, 99)).toFixed(2)) : NaN,
    'QuestDB p50 ms': questdb ? Number(percentile(questMs, 50).toFixed(1)) : NaN,
    'ours/QuestDB p50': questdb ? Number((percentile(oursMs, 50) / percentile(questMs, 50)).toFixed(2)) : NaN,
    'PG rows SQL p50 ms': Number(percentile(rowMs, 50).toFixed(1)),
    'ours/PG rows p50': Number((percentile(oursMs, 50) / percentile(rowMs, 50)).toFixed(2)),
    'ours KiB': Math.round(oursShape.bytes / 1024),
    'InfluxDB KiB': Math.round(peerShape.bytes / 1024),
    'InfluxDB points': peerShape.points,
  };
  console.log(
    `${question.name}: ours p50 ${row['ours p50 ms']} ms, InfluxDB ${row['InfluxDB p50 ms']} ms (${row['ours/InfluxDB p50']}×), ` +
      `QuestDB ${row['QuestDB p50 ms']} ms (${row['ours/QuestDB p50']}×), PG rows SQL ${row['PG rows SQL p50 ms']} ms (${row['ours/PG rows p50']}×); load ${os.loadavg()[0]!.toFixed(2)}`,
  );
  if (influx && oursShape.points !== peerShape.points) console.log(`  note: ours ${oursShape.points} points, InfluxDB ${peerShape.points}`);
  results.push({ ...row, oursMs, influxMs: peerMs, questdbMs: questMs, rowSqlMs: rowMs });
}

console.log(`\n${fmt(total)} readings (${ids.length} registers × ${fmt(PER_REGISTER)}), ${REQUESTS} requests per question after ${WARMUP} warm-up, ${CONCURRENCY} in flight; ratio < 1 = ours faster`);
console.table(results.map(({ oursMs: _a, influxMs: _b, questdbMs: _c, rowSqlMs: _d, ...row }) => row));
const file = writeResults('query', {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, postgres: 'embedded 18 (DEFAULT_SETTINGS)', influxdb: influx?.version, questdb: questdb?.version, loadAverage: os.loadavg() },
  diskBytesPerReading: diskPerReading,
  setup: { registers: ids.length, readingsPerRegister: PER_REGISTER, total, year: YEAR, timeZone: TIME_ZONE, requests: REQUESTS, warmup: WARMUP, concurrency: CONCURRENCY },
  results,
});
console.log(`written ${file}`);
await server.stop();
if (influx) await influx.stop();
await db.close();
process.exit(0);
