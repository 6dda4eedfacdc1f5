// Query benchmark: 100 registers × 1 year of 15-minute data (3.5M readings) for each data set
// (DATA=meter,random: meter-like values and uniformly random ones, bench/support/readingsData.ts,
// each in a year of its own), written into register-day blocks as the store writes them (this
// bench is about reads), then p50/p99 latency over HTTP of
//   - GET /api/readings/average/hourly, one register-year          (8,760 points)
//   - GET /api/readings/average/hourly, 100 registers × one month  (74,400 points)
//   - GET /api/readings?resolution=86400, one register-year          (365 local days)
//   - GET /api/readings?resolution=86400, 100 registers × one year   (36,500 local days)
// and the same questions asked of InfluxDB 1.x loaded with the same points (InfluxQL over HTTP
// /query: mean … GROUP BY time(1h), sum … GROUP BY time(1d) tz(…)), of QuestDB used directly when
// QUESTDB_HTTP_URL is set (SAMPLE BY over HTTP /exec, bench/support/questdbPeer.ts), and of
// PostgreSQL with plain SQL over a table of the former row layout (`row_readings`, one row per
// reading, as migration 002 made `readings`; the same embedded server). Requests to all of them
// alternate one by one, so background load on this shared machine hits all alike. Then 1% of
// the readings are corrected (runs of 4 hours, through POST /api/readings) and each question is
// asked again `asOf` an instant before the correction and without, alternating: the price of
// rebuilding the corrected blocks as they were.
//   npm run bench:query     (REQUESTS=40 WARMUP=5 CONCURRENCY=1 DATA=meter,random)
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
import { blockQuery } from '../src/store/timeseries/postgres/blockRead.ts';
import { writeRows } from '../src/store/timeseries/postgres/blockWrite.ts';
import { numbers, questdbMode } from './support/env.ts';
import { ensureInfluxd, startInflux, type Influx } from './support/influx.ts';
import { ilpBodies, questdbPeer } from './support/questdbPeer.ts';
import { busyMs, hotFunctions, readProfiles } from './support/cpuProfile.ts';
import { writeResults } from './support/load.ts';
import { fmt, mapConcurrent, percentile, timedRequest, waitForCpuIdle } from './support/measure.ts';
import { createFleet } from './support/meterSetup.ts';
import { copyBinary, dataValue, lineProtocolBatches, type DataKind, type ValueOf } from './support/readingsData.ts';
import { ROOT, startBenchDatabase, startServerProcess } from './support/serverProcess.ts';

await questdbMode(() => import('./queryQuestdb.ts'));

const { REQUESTS, WARMUP, CONCURRENCY } = numbers({ REQUESTS: 40, WARMUP: 5, CONCURRENCY: 1 });
const METERS = 10;
const REGISTERS_PER_METER = 10;
const TIME_ZONE = 'Europe/Amsterdam';
const CPU_PROF = process.env.CPU_PROF === '1';
const QUESTIONS = process.env.QUESTIONS?.split(',').map(Number);
const KINDS = (process.env.DATA ?? 'meter,random').split(',') as DataKind[];
/** Each data set in a year of its own (2023, 2022, …): 365 days each. */
const yearOf = (k: number) => 2023 - k;

const db = await startBenchDatabase();
// Idle connections see PostgreSQL stop at the end (57P01): not an error of the run.
db.pool.on('error', () => undefined);
// The corrections are posted back to back; the per-client limits (5/s, 20/min) would answer 429.
const SERVER_ENV = { RATE_LIMIT_READINGS_PER_SECOND: '1000', RATE_LIMIT_READINGS_PER_MINUTE: '100000' };
let server = await startServerProcess({ databaseUrl: db.postgres.connectionString, dataDir: db.dataDir, env: SERVER_ENV });
// Active-energy registers (summed into days) in a European zone (days are local days, 23 and 25
// hours long at the DST changes).
const fleet = await createFleet(server.baseUrl, server.adminToken, {
  meters: METERS,
  registersPerMeter: REGISTERS_PER_METER,
  permissions: ['Meter.Organization.ReadWrite'],
  measurementType: 1,
  timeZone: TIME_ZONE,
});
const ids = fleet.registers.map((r) => r.id);

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

const perRegister = (year: number) => (Date.UTC(year + 1, 0, 1) - Date.UTC(year, 0, 1)) / 900_000;
const values = (kind: DataKind, start: number): ValueOf => (r, i) => dataValue(kind, r, i, start);

// ---- loads: every data set into ours, the row table, QuestDB and InfluxDB ----
await db.pool.query(`CREATE TABLE row_readings (register_id int NOT NULL, ts timestamptz NOT NULL, value double precision NOT NULL,
  resolution int NOT NULL, updated_at timestamptz NOT NULL, PRIMARY KEY (register_id, ts)) PARTITION BY RANGE (ts)`);
const questdb = CPU_PROF ? undefined : await questdbPeer('flex_bench_query_blocks');
if (questdb) {
  await questdb.dropTable();
  await questdb.createTable();
}
const influxBinary = CPU_PROF ? undefined : ensureInfluxd();
// Snapshot the write cache to TSM files after 5 s without writes (default 10 min), so queries
// read TSM files as they would in steady state.
const influx: Influx | undefined = influxBinary ? await startInflux(influxBinary, '  cache-snapshot-write-cold-duration = "5s"') : undefined;
if (influx) await influx.query('CREATE DATABASE bench');

const disk: Record<string, { blocks: number; rows: number }> = {};
for (const [k, kind] of KINDS.entries()) {
  const year = yearOf(k);
  const start = Date.UTC(year, 0, 1);
  const n = perRegister(year);
  const total = ids.length * n;
  console.log(`${kind} data, ${year}: loading ${fmt(total)} readings into PostgreSQL as register-day blocks`);
  let t0 = performance.now();
  const before = Number((await db.pool.query<{ b: string }>("SELECT pg_total_relation_size('reading_blocks') AS b")).rows[0]!.b);
  // The blocks a POST of these readings makes, written as the store writes them (blockWrite.ts), 10 registers at a time.
  for (let r = 0; r < ids.length; r += 10) {
    const chunk = ids.slice(r, r + 10);
    const times = new Float64Array(chunk.length * n);
    const vs = new Float64Array(chunk.length * n);
    const offsets = Int32Array.from({ length: chunk.length + 1 }, (_, j) => j * n);
    for (let j = 0; j < chunk.length; j += 1)
      for (let i = 0; i < n; i += 1) {
        times[j * n + i] = start + i * 900_000;
        vs[j * n + i] = dataValue(kind, r + j, i, start);
      }
    await writeRows(db.pool, { registerIds: chunk, offsets, timestamps: times, values: vs, resolutions: new Int32Array(times.length).fill(900) }, Date.now() - 86_400_000);
  }
  await db.pool.query('VACUUM (ANALYZE) reading_blocks');
  await db.pool.query('CHECKPOINT');
  const blocksBytes = Number((await db.pool.query<{ b: string }>("SELECT pg_total_relation_size('reading_blocks') AS b")).rows[0]!.b) - before;
  console.log(`  ${fmt(performance.now() - t0)} ms including VACUUM ANALYZE`);
  if (CPU_PROF) continue;
  t0 = performance.now();
  for (let m = 0; m < 12; m += 1)
    await db.pool.query(`CREATE TABLE row_readings_${year}_${m} PARTITION OF row_readings FOR VALUES FROM ('${new Date(Date.UTC(year, m, 1)).toISOString()}') TO ('${new Date(Date.UTC(year, m + 1, 1)).toISOString()}')`);
  await copyIn('COPY row_readings (register_id, ts, value, resolution, updated_at) FROM STDIN (FORMAT binary)', copyBinary(ids, start, n, Date.now(), values(kind, start)));
  // What autovacuum would have done by the time anyone queries a year of history.
  await db.pool.query('VACUUM (ANALYZE) row_readings');
  await db.pool.query('CHECKPOINT');
  const rowBytes = Number((await db.pool.query<{ b: string }>(`SELECT sum(pg_total_relation_size(inhrelid)) AS b FROM pg_inherits WHERE inhparent = 'row_readings'::regclass AND inhrelid::regclass::text LIKE 'row_readings_${year}_%'`)).rows[0]!.b);
  disk[kind] = { blocks: blocksBytes / total, rows: rowBytes / total };
  console.log(`  row table ${fmt(performance.now() - t0)} ms; disk bytes per reading: blocks ${disk[kind]!.blocks.toFixed(2)}, row table ${disk[kind]!.rows.toFixed(1)}`);
  if (questdb) {
    t0 = performance.now();
    for (let r = 0; r < ids.length; r += 10) await questdb.ingest(ilpBodies(questdb.table, ids.slice(r, r + 10), start, n, 10, Date.now(), (j, i) => dataValue(kind, r + j, i, start)), 10);
    console.log(`  ${questdb.version}: ${fmt(performance.now() - t0)} ms until readable`);
  }
  if (influx) {
    t0 = performance.now();
    // Register by register, 10 at a time, to keep the line-protocol text small.
    for (let r = 0; r < fleet.registers.length; r += 10) await influx.writeBatches('bench', lineProtocolBatches(fleet.registers.slice(r, r + 10), start, n, 10_000, (j, i) => dataValue(kind, r + j, i, start)), 2);
    console.log(`  InfluxDB ${influx.version}: ${fmt(performance.now() - t0)} ms`);
  }
}
if (influx) {
  console.log('waiting for InfluxDB to snapshot its cache and compact');
  await new Promise((r) => setTimeout(r, 6_000));
  console.log(`  idle after ${fmt(await waitForCpuIdle([influx.pid], 0.05, 300_000))} ms more`);
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const registerFilter = (registers: readonly { externalId: string }[]) => `(${registers.map((r) => `"register"='${r.externalId}'`).join(' OR ')})`;
const ourUrl = (path: string, registerIds: readonly number[], start: number, end: number, resolution?: number, asOf?: number) => {
  const q = new URLSearchParams({ organizationId: String(fleet.organizationId), start: iso(start), end: iso(end) });
  for (const id of registerIds) q.append('registerId', String(id));
  if (resolution !== undefined) q.set('resolution', String(resolution));
  if (asOf !== undefined) q.set('asOf', new Date(asOf).toISOString());
  return `${server.baseUrl}${path}?${q}`;
};

interface Question {
  name: string;
  /** Request k (registers and months rotate so neither side answers from one hot cache line). */
  ours(k: number, asOf?: number): string;
  influx(k: number): string;
  questdb(k: number): Promise<{ ms: number; bytes: number; rows: number }>;
  /** Plain SQL over the row table: text and parameters. */
  rows(k: number): [string, unknown[]];
}

const ROW_HOURLY = `SELECT register_id, date_bin('1 hour', ts, timestamptz '1970-01-01Z') AS bucket, avg(value) AS value, max(updated_at) AS updated
  FROM row_readings WHERE register_id = ANY($1::int[]) AND ts >= $2 AND ts < $3 GROUP BY 1, 2 ORDER BY 1, 2`;
const ROW_DAILY = `SELECT register_id, date_trunc('day', ts AT TIME ZONE '${TIME_ZONE}') AS day, sum(value) AS value, max(updated_at) AS updated
  FROM row_readings WHERE register_id = ANY($1::int[]) AND ts >= $2 AND ts < $3 GROUP BY 1, 2 ORDER BY 1, 2`;

function questionsOf(year: number): Question[] {
  const YEAR_START = Date.UTC(year, 0, 1);
  const YEAR_END = Date.UTC(year + 1, 0, 1);
  const monthRange = (k: number) => [Date.UTC(year, k % 12, 1), Date.UTC(year, (k % 12) + 1, 1)] as const;
  return [
    {
      name: 'hourly average, 1 register × 1 year',
      ours: (k, asOf) => ourUrl('/api/readings/average/hourly', [ids[k % ids.length]!], YEAR_START, YEAR_END, undefined, asOf),
      influx: (k) =>
        `SELECT mean("value") FROM "reading" WHERE "register"='${fleet.registers[k % ids.length]!.externalId}' AND time >= '${iso(YEAR_START)}' AND time < '${iso(YEAR_END)}' GROUP BY time(1h) fill(none)`,
      questdb: (k) => questdb!.hourlyAverages([ids[k % ids.length]!], YEAR_START, YEAR_END),
      rows: (k) => [ROW_HOURLY, [[ids[k % ids.length]!], new Date(YEAR_START), new Date(YEAR_END)]],
    },
    {
      name: 'hourly average, 100 registers × 1 month',
      ours: (k, asOf) => ourUrl('/api/readings/average/hourly', ids, ...monthRange(k), undefined, asOf),
      influx: (k) => {
        const [start, end] = monthRange(k);
        return `SELECT mean("value") FROM "reading" WHERE ${registerFilter(fleet.registers)} AND time >= '${iso(start)}' AND time < '${iso(end)}' GROUP BY time(1h), "register" fill(none)`;
      },
      questdb: (k) => questdb!.hourlyAverages(ids, ...monthRange(k)),
      rows: (k) => [ROW_HOURLY, [ids, ...monthRange(k).map((t) => new Date(t))]],
    },
    {
      name: 'resolution=86400 (local days, sum), 1 register × 1 year',
      ours: (k, asOf) => ourUrl('/api/readings', [ids[k % ids.length]!], YEAR_START, YEAR_END, 86400, asOf),
      influx: (k) =>
        `SELECT sum("value") FROM "reading" WHERE "register"='${fleet.registers[k % ids.length]!.externalId}' AND time >= '${iso(YEAR_START)}' AND time < '${iso(YEAR_END)}' GROUP BY time(1d) fill(none) tz('${TIME_ZONE}')`,
      questdb: (k) => questdb!.dailySums([ids[k % ids.length]!], YEAR_START, YEAR_END, TIME_ZONE),
      rows: (k) => [ROW_DAILY, [[ids[k % ids.length]!], new Date(YEAR_START), new Date(YEAR_END)]],
    },
    {
      name: 'resolution=86400 (local days, sum), 100 registers × 1 year',
      ours: (_k, asOf) => ourUrl('/api/readings', ids, YEAR_START, YEAR_END, 86400, asOf),
      influx: () =>
        `SELECT sum("value") FROM "reading" WHERE ${registerFilter(fleet.registers)} AND time >= '${iso(YEAR_START)}' AND time < '${iso(YEAR_END)}' GROUP BY time(1d), "register" fill(none) tz('${TIME_ZONE}')`,
      questdb: () => questdb!.dailySums(ids, YEAR_START, YEAR_END, TIME_ZONE),
      rows: () => [ROW_DAILY, [ids, new Date(YEAR_START), new Date(YEAR_END)]],
    },
  ];
}

const headers = { authorization: `Bearer ${fleet.token}` };
async function ours(url: string): Promise<{ ms: number; bytes: number; points: number; body: string }> {
  const r = await timedRequest(url, 'GET', headers, undefined, true);
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${r.body.slice(0, 500)}`);
  const points = (JSON.parse(r.body) as { readings: unknown[] }[]).reduce((n, s) => n + s.readings.length, 0);
  return { ms: r.ms, bytes: r.bytes, points, body: r.body };
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
  await profileQuestions(questionsOf(yearOf(0)));
  await server.stop();
  await db.close();
  process.exit(0);
}

/** CPU_PROF=1: each question asked of a server started for it under --cpu-prof (start-up is in
 * its profile too, as tsx and module loading, not among the request's functions), then the block
 * query behind it explained by PostgreSQL. */
async function profileQuestions(questions: Question[]): Promise<void> {
  const chosen = questions.filter((_, k) => !QUESTIONS || QUESTIONS.includes(k));
  for (const question of chosen) {
    await server.stop();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-bench-query-prof-'));
    server = await startServerProcess({ databaseUrl: db.postgres.connectionString, dataDir: db.dataDir, cpuProfDir: dir, env: SERVER_ENV });
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
  server = await startServerProcess({ databaseUrl: db.postgres.connectionString, dataDir: db.dataDir, env: SERVER_ENV });
  for (const question of chosen) {
    const [, values] = question.rows(0);
    const [qids, start, end] = values as [number[], Date, Date];
    const columns = question.name.startsWith('hourly') ? 'data' : 'days';
    const query = blockQuery(columns, qids, start.getTime(), end.getTime());
    const { rows } = await db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${query.text}`, query.values);
    console.log(`\n${question.name}, ${columns} as one query:\n${rows.map((r) => r['QUERY PLAN']).join('\n')}`);
  }
}

/** 1% of the year's readings in runs of 16 (4 hours), every value changed, as POST bodies of at
 * most 10 registers; reproducible. */
function corrections(kind: DataKind, year: number): Buffer[] {
  const start = Date.UTC(year, 0, 1);
  const n = perRegister(year);
  let x = 0x51ed270b;
  const next = () => {
    x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x297a2d39) >>> 0;
    return x / 2 ** 32;
  };
  const picks = new Map<number, Set<number>>();
  let chosen = 0;
  while (chosen < (ids.length * n) / 100) {
    const r = Math.floor(next() * ids.length);
    const first = Math.floor(next() * (n - 16));
    const set = picks.get(r) ?? new Set<number>();
    for (let i = first; i < first + 16; i += 1) if (!set.has(i)) (set.add(i), (chosen += 1));
    picks.set(r, set);
  }
  const bodies: Buffer[] = [];
  fleet.meters.forEach((meter, m) => {
    const registers = meter.registers.flatMap((register, j) => {
      const r = m * REGISTERS_PER_METER + j;
      const set = picks.get(r);
      if (!set) return [];
      const values = [...set].sort((a, b) => a - b).map((i) => ({ timestamp: new Date(start + i * 900_000).toISOString(), value: Math.round((dataValue(kind, r, i, start) + 0.001) * 1000) / 1000, resolution: 900 }));
      return [{ id: register.externalId, values }];
    });
    if (registers.length > 0) bodies.push(Buffer.from(JSON.stringify({ meters: [{ id: meter.externalId, registers }] })));
  });
  return bodies;
}

const results = [];
const asOfResults = [];
for (const [k, kind] of KINDS.entries()) {
  const year = yearOf(k);
  for (const question of questionsOf(year)) {
    const oursMs: number[] = [];
    const peerMs: number[] = [];
    const questMs: number[] = [];
    const rowMs: number[] = [];
    let oursShape = { bytes: 0, points: 0 };
    let peerShape = { bytes: 0, points: 0 };
    await mapConcurrent(
      Array.from({ length: WARMUP + REQUESTS }, (_, i) => i),
      CONCURRENCY,
      async (i) => {
        const a = await ours(question.ours(i));
        const b = influx ? await peer(question.influx(i)) : undefined;
        const c = questdb ? await question.questdb(i) : undefined;
        const d = await rowSql(question.rows(i));
        if (i < WARMUP) return;
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
      data: kind,
      question: question.name,
      'ours p50 ms': Number(percentile(oursMs, 50).toFixed(1)),
      'ours p99 ms': Number(percentile(oursMs, 99).toFixed(1)),
      'InfluxDB p50 ms': influx ? Number(percentile(peerMs, 50).toFixed(1)) : NaN,
      'ours/InfluxDB p50': influx ? Number((percentile(oursMs, 50) / percentile(peerMs, 50)).toFixed(2)) : NaN,
      'QuestDB p50 ms': questdb ? Number(percentile(questMs, 50).toFixed(1)) : NaN,
      'ours/QuestDB p50': questdb ? Number((percentile(oursMs, 50) / percentile(questMs, 50)).toFixed(2)) : NaN,
      'PG rows SQL p50 ms': Number(percentile(rowMs, 50).toFixed(1)),
      'ours/PG rows p50': Number((percentile(oursMs, 50) / percentile(rowMs, 50)).toFixed(2)),
      'ours KiB': Math.round(oursShape.bytes / 1024),
      'InfluxDB KiB': Math.round(peerShape.bytes / 1024),
      'InfluxDB points': peerShape.points,
    };
    console.log(
      `${kind}: ${question.name}: ours p50 ${row['ours p50 ms']} ms, InfluxDB ${row['InfluxDB p50 ms']} ms (${row['ours/InfluxDB p50']}×), ` +
        `QuestDB ${row['QuestDB p50 ms']} ms (${row['ours/QuestDB p50']}×), PG rows SQL ${row['PG rows SQL p50 ms']} ms (${row['ours/PG rows p50']}×); load ${os.loadavg()[0]!.toFixed(2)}`,
    );
    if (influx && oursShape.points !== peerShape.points) console.log(`  note: ours ${oursShape.points} points, InfluxDB ${peerShape.points}`);
    results.push({ ...row, oursMs, influxMs: peerMs, questdbMs: questMs, rowSqlMs: rowMs });
  }

  // asOf: 1% of the year corrected through the API, then each question as of before it and now.
  const asOf = Date.now();
  await new Promise((r) => setTimeout(r, 5));
  for (const body of corrections(kind, year)) {
    const r = await timedRequest(`${server.baseUrl}/api/readings`, 'POST', { ...headers, 'content-type': 'application/json' }, body);
    if (r.status !== 204) throw new Error(`correction POST: ${r.status} ${r.body.slice(0, 300)}`);
  }
  await db.pool.query('VACUUM (ANALYZE) reading_blocks');
  for (const question of questionsOf(year)) {
    const now: number[] = [];
    const then: number[] = [];
    let differs = false;
    for (let i = 0; i < WARMUP + REQUESTS; i += 1) {
      const a = await ours(question.ours(i));
      const b = await ours(question.ours(i, asOf));
      if (a.body !== b.body) differs = true;
      if (i < WARMUP) continue;
      now.push(a.ms);
      then.push(b.ms);
    }
    const row = { data: kind, question: question.name, 'now p50 ms': Number(percentile(now, 50).toFixed(1)), 'asOf before the correction p50 ms': Number(percentile(then, 50).toFixed(1)), 'asOf / now': Number((percentile(then, 50) / percentile(now, 50)).toFixed(2)), 'answers differ': differs };
    console.log(`${kind}: ${question.name}: asOf ${row['asOf before the correction p50 ms']} ms, now ${row['now p50 ms']} ms: ${row['asOf / now']}× (target ≤ 1.5×); answers differ: ${differs}; load ${os.loadavg()[0]!.toFixed(2)}`);
    asOfResults.push({ ...row, nowMs: now, asOfMs: then });
  }
}

console.log(`\n${ids.length} registers × a year of 15-minute readings per data set, ${REQUESTS} requests per question after ${WARMUP} warm-up, ${CONCURRENCY} in flight; ratio < 1 = ours faster`);
console.table(results.map(({ oursMs: _a, influxMs: _b, questdbMs: _c, rowSqlMs: _d, ...row }) => row));
console.log('with asOf an instant before 1% of the readings were corrected, against the same question now:');
console.table(asOfResults.map(({ nowMs: _a, asOfMs: _b, ...row }) => row));
console.log(`disk bytes per reading: ${Object.entries(disk).map(([kind, d]) => `${kind} blocks ${d.blocks.toFixed(2)}, rows ${d.rows.toFixed(1)}`).join('; ')}`);
const file = writeResults('query', {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, postgres: 'embedded 18 (DEFAULT_SETTINGS)', influxdb: influx?.version, questdb: questdb?.version, loadAverage: os.loadavg() },
  diskBytesPerReading: disk,
  setup: { registers: ids.length, data: KINDS, timeZone: TIME_ZONE, requests: REQUESTS, warmup: WARMUP, concurrency: CONCURRENCY },
  results,
  asOf: asOfResults,
});
console.log(`written ${file}`);
await server.stop();
if (influx) await influx.stop();
await db.close();
process.exit(0);
