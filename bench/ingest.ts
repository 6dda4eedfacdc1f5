// Ingest benchmark: 1,000 registers × 1,000 readings (1M readings of 15-minute data) in one POST
// /api/readings over HTTP, readings/s from the first byte sent to the 204, for each data set
// (DATA=meter,random: meter-like values — three decimals, a daily and weekly profile with noise,
// bench/support/readingsData.ts meterValueOf — and uniformly random ones), reported apart. In the
// same run, into fresh month ranges each time:
//   - PostgreSQL's own row COPY: the same 1M rows loaded by COPY (pg-copy-streams, from a file,
//     CSV and binary) into a table of the former row layout (`row_readings`: one row per reading,
//     monthly partitions, primary key (register_id, ts), as migration 002 made `readings`);
//   - the peers: InfluxDB 1.x (Debian package) fed the same points as line protocol over HTTP, and
//     QuestDB used directly when QUESTDB_HTTP_URL is set (bench/support/questdbPeer.ts: ILP/HTTP,
//     10 bodies in parallel, timed until readable; corrections = the same points again, DEDUP);
//   - corrections: the same 1M posted again with every value changed (the merge path, versions kept);
//   - storage: disk bytes per stored reading (table, indexes and TOAST after a checkpoint and a
//     vacuum) of a fresh 1M, InfluxDB's on the same points, and the growth after correcting 1% of
//     the readings twice (runs of 4 hours; and, for information, scattered single readings);
//   - 50 concurrent writers into the same 10 register-days: every answer, and the throughput;
//   - the server's peak RSS during each POST; GET /health latencies while a fresh POST runs.
//   npm run bench:ingest     (RUNS=5, DATA=meter,random, INFLUX_BATCH=10000, INFLUX_CONCURRENCY=2, CPU_PROF=1 to profile)
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
import { createFleet, type BenchMeter } from './support/meterSetup.ts';
import { ilpBodies, questdbPeer } from './support/questdbPeer.ts';
import { STEP_SECONDS, copyBinary, dataValue, lineProtocolBatches, monthStart, readingsBody, writeCopyCsv, type DataKind, type ValueOf } from './support/readingsData.ts';
import { ROOT, currentRss, postReadings, startBenchDatabase, startServerProcess, type BenchDatabase, type PostFigures } from './support/serverProcess.ts';

await questdbMode(() => import('./ingestQuestdb.ts'));

const { RUNS, METERS, REGISTERS_PER_METER, READINGS, INFLUX_BATCH, INFLUX_CONCURRENCY, WRITERS } = numbers({ RUNS: 5, METERS: 100, REGISTERS_PER_METER: 10, READINGS: 1000, INFLUX_BATCH: 10_000, INFLUX_CONCURRENCY: 2, WRITERS: 50 });
const CPU_PROF = process.env.CPU_PROF === '1';
const KINDS = (process.env.DATA ?? 'meter,random').split(',') as DataKind[];
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
  // Its errors, if any, belong in the run's output.
  onLine: (line) => {
    if (/"level":(50|60)/.test(line)) console.log(`server: ${line.slice(0, 2000)}`);
  },
});
console.log(`server pid ${server.pid} at ${server.baseUrl}; creating ${METERS} meters × ${REGISTERS_PER_METER} registers`);
// Registers in a European zone: their blocks keep two daily pieces (local midnight is not the UTC one).
const fleet = await createFleet(server.baseUrl, server.adminToken, { meters: METERS, registersPerMeter: REGISTERS_PER_METER, permissions: ['Meter.Organization.ReadWrite'], timeZone: 'Europe/Amsterdam' });
const registerIds = fleet.registers.map((r) => r.id);

const influxBinary = ensureInfluxd();
// The write cache goes to TSM files after 5 s without writes (default 10 min): its disk figure
// is then that of its compressed files, as in steady state.
const influx: Influx | undefined = influxBinary ? await startInflux(influxBinary, '  cache-snapshot-write-cold-duration = "5s"') : undefined;
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

async function rowPartition(startMs: number): Promise<string> {
  const month = new Date(startMs);
  const next = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1));
  const name = `row_readings_${month.getUTCFullYear()}${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
  await db.pool.query(`CREATE TABLE IF NOT EXISTS ${name} PARTITION OF row_readings FOR VALUES FROM ('${month.toISOString()}') TO ('${next.toISOString()}')`);
  return name;
}

async function copyFile(file: string, format: 'csv' | 'binary', startMs: number): Promise<number> {
  await rowPartition(startMs);
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

/** The values of data set `kind` over readings from `startMs`; `delta` changes every one (a correction). */
const valuesOf =
  (kind: DataKind, startMs: number, delta = 0): ValueOf =>
  (r, i) => {
    const v = dataValue(kind, r, i, startMs);
    return delta === 0 ? v : Math.round((v + delta) * 1000) / 1000;
  };

const rate = (ms: number) => TOTAL / (ms / 1000);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-bench-copy-'));
type Samples = Record<'upload' | 'fresh' | 'corrections' | 'copyCsv' | 'copyBinary' | 'influx' | 'questdb' | 'questdbCorrections', number[]>;
const emptySamples = (): Samples => ({ upload: [], fresh: [], corrections: [], copyCsv: [], copyBinary: [], influx: [], questdb: [], questdbCorrections: [] });
const samples = new Map<DataKind, Samples>(KINDS.map((k) => [k, emptySamples()]));
const rss = { fresh: [] as number[], corrections: [] as number[], idle: [] as number[] };
let bodyBytes = 0;
let lastBody: Buffer | undefined;

// Round 0 of each data set warms up (JIT, worker thread start, first partitions) and is not counted.
for (const [kindIndex, kind] of KINDS.entries()) {
  const s = samples.get(kind)!;
  for (let round = 0; round <= RUNS; round += 1) {
    const base = kindIndex * 60 + round * 3;
    const body = readingsBody(fleet.meters, monthStart(base), READINGS, valuesOf(kind, monthStart(base)));
    bodyBytes = body.length;
    lastBody = body;
    await settle(db);
    rss.idle.push(currentRss(server.pid));
    const fresh = await post(body);
    await settle(db);
    const corrections = await post(readingsBody(fleet.meters, monthStart(base), READINGS, valuesOf(kind, monthStart(base), 0.001)));
    // The HTTP part alone: the same bytes sent as text/plain are read whole, then refused for
    // their content type (unsupported_content_type) before any parsing.
    const upload = await timedRequest(`${server.baseUrl}/api/readings`, 'POST', { authorization: `Bearer ${fleet.token}`, 'content-type': 'text/plain' }, body, true);
    if (!upload.body.includes('unsupported_content_type')) throw new Error(`upload-only POST: ${upload.status} ${upload.body.slice(0, 300)}`);

    const csvFile = path.join(tmp, 'readings.csv');
    writeCopyCsv(csvFile, registerIds, monthStart(base + 1), READINGS, Date.now(), valuesOf(kind, monthStart(base + 1)));
    const csvMs = await copyFile(csvFile, 'csv', monthStart(base + 1));
    const binFile = path.join(tmp, 'readings.bin');
    fs.writeFileSync(binFile, copyBinary(registerIds, monthStart(base + 2), READINGS, Date.now(), valuesOf(kind, monthStart(base + 2))));
    const binMs = await copyFile(binFile, 'binary', monthStart(base + 2));

    let influxMs = NaN;
    if (influx) {
      const batches = lineProtocolBatches(fleet.registers, monthStart(base), READINGS, INFLUX_BATCH, valuesOf(kind, monthStart(base)));
      await settle(db);
      influxMs = await influx.writeBatches('bench', batches, INFLUX_CONCURRENCY);
    }
    let questdbMs = NaN;
    let questdbCorrectionsMs = NaN;
    if (questdb) {
      await settle(db);
      questdbMs = (await questdb.ingest(ilpBodies(questdb.table, registerIds, monthStart(base), READINGS, 10, Date.now(), valuesOf(kind, monthStart(base))), 10)).visibleMs;
      questdbCorrectionsMs = (await questdb.ingest(ilpBodies(questdb.table, registerIds, monthStart(base), READINGS, 10, Date.now(), valuesOf(kind, monthStart(base), 0.001)), 10)).visibleMs;
    }
    const label = round === 0 ? `${kind} warm-up` : `${kind} run ${round}/${RUNS}`;
    console.log(
      `${label}: POST ${fmt(rate(fresh.ms))}/s (${fmt(fresh.ms)} ms, peak RSS ${mib(fresh.peakRss)}), corrections ${fmt(rate(corrections.ms))}/s, ` +
        `COPY csv ${fmt(rate(csvMs))}/s, COPY binary ${fmt(rate(binMs))}/s${influx ? `, InfluxDB ${fmt(rate(influxMs))}/s` : ''}` +
        `${questdb ? `, QuestDB ${fmt(rate(questdbMs))}/s (corrections ${fmt(rate(questdbCorrectionsMs))}/s)` : ''}; load ${os.loadavg()[0]!.toFixed(2)}`,
    );
    if (round === 0) continue;
    s.fresh.push(fresh.ms);
    s.upload.push(upload.ms);
    s.corrections.push(corrections.ms);
    s.copyCsv.push(csvMs);
    s.copyBinary.push(binMs);
    if (influx) s.influx.push(influxMs);
    if (questdb) {
      s.questdb.push(questdbMs);
      s.questdbCorrections.push(questdbCorrectionsMs);
    }
    rss.fresh.push(fresh.peakRss);
    rss.corrections.push(corrections.peakRss);
  }
}

// ---- storage: a fresh 1M, then 1% of it corrected twice ----

/** Disk bytes of the block table (heap, indexes, TOAST) after a checkpoint and a vacuum, and the readings in it. */
async function blockDisk(): Promise<{ bytes: number; readings: number }> {
  await db.pool.query('VACUUM reading_blocks');
  await db.pool.query('CHECKPOINT');
  const { rows } = await db.pool.query<{ bytes: string; readings: string | null }>("SELECT pg_total_relation_size('reading_blocks') AS bytes, (SELECT sum(n) FROM reading_blocks) AS readings");
  return { bytes: Number(rows[0]!.bytes), readings: Number(rows[0]!.readings ?? 0) };
}

/** Bytes of the block table's live rows (after a vacuum: the rest of its pages is free space). */
async function liveBlockBytes(): Promise<number> {
  await db.pool.query('CREATE EXTENSION IF NOT EXISTS pgstattuple');
  const { rows } = await db.pool.query<{ b: string }>("SELECT tuple_len AS b FROM pgstattuple('reading_blocks')");
  return Number(rows[0]!.b);
}

/** 1% of the readings (register position, reading index), in runs of `run` consecutive ones,
 * reproducible per round. */
function correctionSet(round: number, run: number): Map<number, number[]> {
  const picks = new Map<number, number[]>();
  const registers = METERS * REGISTERS_PER_METER;
  let x = 0x2545f491 + round * 0x9e3779b9;
  const next = () => {
    x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x297a2d39) >>> 0;
    return x / 2 ** 32;
  };
  let chosen = 0;
  while (chosen < TOTAL / 100) {
    const r = Math.floor(next() * registers);
    const first = Math.floor(next() * (READINGS - run + 1));
    const list = picks.get(r) ?? [];
    for (let i = first; i < first + run; i += 1) if (!list.includes(i)) list.push(i), (chosen += 1);
    picks.set(r, list);
  }
  return picks;
}

/** A POST body of the picked readings of registers (by position) with changed values. */
function correctionBody(picks: Map<number, number[]>, value: ValueOf, startMs: number): Buffer {
  const meters: string[] = [];
  let r = 0;
  for (const meter of fleet.meters as BenchMeter[]) {
    const registers: string[] = [];
    for (const register of meter.registers) {
      const list = picks.get(r);
      if (list)
        registers.push(
          `{"id":${JSON.stringify(register.externalId)},"values":[${[...list]
            .sort((a, b) => a - b)
            .map((i) => `{"timestamp":"${new Date(startMs + i * STEP_SECONDS * 1000).toISOString()}","value":${value(r, i)},"resolution":${STEP_SECONDS}}`)
            .join(',')}]}`,
        );
      r += 1;
    }
    if (registers.length > 0) meters.push(`{"id":${JSON.stringify(meter.externalId)},"registers":[${registers.join(',')}]}`);
  }
  return Buffer.from(`{"meters":[${meters.join(',')}]}`);
}

interface Storage {
  bytesPerReading: number;
  rowTableBytesPerReading: number;
  influxBytesPerReading: number | null;
  /** Growth of the block table after correcting 1% twice, runs of 16 readings (4 hours). */
  growthRuns: number;
  /** The same with 1% of single readings scattered at random (for information): the files'
   * growth, */
  growthScattered: number;
  /** the growth of the live rows' bytes (pgstattuple's tuple_len: the rest is free space a
   * vacuum left for the next writes), */
  growthScatteredLive: number;
  /** and what is left of the files' growth once the next month of readings is ingested after
   * the corrections (against twice the first month's bytes). */
  growthScatteredAfterNextMonth: number;
  correctionMs: number[];
}
const storage = new Map<DataKind, Storage>();
for (const [kindIndex, kind] of KINDS.entries()) {
  const start = monthStart(kindIndex * 60 + 50);
  const growth: Record<'runs' | 'scattered' | 'scatteredLive' | 'scatteredAfterNextMonth', number> = { runs: NaN, scattered: NaN, scatteredLive: NaN, scatteredAfterNextMonth: NaN };
  let bytesPerReading = NaN;
  const correctionMs: number[] = [];
  for (const [mode, run] of [['runs', 16], ['scattered', 1]] as const) {
    await db.pool.query('TRUNCATE reading_blocks');
    await settle(db);
    await post(readingsBody(fleet.meters, start, READINGS, valuesOf(kind, start)));
    const before = await blockDisk();
    const liveBefore = await liveBlockBytes();
    if (mode === 'runs') bytesPerReading = before.bytes / before.readings;
    for (const round of [1, 2]) {
      const t0 = performance.now();
      await post(correctionBody(correctionSet(round, run), valuesOf(kind, start, 0.001 * round), start));
      if (mode === 'runs') correctionMs.push(performance.now() - t0);
    }
    const after = await blockDisk();
    growth[mode] = after.bytes / before.bytes - 1;
    console.log(`${kind} storage, 1% corrected twice (${mode}): ${fmt(before.bytes)} → ${fmt(after.bytes)} bytes (${(100 * growth[mode]).toFixed(1)}%); ${(before.bytes / before.readings).toFixed(2)} bytes per reading before`);
    if (mode === 'scattered') {
      growth.scatteredLive = (await liveBlockBytes()) / liveBefore - 1;
      await post(readingsBody(fleet.meters, monthStart(kindIndex * 60 + 51), READINGS, valuesOf(kind, monthStart(kindIndex * 60 + 51))));
      const next = await blockDisk();
      growth.scatteredAfterNextMonth = next.bytes / (2 * before.bytes) - 1;
      console.log(`  live rows +${(100 * growth.scatteredLive).toFixed(1)}%; after the next month is ingested: ${fmt(next.bytes)} bytes, +${(100 * growth.scatteredAfterNextMonth).toFixed(1)}% against twice the first month`);
    }
  }
  // The same points as rows (PostgreSQL's own layout) and in InfluxDB.
  const partition = await rowPartition(start);
  await db.pool.query(`TRUNCATE ${partition}`);
  const binFile = path.join(tmp, 'storage.bin');
  fs.writeFileSync(binFile, copyBinary(registerIds, start, READINGS, Date.now(), valuesOf(kind, start)));
  await copyFile(binFile, 'binary', start);
  await db.pool.query(`VACUUM ${partition}`);
  await db.pool.query('CHECKPOINT');
  const rowBytes = Number((await db.pool.query<{ b: string }>(`SELECT pg_total_relation_size('${partition}') AS b`)).rows[0]!.b);
  let influxBytes: number | null = null;
  if (influx) {
    const dbName = `disk_${kind}`;
    await influx.query(`CREATE DATABASE ${dbName}`);
    await influx.writeBatches(dbName, lineProtocolBatches(fleet.registers, start, READINGS, INFLUX_BATCH, valuesOf(kind, start)), INFLUX_CONCURRENCY);
    // Its cache is written to TSM files after 5 s without writes, then compacted.
    await new Promise((r) => setTimeout(r, 8_000));
    await waitForCpuIdle([influx.pid], 0.05, 300_000);
    influxBytes = influx.diskBytes(dbName);
  }
  storage.set(kind, {
    bytesPerReading,
    rowTableBytesPerReading: rowBytes / TOTAL,
    influxBytesPerReading: influxBytes === null ? null : influxBytes / TOTAL,
    growthRuns: growth.runs,
    growthScattered: growth.scattered,
    growthScatteredLive: growth.scatteredLive,
    growthScatteredAfterNextMonth: growth.scatteredAfterNextMonth,
    correctionMs,
  });
}

// ---- concurrent writers into the same register-days ----

/** WRITERS batches at once, each every quarter hour of the same 10 register-days (10 registers, one
 * day), with values of its own: every answer must be 204. */
async function concurrentWriters(): Promise<{ statuses: Record<string, number>; ms: number; readingsPerSecond: number; batchesPerSecond: number }> {
  const day = monthStart(59);
  const meter = fleet.meters[0]!;
  const bodies = Array.from({ length: WRITERS }, (_, w) =>
    Buffer.from(
      JSON.stringify({
        meters: [
          {
            id: meter.externalId,
            registers: meter.registers.slice(0, 10).map((register) => ({
              id: register.externalId,
              values: Array.from({ length: 96 }, (_, i) => ({ timestamp: new Date(day + i * 900_000).toISOString(), value: w + i / 1000, resolution: 900 })),
            })),
          },
        ],
      }),
    ),
  );
  await settle(db);
  const t0 = performance.now();
  const answers = await Promise.all(bodies.map((body) => timedRequest(`${server.baseUrl}/api/readings`, 'POST', { authorization: `Bearer ${fleet.token}`, 'content-type': 'application/json' }, body)));
  const ms = performance.now() - t0;
  const statuses: Record<string, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  return { statuses, ms, readingsPerSecond: (WRITERS * 960) / (ms / 1000), batchesPerSecond: WRITERS / (ms / 1000) };
}
const writers = await concurrentWriters();
console.log(`${WRITERS} concurrent writers into the same 10 register-days: ${JSON.stringify(writers.statuses)} in ${fmt(writers.ms)} ms, ${fmt(writers.readingsPerSecond)} readings/s, ${fmt(writers.batchesPerSecond, 1)} batches/s; load ${os.loadavg()[0]!.toFixed(2)}`);

// Responsiveness: GET /health one after another (25 ms apart) while one more fresh 1M POST runs;
// the latencies show how long the main thread is held by a batch (test/integration/readingsHeavy
// checks only that /health keeps answering: timings are figures, never test assertions).
const healthMs: number[] = [];
{
  let posting = true;
  const during = post(readingsBody(fleet.meters, monthStart(58), READINGS, valuesOf(KINDS[0]!, monthStart(58)))).finally(() => {
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

// Where a POST's time goes, part 1: the worker task (parse, validate, group, encode blocks) on
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

await server.stop();
if (influx) await influx.stop();
const serverProfiles = profileDir ? readProfiles(profileDir) : [];

function figures(ms: number[]) {
  const sp = spread(ms.map(rate));
  return { 'readings/s (median)': fmt(sp.median), min: fmt(sp.min), max: fmt(sp.max), 'ms (median)': fmt(median(ms)) };
}
const x = (r: number | null) => (r === null || Number.isNaN(r) ? 'n/a' : `${r.toFixed(2)}×`);
const perKind: Record<string, unknown> = {};
for (const kind of KINDS) {
  const s = samples.get(kind)!;
  const st = storage.get(kind)!;
  const rows = [
    { path: 'POST /api/readings (fresh)', ...figures(s.fresh) },
    { path: 'POST /api/readings (corrections: every value changed)', ...figures(s.corrections) },
    { path: 'COPY FROM file, CSV (pg-copy-streams)', ...figures(s.copyCsv) },
    { path: 'COPY FROM file, binary (pg-copy-streams)', ...figures(s.copyBinary) },
    ...(influx ? [{ path: `InfluxDB ${influx.version} line protocol (${fmt(INFLUX_BATCH)} lines × ${INFLUX_CONCURRENCY} in flight)`, ...figures(s.influx) }] : []),
    ...(questdb
      ? [
          { path: `${questdb.version} ILP/HTTP, 10 bodies in parallel, until readable`, ...figures(s.questdb) },
          { path: `${questdb.version} the same with every value changed (DEDUP)`, ...figures(s.questdbCorrections) },
        ]
      : []),
  ];
  const freshRate = median(s.fresh.map(rate));
  const correctionsRate = median(s.corrections.map(rate));
  const ceilingRate = Math.max(median(s.copyCsv.map(rate)), median(s.copyBinary.map(rate)));
  const ratios = {
    oursToCopy: freshRate / ceilingRate,
    oursToInflux: influx ? freshRate / median(s.influx.map(rate)) : null,
    oursToQuestDb: questdb ? freshRate / median(s.questdb.map(rate)) : null,
    correctionsToQuestDbCorrections: questdb ? correctionsRate / median(s.questdbCorrections.map(rate)) : null,
    correctionsToFresh: correctionsRate / freshRate,
    diskToRows: st.bytesPerReading / st.rowTableBytesPerReading,
    diskToInflux: st.influxBytesPerReading === null ? null : st.bytesPerReading / st.influxBytesPerReading,
  };
  console.log(`\n${kind} data: ${fmt(TOTAL)} readings per POST (${METERS} meters × ${REGISTERS_PER_METER} registers × ${READINGS}), body ${mib(bodyBytes)}; ${RUNS} runs after a warm-up`);
  console.table(rows);
  console.log(`ours / PostgreSQL row COPY (faster of CSV and binary): ${x(ratios.oursToCopy)} (target ≥ 1.5×)`);
  console.log(`ours / QuestDB (ILP, until readable): ${x(ratios.oursToQuestDb)} (target ≥ 1.0×); corrections / QuestDB corrections: ${x(ratios.correctionsToQuestDbCorrections)}`);
  console.log(`ours / InfluxDB: ${x(ratios.oursToInflux)}; corrections / fresh: ${x(ratios.correctionsToFresh)} (target ≥ 0.5×)`);
  console.log(
    `disk bytes per stored reading (table, indexes, TOAST; after a checkpoint and a vacuum): ${st.bytesPerReading.toFixed(2)}${kind === 'meter' ? ' (target ≤ 3)' : ''}; ` +
      `InfluxDB ${st.influxBytesPerReading?.toFixed(2) ?? 'n/a'}; PostgreSQL rows ${st.rowTableBytesPerReading.toFixed(1)}`,
  );
  console.log(`after correcting 1% twice: +${(100 * st.growthRuns).toFixed(1)}% in runs of 4 hours (target ≤ 5%), +${(100 * st.growthScattered).toFixed(1)}% as scattered single readings (live rows +${(100 * st.growthScatteredLive).toFixed(1)}%; +${(100 * st.growthScatteredAfterNextMonth).toFixed(1)}% once the next month is in)`);
  perKind[kind] = { readingsPerSecond: Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v.length ? spread((v as number[]).map(rate)) : null])), ratios, storage: st };
}
console.log(`GET /health during a fresh POST: ${healthMs.length} answers, p50 ${fmt(median(healthMs))} ms, p90 ${fmt(healthP90)} ms, max ${fmt(Math.max(...healthMs))} ms (target p90 < 100 ms)`);
console.log(`server peak RSS during one POST: fresh ${mib(Math.max(...rss.fresh))}, corrections ${mib(Math.max(...rss.corrections))}, idle before ${mib(median(rss.idle))} (target < 1 GiB)`);
// Where a POST's time goes, part 2: its stages, each timed alone.
const lastSamples = samples.get(KINDS.at(-1)!)!;
const stages = {
  'HTTP upload and body read (same bytes as text/plain, refused)': median(lastSamples.upload),
  'worker task: parse, validate, group, encode blocks (timed alone)': median(parseMs),
};
const stagesTotal = Object.values(stages).reduce((a, b) => a + b, 0);
console.log(`\nwhere a fresh POST goes (${KINDS.at(-1)} data; medians, ms; each stage timed alone):`);
console.table([
  ...Object.entries(stages).map(([stage, ms]) => ({ stage, ms: Math.round(ms) })),
  { stage: 'rest: register ids, daily pieces, stored-block check, COPY of the blocks, transfers, noise', ms: Math.round(median(lastSamples.fresh) - stagesTotal) },
  { stage: 'POST /api/readings, fresh', ms: Math.round(median(lastSamples.fresh)) },
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
  profiles.serverMainThread = { busyMs: busyMs(mainProfile), top };
  console.log(`\nserver main thread, whole run (${fmt(busyMs(mainProfile))} ms busy), self time:`);
  console.table(top);
}

const file = writeResults('ingest', {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, postgres: 'embedded 18 (DEFAULT_SETTINGS)', influxdb: influx?.version, questdb: questdb?.version, loadAverage: os.loadavg() },
  setup: { meters: METERS, registersPerMeter: REGISTERS_PER_METER, readingsPerRegister: READINGS, readingsPerPost: TOTAL, bodyBytes, runs: RUNS, data: KINDS, influxBatchLines: INFLUX_BATCH, influxConcurrency: INFLUX_CONCURRENCY, writers: WRITERS },
  perKind,
  targets: { oursToCopy: 1.5, oursToQuestDb: 1.0, correctionsToFresh: 0.5, meterBytesPerReading: 3, growthAfterTwoPercentCorrections: 0.05, peakRssBytes: 2 ** 30 },
  concurrentWriters: writers,
  peakRssBytes: { fresh: spread(rss.fresh), corrections: spread(rss.corrections), idleBefore: median(rss.idle) },
  healthDuringPostMs: { answers: healthMs.length, median: median(healthMs), p90: healthP90, max: Math.max(...healthMs) },
  workerTaskMs: spread(parseMs),
  profiles,
});
console.log(`written ${file}`);
fs.rmSync(tmp, { recursive: true, force: true });
if (profileDir) fs.rmSync(profileDir, { recursive: true, force: true });
await db.close();
process.exit(0);
