// Ingest benchmark: 1,000 registers × 1,000 readings (1M readings of 15-minute data)
// in one POST /api/readings over HTTP, readings/s from the first byte sent to the 204. In the
// same run, into fresh month ranges each time:
//   - PostgreSQL's own row COPY: the same 1M rows loaded by COPY (pg-copy-streams, from a file,
//     CSV and binary) into a table of the former row layout (`row_readings`: one row per reading,
//     monthly partitions, primary key (register_id, ts), as migration 002 made `readings`);
//   - the peers: InfluxDB 1.x (Debian package) fed the same points as line protocol over HTTP, and
//     QuestDB used directly when QUESTDB_HTTP_URL is set (bench/support/questdbPeer.ts: ILP/HTTP,
//     10 bodies in parallel, timed until readable; corrections = the same points again, DEDUP);
//   - disk bytes per stored reading (table + indexes) of the blocks and of the row table;
//   - corrections: the same 1M posted again (the merge path);
//   - the server's peak RSS during each POST;
//   - GET /health latencies while a fresh POST runs (p50, p90, max).
//   npm run bench:ingest     (RUNS=5, INFLUX_BATCH=10000, INFLUX_CONCURRENCY=2, CPU_PROF=1 to profile)
// BACKEND=questdb (with QUESTDB_HTTP_URL, QUESTDB_PG_URL): Flex on QuestDB against QuestDB used
// directly instead (bench/ingestQuestdb.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { valueSymbol } from 'piscina';
import parseReadingsTask, { type ParseResult } from '../workers/readings/task.ts';
import { busyMs, hotFunctions, profileInProcess, readProfiles } from './support/cpuProfile.ts';
import { numbers, questdbMode } from './support/env.ts';
import { ensureInfluxd, startInflux, type Influx } from './support/influx.ts';
import { writeResults } from './support/load.ts';
import { fmt, median, mib, spread, timedRequest, waitForCpuIdle } from './support/measure.ts';
import { createFleet } from './support/meterSetup.ts';
import { ilpBodies, questdbPeer } from './support/questdbPeer.ts';
import { copyBinary, lineProtocolBatches, monthStart, readingsBody, writeCopyCsv } from './support/readingsData.ts';
import { ROOT, currentRss, postReadings, startBenchDatabase, startServerProcess, type BenchDatabase, type PostFigures } from './support/serverProcess.ts';

await questdbMode(() => import('./ingestQuestdb.ts'));

const { RUNS, METERS, REGISTERS_PER_METER, READINGS, INFLUX_BATCH, INFLUX_CONCURRENCY } = numbers({ RUNS: 5, METERS: 100, REGISTERS_PER_METER: 10, READINGS: 1000, INFLUX_BATCH: 10_000, INFLUX_CONCURRENCY: 2 });
const CPU_PROF = process.env.CPU_PROF === '1';
const TOTAL = METERS * REGISTERS_PER_METER * READINGS;

const db = await startBenchDatabase();
// Idle connections see PostgreSQL stop at the end (57P01): not an error of the run.
db.pool.on('error', () => undefined);
const profileDir = CPU_PROF ? fs.mkdtempSync(path.join(os.tmpdir(), 'flex-bench-prof-')) : undefined;
const server = await startServerProcess({
  databaseUrl: db.postgres.connectionString,
  dataDir: db.dataDir,
  // The bench posts back to back; the per-client limits (5/s, 20/min) would answer 429.
  env: { RATE_LIMIT_READINGS_PER_SECOND: '1000', RATE_LIMIT_READINGS_PER_MINUTE: '100000' },
  cpuProfDir: profileDir,
});
console.log(`server pid ${server.pid} at ${server.baseUrl}; creating ${METERS} meters × ${REGISTERS_PER_METER} registers`);
const fleet = await createFleet(server.baseUrl, server.adminToken, { meters: METERS, registersPerMeter: REGISTERS_PER_METER, permissions: ['Meter.Organization.ReadWrite'] });
const registerIds = fleet.registers.map((r) => r.id);

const influxBinary = ensureInfluxd();
const influx: Influx | undefined = influxBinary ? await startInflux(influxBinary) : undefined;
if (influx) await influx.query('CREATE DATABASE bench');
const questdb = await questdbPeer('flex_bench_ingest_blocks');
if (questdb) {
  await questdb.dropTable();
  await questdb.createTable();
}
// The former row layout, for PostgreSQL's own row COPY (partitions made per month before a load).
await db.pool.query(`CREATE TABLE IF NOT EXISTS row_readings (register_id int NOT NULL, ts timestamptz NOT NULL, value double precision NOT NULL,
  resolution int NOT NULL, updated_at timestamptz NOT NULL, PRIMARY KEY (register_id, ts)) PARTITION BY RANGE (ts)`);

/** Every timed load starts from the same state: a checkpoint done, no autovacuum running (each
 * load leaves a 1M-row partition that autovacuum then visits) and InfluxDB done compacting. */
async function settle(database: BenchDatabase): Promise<void> {
  if (influx) await waitForCpuIdle([influx.pid], 0.05, 60_000);
  await database.pool.query('CHECKPOINT');
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const { rows } = await database.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'");
    if (rows[0]!.n === 0) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

const post = (body: Buffer): Promise<PostFigures> => postReadings(server, fleet.token, body);

async function copyFile(file: string, format: 'csv' | 'binary', startMs: number): Promise<number> {
  const month = new Date(startMs);
  const next = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1));
  const name = `row_readings_${month.getUTCFullYear()}${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
  await db.pool.query(`CREATE TABLE IF NOT EXISTS ${name} PARTITION OF row_readings FOR VALUES FROM ('${month.toISOString()}') TO ('${next.toISOString()}')`);
  await settle(db);
  const client = await db.pool.connect();
  try {
    const t0 = performance.now();
    const stream = client.query(copyFrom(`COPY row_readings (register_id, ts, value, resolution, updated_at) FROM STDIN (FORMAT ${format})`));
    await pipeline(fs.createReadStream(file, { highWaterMark: 1 << 20 }), stream);
    return performance.now() - t0;
  } finally {
    client.release();
  }
}

const rate = (ms: number) => TOTAL / (ms / 1000);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-bench-copy-'));
const samples = { upload: [] as number[], fresh: [] as number[], corrections: [] as number[], copyCsv: [] as number[], copyBinary: [] as number[], influx: [] as number[], questdb: [] as number[], questdbCorrections: [] as number[] };
const rss = { fresh: [] as number[], corrections: [] as number[], idle: [] as number[] };
let bodyBytes = 0;
let lastBody: Buffer | undefined;

// Round 0 warms up (JIT, worker thread start, first partitions) and is not counted.
for (let round = 0; round <= RUNS; round += 1) {
  const base = round * 3;
  const body = readingsBody(fleet.meters, monthStart(base), READINGS);
  bodyBytes = body.length;
  lastBody = body;
  await settle(db);
  rss.idle.push(currentRss(server.pid));
  const fresh = await post(body);
  await settle(db);
  const corrections = await post(body);
  // The HTTP part alone: the same bytes sent as text/plain are read whole, then refused for
  // their content type (unsupported_content_type) before any parsing.
  const upload = await timedRequest(`${server.baseUrl}/api/readings`, 'POST', { authorization: `Bearer ${fleet.token}`, 'content-type': 'text/plain' }, body, true);
  if (!upload.body.includes('unsupported_content_type')) throw new Error(`upload-only POST: ${upload.status} ${upload.body.slice(0, 300)}`);

  const csvFile = path.join(tmp, 'readings.csv');
  writeCopyCsv(csvFile, registerIds, monthStart(base + 1), READINGS, Date.now());
  const csvMs = await copyFile(csvFile, 'csv', monthStart(base + 1));
  const binFile = path.join(tmp, 'readings.bin');
  fs.writeFileSync(binFile, copyBinary(registerIds, monthStart(base + 2), READINGS, Date.now()));
  const binMs = await copyFile(binFile, 'binary', monthStart(base + 2));

  let influxMs = NaN;
  if (influx) {
    const batches = lineProtocolBatches(fleet.registers, monthStart(base), READINGS, INFLUX_BATCH);
    await settle(db);
    influxMs = await influx.writeBatches('bench', batches, INFLUX_CONCURRENCY);
  }
  let questdbMs = NaN;
  let questdbCorrectionsMs = NaN;
  if (questdb) {
    const bodies = ilpBodies(questdb.table, registerIds, monthStart(base), READINGS, 10);
    await settle(db);
    questdbMs = (await questdb.ingest(bodies, 10)).visibleMs;
    questdbCorrectionsMs = (await questdb.ingest(bodies, 10)).visibleMs;
  }
  const label = round === 0 ? 'warm-up' : `run ${round}/${RUNS}`;
  console.log(
    `${label}: POST ${fmt(rate(fresh.ms))}/s (${fmt(fresh.ms)} ms, peak RSS ${mib(fresh.peakRss)}), corrections ${fmt(rate(corrections.ms))}/s, ` +
      `COPY csv ${fmt(rate(csvMs))}/s, COPY binary ${fmt(rate(binMs))}/s${influx ? `, InfluxDB ${fmt(rate(influxMs))}/s` : ''}` +
      `${questdb ? `, QuestDB ${fmt(rate(questdbMs))}/s (corrections ${fmt(rate(questdbCorrectionsMs))}/s)` : ''}; load ${os.loadavg()[0]!.toFixed(2)}`,
  );
  if (round === 0) continue;
  samples.fresh.push(fresh.ms);
  samples.upload.push(upload.ms);
  samples.corrections.push(corrections.ms);
  samples.copyCsv.push(csvMs);
  samples.copyBinary.push(binMs);
  if (influx) samples.influx.push(influxMs);
  if (questdb) {
    samples.questdb.push(questdbMs);
    samples.questdbCorrections.push(questdbCorrectionsMs);
  }
  rss.fresh.push(fresh.peakRss);
  rss.corrections.push(corrections.peakRss);
}

// Responsiveness: GET /health one after another (25 ms apart) while one more fresh 1M POST runs;
// the latencies show how long the main thread is held by a batch (test/integration/readingsHeavy
// checks only that /health keeps answering: timings are figures, never test assertions).
const healthMs: number[] = [];
{
  let posting = true;
  const during = post(readingsBody(fleet.meters, monthStart((RUNS + 1) * 3), READINGS)).finally(() => {
    posting = false;
  });
  while (posting) {
    const t0 = performance.now();
    const res = await fetch(`${server.baseUrl}/health`);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET /health during a POST: ${res.status}`);
    if (posting) healthMs.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 25));
  }
  await during;
}
const healthSorted = [...healthMs].sort((a, b) => a - b);
const healthP90 = healthSorted[Math.floor(healthSorted.length * 0.9)] ?? NaN;

// Where a POST's time goes, part 1: the worker task (parse, validate, group, encode COPY) on
// the same body, here in the bench process, timed alone.
const parseMs: number[] = [];
for (let k = 0; k < 3; k += 1) {
  const copy = new Uint8Array(lastBody!);
  const t0 = performance.now();
  const moved = parseReadingsTask({ body: copy, encoding: 'pgBlocks', updatedAtMs: Date.now() });
  parseMs.push(performance.now() - t0);
  // The task wraps its result for Piscina's transfer; unwrap it here.
  const result = (moved as unknown as Record<symbol, ParseResult>)[valueSymbol] ?? moved;
  if (!result.ok) throw new Error('the bench body does not parse');
}
const workerProfile = CPU_PROF ? await profileInProcess(() => void parseReadingsTask({ body: new Uint8Array(lastBody!), encoding: 'pgBlocks', updatedAtMs: Date.now() })) : undefined;

// Disk bytes per stored reading, table + indexes (+ TOAST): blocks as written (corrections leave
// the replaced rows dead until vacuum reuses them), then both tables compacted (VACUUM FULL).
async function diskPerReading(): Promise<{ blocks: number; rows: number }> {
  const { rows } = await db.pool.query<{ blocks: string; readings: string; row_bytes: string; row_count: string }>(
    `SELECT pg_total_relation_size('reading_blocks') AS blocks, (SELECT sum(n) FROM reading_blocks) AS readings,
       (SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits WHERE inhparent = 'row_readings'::regclass) AS row_bytes,
       (SELECT count(*) FROM row_readings) AS row_count`,
  );
  const r = rows[0]!;
  return { blocks: Number(r.blocks) / Number(r.readings), rows: Number(r.row_bytes) / Number(r.row_count) };
}
const diskAsWritten = await diskPerReading();
await db.pool.query('VACUUM FULL reading_blocks');
for (const { name } of (await db.pool.query<{ name: string }>("SELECT inhrelid::regclass::text AS name FROM pg_inherits WHERE inhparent = 'row_readings'::regclass")).rows) await db.pool.query(`VACUUM FULL ${name}`);
const diskCompacted = await diskPerReading();

await server.stop();
if (influx) await influx.stop();
const serverProfiles = profileDir ? readProfiles(profileDir) : [];

const rows = [
  { path: 'POST /api/readings (fresh)', ...figures(samples.fresh) },
  { path: 'POST /api/readings (corrections, merge)', ...figures(samples.corrections) },
  { path: 'COPY FROM file, CSV (pg-copy-streams)', ...figures(samples.copyCsv) },
  { path: 'COPY FROM file, binary (pg-copy-streams)', ...figures(samples.copyBinary) },
  ...(influx ? [{ path: `InfluxDB ${influx.version} line protocol (${fmt(INFLUX_BATCH)} lines × ${INFLUX_CONCURRENCY} in flight)`, ...figures(samples.influx) }] : []),
  ...(questdb
    ? [
        { path: `${questdb.version} ILP/HTTP, 10 bodies in parallel, until readable`, ...figures(samples.questdb) },
        { path: `${questdb.version} the same again (corrections, DEDUP)`, ...figures(samples.questdbCorrections) },
      ]
    : []),
];
function figures(ms: number[]) {
  const s = spread(ms.map(rate));
  return { 'readings/s (median)': fmt(s.median), min: fmt(s.min), max: fmt(s.max), 'ms (median)': fmt(median(ms)) };
}
const freshRate = median(samples.fresh.map(rate));
const correctionsRate = median(samples.corrections.map(rate));
const ceilingRate = Math.max(median(samples.copyCsv.map(rate)), median(samples.copyBinary.map(rate)));
const influxRate = influx ? median(samples.influx.map(rate)) : NaN;
const questdbRate = questdb ? median(samples.questdb.map(rate)) : NaN;
const questdbCorrectionsRate = questdb ? median(samples.questdbCorrections.map(rate)) : NaN;
console.log(`\n${fmt(TOTAL)} readings per POST (${METERS} meters × ${REGISTERS_PER_METER} registers × ${READINGS}), body ${mib(bodyBytes)}; ${RUNS} runs after a warm-up`);
console.table(rows);
const ratios = {
  oursToCopy: freshRate / ceilingRate,
  oursToInflux: influx ? freshRate / influxRate : null,
  oursToQuestDb: questdb ? freshRate / questdbRate : null,
  correctionsToQuestDbCorrections: questdb ? correctionsRate / questdbCorrectionsRate : null,
  correctionsToFresh: correctionsRate / freshRate,
  correctionsToRowCopy: correctionsRate / ceilingRate,
  diskBlocksToRows: diskCompacted.blocks / diskCompacted.rows,
};
const x = (r: number | null) => (r === null ? 'n/a' : `${r.toFixed(2)}×`);
console.log(`ours / PostgreSQL row COPY (faster of CSV and binary): ${x(ratios.oursToCopy)} (target ≥ 1.5×)`);
console.log(`ours / InfluxDB: ${x(ratios.oursToInflux)} (target ≥ 1.0×)`);
console.log(`ours / QuestDB (ILP, until readable): ${x(ratios.oursToQuestDb)}; corrections / QuestDB corrections: ${x(ratios.correctionsToQuestDbCorrections)}`);
console.log(`corrections / fresh: ${x(ratios.correctionsToFresh)} (target ≥ 0.5×); corrections / row COPY: ${x(ratios.correctionsToRowCopy)}`);
console.log(`end to end: ${fmt(freshRate)} readings/s`);
console.log(
  `disk bytes per stored reading (table + indexes): blocks ${diskAsWritten.blocks.toFixed(1)} as written (after corrections, before vacuum), ${diskCompacted.blocks.toFixed(1)} compacted; ` +
    `row table ${diskAsWritten.rows.toFixed(1)} / ${diskCompacted.rows.toFixed(1)}; blocks / rows ${x(ratios.diskBlocksToRows)} (target ≤ 0.33×)`,
);
console.log(`GET /health during a fresh POST: ${healthMs.length} answers, p50 ${fmt(median(healthMs))} ms, p90 ${fmt(healthP90)} ms, max ${fmt(Math.max(...healthMs))} ms (target p90 < 100 ms)`);
console.log(`server peak RSS during one POST: fresh ${mib(Math.max(...rss.fresh))}, corrections ${mib(Math.max(...rss.corrections))}, idle before ${mib(median(rss.idle))} (target < 1 GiB)`);
// Where a POST's time goes, part 2: its stages, each timed alone.
const stages = {
  'HTTP upload and body read (same bytes as text/plain, refused)': median(samples.upload),
  'worker task: parse, validate, group, build blocks (timed alone)': median(parseMs),
};
const stagesTotal = Object.values(stages).reduce((a, b) => a + b, 0);
console.log('\nwhere a fresh POST goes (medians, ms; each stage timed alone):');
console.table([
  ...Object.entries(stages).map(([stage, ms]) => ({ stage, ms: Math.round(ms) })),
  { stage: 'rest: register ids, stored-block check, COPY of the blocks, transfers, noise', ms: Math.round(median(samples.fresh) - stagesTotal) },
  { stage: 'POST /api/readings, fresh', ms: Math.round(median(samples.fresh)) },
]);

const profiles: Record<string, unknown> = {};
if (workerProfile) {
  profiles.worker = { busyMs: busyMs(workerProfile), top: hotFunctions(workerProfile, 12, ROOT) };
  console.log('\nworker task (in the bench process), self time:');
  console.table(hotFunctions(workerProfile, 12, ROOT));
}
// The server's main thread is the busiest of its profiles (the others are tsx's loader thread).
const mainProfile = serverProfiles.sort((a, b) => busyMs(b) - busyMs(a))[0];
if (mainProfile) {
  const top = hotFunctions(mainProfile, 20, ROOT);
  profiles.serverMainThread = { busyMs: busyMs(mainProfile), posts: 2 * (RUNS + 1), top };
  console.log(`\nserver main thread, whole run (start-up, setup and ${2 * (RUNS + 1)} POSTs; ${fmt(busyMs(mainProfile))} ms busy), self time:`);
  console.table(top);
}

const file = writeResults('ingest', {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, postgres: 'embedded 18 (DEFAULT_SETTINGS)', influxdb: influx?.version, questdb: questdb?.version, loadAverage: os.loadavg() },
  setup: { meters: METERS, registersPerMeter: REGISTERS_PER_METER, readingsPerRegister: READINGS, readingsPerPost: TOTAL, bodyBytes, runs: RUNS, influxBatchLines: INFLUX_BATCH, influxConcurrency: INFLUX_CONCURRENCY },
  readingsPerSecond: {
    fresh: spread(samples.fresh.map(rate)),
    corrections: spread(samples.corrections.map(rate)),
    copyCsv: spread(samples.copyCsv.map(rate)),
    copyBinary: spread(samples.copyBinary.map(rate)),
    influx: influx ? spread(samples.influx.map(rate)) : null,
    questdb: questdb ? spread(samples.questdb.map(rate)) : null,
    questdbCorrections: questdb ? spread(samples.questdbCorrections.map(rate)) : null,
  },
  diskBytesPerReading: { asWritten: diskAsWritten, compacted: diskCompacted },
  ratios,
  targets: { oursToCopy: 1.5, oursToInflux: 1.0, correctionsToFresh: 0.5, diskBlocksToRows: 1 / 3, peakRssBytes: 2 ** 30 },
  peakRssBytes: { fresh: spread(rss.fresh), corrections: spread(rss.corrections), idleBefore: median(rss.idle) },
  healthDuringPostMs: { answers: healthMs.length, median: median(healthMs), p90: healthP90, max: Math.max(...healthMs) },
  workerTaskMs: spread(parseMs),
  uploadOnlyMs: spread(samples.upload),
  profiles,
});
console.log(`written ${file}`);
fs.rmSync(tmp, { recursive: true, force: true });
if (profileDir) fs.rmSync(profileDir, { recursive: true, force: true });
await db.close();
process.exit(0);
