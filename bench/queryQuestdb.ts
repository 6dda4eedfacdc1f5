// Query benchmark, QuestDB mode (BACKEND=questdb): Flex running on QuestDB against the
// same SAMPLE BY questions sent to QuestDB directly over HTTP (/exec), in the same run, requests
// alternating one by one. 100 registers × 1 year of 15-minute data (3.5M readings) are loaded
// into Flex's table and the peer's (same schema) by ILP, then:
//   - GET /api/readings/average/hourly, 1 register × 1 year      vs SAMPLE BY 1h, one register
//   - GET /api/readings/average/hourly, 100 registers × 1 month  vs SAMPLE BY 1h, 100 registers
//   - GET /api/readings?resolution=86400, 100 registers × 1 year vs SAMPLE BY 1d ALIGN TO CALENDAR TIME ZONE
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
import { ROOT, startBenchDatabase, startServerProcess } from './support/serverProcess.ts';

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
const fleet = await createFleet(server.baseUrl, server.adminToken, { meters: 10, registersPerMeter: 10, permissions: ['Meter.Organization.Read'], measurementType: 1, timeZone: TIME_ZONE });
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
await peer.dropTable();
await db.close();
process.exit(0);
