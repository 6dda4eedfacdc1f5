// Query benchmark, QuestDB mode (BACKEND=questdb): Flex running on QuestDB against the
// same SAMPLE BY questions sent to QuestDB directly over HTTP (/exec), in the same run, requests
// alternating one by one. 100 registers × 1 year of 15-minute data (3.5M readings) are loaded
// into Flex's table and the peer's (same schema) by ILP, then:
//   - GET /api/readings/average/hourly, 1 register × 1 year      vs SAMPLE BY 1h, one register
//   - GET /api/readings/average/hourly, 100 registers × 1 month  vs SAMPLE BY 1h, 100 registers
//   - GET /api/readings?resolution=86400, 100 registers × 1 year vs SAMPLE BY 1d ALIGN TO CALENDAR TIME ZONE
// Then `asOf`: 1% of the readings (every 100th of each register) corrected through Flex (POST
// /api/readings, so their first values go to the versions table), and the same three questions
// asked of Flex's QuestDB store in this process (no HTTP: the store's own time) as of an instant
// before the correction and without asOf, alternating; and over HTTP when the API takes `asOf`.
//   QUESTDB_HTTP_URL=… QUESTDB_PG_URL=… BACKEND=questdb npm run bench:query   (REQUESTS=40 WARMUP=5, CPU_PROF=1 to profile)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { busyMs, hotFunctions, readProfiles } from './support/cpuProfile.ts';
import { numbers, questdbUrls } from './support/env.ts';
import { writeResults } from './support/load.ts';
import { fmt, percentile, timedRequest } from './support/measure.ts';
import { createFleet } from './support/meterSetup.ts';
import { ilpBodies, questdbPeer, type QuestDbAnswer } from './support/questdbPeer.ts';
import { ROOT, postReadings, startBenchDatabase, startServerProcess } from './support/serverProcess.ts';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { createPool } from '../src/store/database.ts';
import type { BucketQuery } from '../src/store/timeseries/types.ts';
import { WorkerPool } from '../src/workerPool.ts';

const { REQUESTS, WARMUP } = numbers({ REQUESTS: 40, WARMUP: 5 });
const YEAR = 2023;
const TIME_ZONE = 'Europe/Amsterdam';
const YEAR_START = Date.UTC(YEAR, 0, 1);
const YEAR_END = Date.UTC(YEAR + 1, 0, 1);
const PER_REGISTER = (YEAR_END - YEAR_START) / 900_000;
const { httpUrl, pgUrl } = questdbUrls();
const flexTable = `bench_qflex_${process.pid}`;
const peer = (await questdbPeer(`bench_qpeer_${process.pid}`, httpUrl))!;
const flex = (await questdbPeer(flexTable, httpUrl))!;

const db = await startBenchDatabase();
const profileDir = process.env.CPU_PROF === '1' ? fs.mkdtempSync(path.join(os.tmpdir(), 'flex-bench-prof-')) : undefined;
const server = await startServerProcess({
  databaseUrl: db.postgres.connectionString,
  dataDir: db.dataDir,
  env: { TIMESERIES_BACKEND: 'questdb', QUESTDB_HTTP_URL: httpUrl, QUESTDB_PG_URL: pgUrl, QUESTDB_TABLE: flexTable, MQTT_ENABLED: 'false' },
  cpuProfDir: profileDir,
});
const fleet = await createFleet(server.baseUrl, server.adminToken, { meters: 10, registersPerMeter: 10, permissions: ['Meter.Organization.ReadWrite'], measurementType: 1, timeZone: TIME_ZONE });
const ids = fleet.registers.map((r) => r.id);
console.log(`${peer.version}; loading ${fmt(ids.length * PER_REGISTER)} readings into ${flexTable} (Flex) and ${peer.table} (direct) by ILP`);
await peer.createTable();
for (let r = 0; r < ids.length; r += 10) {
  const bodies = ilpBodies(flexTable, ids.slice(r, r + 10), YEAR_START, PER_REGISTER, 10);
  await flex.ingest(bodies, 4);
  await peer.ingest(ilpBodies(peer.table, ids.slice(r, r + 10), YEAR_START, PER_REGISTER, 10), 4);
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const monthRange = (k: number) => [Date.UTC(YEAR, k % 12, 1), Date.UTC(YEAR, (k % 12) + 1, 1)] as const;
const ourUrl = (path: string, registerIds: readonly number[], start: number, end: number, resolution?: number) => {
  const q = new URLSearchParams({ organizationId: String(fleet.organizationId), start: iso(start), end: iso(end) });
  for (const id of registerIds) q.append('registerId', String(id));
  if (resolution !== undefined) q.set('resolution', String(resolution));
  return `${server.baseUrl}${path}?${q}`;
};
const questions = [
  {
    name: 'hourly average, 1 register × 1 year',
    ours: (k: number) => ourUrl('/api/readings/average/hourly', [ids[k % ids.length]!], YEAR_START, YEAR_END),
    peer: (k: number) => peer.hourlyAverages([ids[k % ids.length]!], YEAR_START, YEAR_END),
  },
  {
    name: 'hourly average, 100 registers × 1 month',
    ours: (k: number) => ourUrl('/api/readings/average/hourly', ids, ...monthRange(k)),
    peer: (k: number) => peer.hourlyAverages(ids, ...monthRange(k)),
  },
  {
    name: 'resolution=86400 (local days, sum), 100 registers × 1 year',
    ours: () => ourUrl('/api/readings', ids, YEAR_START, YEAR_END, 86400),
    peer: () => peer.dailySums(ids, YEAR_START, YEAR_END, TIME_ZONE),
  },
];
const headers = { authorization: `Bearer ${fleet.token}` };
const results = [];
for (const question of questions) {
  const oursMs: number[] = [];
  const peerMs: number[] = [];
  let oursPoints = 0;
  let peerAnswer: QuestDbAnswer | undefined;
  for (let k = 0; k < WARMUP + REQUESTS; k += 1) {
    const a = await timedRequest(question.ours(k), 'GET', headers, undefined, true);
    if (a.status !== 200) throw new Error(`GET: ${a.status} ${a.body.slice(0, 500)}`);
    const b = await question.peer(k);
    if (k < WARMUP) continue;
    oursMs.push(a.ms);
    peerMs.push(b.ms);
    oursPoints = (JSON.parse(a.body) as { readings: unknown[] }[]).reduce((n, s) => n + s.readings.length, 0);
    peerAnswer = b;
  }
  const row = {
    question: question.name,
    'Flex p50 ms': Number(percentile(oursMs, 50).toFixed(1)),
    'Flex p99 ms': Number(percentile(oursMs, 99).toFixed(1)),
    'QuestDB p50 ms': Number(percentile(peerMs, 50).toFixed(1)),
    'QuestDB p99 ms': Number(percentile(peerMs, 99).toFixed(1)),
    'Flex/QuestDB p50': Number((percentile(oursMs, 50) / percentile(peerMs, 50)).toFixed(2)),
    'Flex points': oursPoints,
    'QuestDB rows': peerAnswer?.rows ?? 0,
  };
  console.log(`${question.name}: Flex p50 ${row['Flex p50 ms']} ms, QuestDB direct p50 ${row['QuestDB p50 ms']} ms (${row['Flex/QuestDB p50']}×)`);
  results.push({ ...row, oursMs, peerMs });
}
console.log(`\n${fmt(ids.length * PER_REGISTER)} readings, ${REQUESTS} requests per question after ${WARMUP} warm-up, one at a time, alternating; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; target Flex/QuestDB p50 ≤ 1.5`);
console.table(results.map(({ oursMs: _a, peerMs: _b, ...row }) => row));
const file = writeResults('query-questdb', {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, questdb: peer.version, loadavg: os.loadavg() },
  setup: { registers: ids.length, readingsPerRegister: PER_REGISTER, year: YEAR, timeZone: TIME_ZONE, requests: REQUESTS, warmup: WARMUP },
  results,
});
console.log(`written ${file}`);

// asOf. The loaded rows were recorded when ilpBodies made them; the correction is recorded after.
const asOf = Date.now();
await new Promise((r) => setTimeout(r, 5));
const CORRECTED_EVERY = 100;
const correction = Buffer.from(
  JSON.stringify({
    meters: fleet.meters.map((m) => ({
      id: m.externalId,
      registers: m.registers.map((r) => ({
        id: r.externalId,
        values: Array.from({ length: Math.ceil(PER_REGISTER / CORRECTED_EVERY) }, (_, k) => ({ timestamp: new Date(YEAR_START + k * CORRECTED_EVERY * 900_000).toISOString(), value: k + 0.5, resolution: 900 })),
      })),
    })),
  }),
);
const corrected = await postReadings(server, fleet.token, correction);
const correctedCount = ids.length * Math.ceil(PER_REGISTER / CORRECTED_EVERY);
console.log(`\nasOf: ${fmt(correctedCount)} readings (1%) corrected through Flex in ${fmt(corrected.ms)} ms; questions as of ${new Date(asOf).toISOString()} (before it) and without asOf`);
const { QuestDbTimeSeriesStore } = await import('../src/store/timeseries/questdb/store.ts');
const silent = pino({ level: 'silent' });
const platform = createPool(db.postgres.connectionString, 4, silent);
const benchWorkers = new WorkerPool(1);
const store = await QuestDbTimeSeriesStore.connect({ httpUrl, pgUrl, table: flexTable, purgeIntervalMs: 0 }, { pool: platform, workers: benchWorkers, log: silent });
const hourly = (registerIds: readonly number[], start: number, end: number): BucketQuery => ({ registers: registerIds.map((id) => ({ id, aggregate: 'avg', timeZone: 'UTC' })), start, end, resolutionSeconds: 3600 });
const storeQuestions = [
  { name: questions[0]!.name, query: (k: number) => hourly([ids[k % ids.length]!], YEAR_START, YEAR_END) },
  { name: questions[1]!.name, query: (k: number) => hourly(ids, ...monthRange(k)) },
  { name: questions[2]!.name, query: (): BucketQuery => ({ registers: ids.map((id) => ({ id, aggregate: 'sum', timeZone: TIME_ZONE })), start: YEAR_START, end: YEAR_END, resolutionSeconds: 86400 }) },
];
const asOfResults = [];
for (const question of storeQuestions) {
  const nowMs: number[] = [];
  const asOfMs: number[] = [];
  let differ = 0;
  for (let k = 0; k < WARMUP + REQUESTS; k += 1) {
    const q = question.query(k);
    let t = performance.now();
    const now = await store.bucketsJson(q);
    const a = performance.now() - t;
    t = performance.now();
    const then = await store.bucketsJson({ ...q, asOf });
    const b = performance.now() - t;
    if (k < WARMUP) continue;
    nowMs.push(a);
    asOfMs.push(b);
    // The corrected buckets answer differently as of before the correction.
    if ([...now].some(([id, json]) => !json.equals(then.get(id) ?? Buffer.alloc(0)))) differ += 1;
  }
  const row = {
    question: question.name,
    'store p50 ms': Number(percentile(nowMs, 50).toFixed(1)),
    'store asOf p50 ms': Number(percentile(asOfMs, 50).toFixed(1)),
    'asOf / now p50': Number((percentile(asOfMs, 50) / percentile(nowMs, 50)).toFixed(2)),
    'answers that differ': `${differ}/${REQUESTS}`,
  };
  console.log(`${question.name}: Flex's store p50 ${row['store p50 ms']} ms, as of before the correction ${row['store asOf p50 ms']} ms (${row['asOf / now p50']}×)`);
  asOfResults.push({ ...row, nowMs, asOfMs });
}
console.table(asOfResults.map(({ nowMs: _a, asOfMs: _b, ...row }) => row));
// Over HTTP, when the readings API takes asOf.
const probe = await timedRequest(`${questions[0]!.ours(0)}&asOf=${new Date(asOf).toISOString()}`, 'GET', headers, undefined, true);
if (probe.status === 200) {
  for (const question of questions) {
    const oursMs: number[] = [];
    const peerMs: number[] = [];
    for (let k = 0; k < WARMUP + REQUESTS; k += 1) {
      const a = await timedRequest(`${question.ours(k)}&asOf=${new Date(asOf).toISOString()}`, 'GET', headers, undefined, true);
      if (a.status !== 200) throw new Error(`GET asOf: ${a.status} ${a.body.slice(0, 500)}`);
      const b = await question.peer(k);
      if (k < WARMUP) continue;
      oursMs.push(a.ms);
      peerMs.push(b.ms);
    }
    console.log(`${question.name} as of before the correction, over HTTP: Flex p50 ${percentile(oursMs, 50).toFixed(1)} ms, QuestDB direct (current data) p50 ${percentile(peerMs, 50).toFixed(1)} ms (${(percentile(oursMs, 50) / percentile(peerMs, 50)).toFixed(2)}×)`);
  }
} else {
  console.log(`(GET /api/readings with asOf answered ${probe.status}: not measured over HTTP)`);
}
console.log(`load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
await store.close();
await benchWorkers.close();
await platform.end();
writeResults('query-questdb-asof', { date: new Date().toISOString(), machine: { loadavg: os.loadavg() }, corrected: correctedCount, results: asOfResults });
await server.stop();
if (profileDir) {
  const main = readProfiles(profileDir).sort((a, b) => busyMs(b) - busyMs(a))[0];
  if (main) {
    console.log(`\nserver main thread, whole run (${fmt(busyMs(main))} ms busy), self time:`);
    console.table(hotFunctions(main, 25, ROOT));
  }
  fs.rmSync(profileDir, { recursive: true, force: true });
}
await flex.dropTable();
await flex.exec(`DROP TABLE IF EXISTS ${flexTable}_versions`);
await peer.dropTable();
await db.close();
process.exit(0);
