// Ingest benchmark, QuestDB mode (BACKEND=questdb): Flex running on QuestDB
// (TIMESERIES_BACKEND=questdb) against QuestDB used directly, in the same run, on the same server:
//   - Flex: one POST /api/readings of 1,000 registers × 1,000 readings (1M), timed from the first
//     byte sent to the 204 — which Flex sends only once QuestDB has applied the batch, so the
//     204 is "readable"; then the same readings with other values (corrections: every reading
//     gets a new version; the same body again would change nothing: a reading posted again
//     unchanged keeps its version);
//   - QuestDB direct (bench/support/questdbPeer.ts): the same 1M points as ILP over HTTP in 10
//     bodies posted in parallel, timed until QuestDB has applied them (wal_tables()); then the
//     same points with the same other values (QuestDB's own corrections: DEDUP replaces every
//     row, which costs QuestDB more than appending a fresh month, and keeps no version), the peer
//     of Flex's corrections;
//   - the server's peak RSS during each POST;
//   - that versions are kept: after the corrections, every reading of the month has its replaced
//     value in the versions table (checked, not timed apart: it is part of the corrections' time);
//   - 50 POSTs at once into the same 10 register-days (each every quarter hour of them): all
//     204, throughput printed, the values each replaced kept.
// Each run writes fresh months (both sides), tables are the bench's own and dropped at the end.
//   QUESTDB_HTTP_URL=http://127.0.0.1:9000 QUESTDB_PG_URL=postgres://admin:quest@127.0.0.1:8812/qdb \
//     BACKEND=questdb npm run bench:ingest     (RUNS=5, PEER_BODIES=10, CPU_PROF=1 to profile)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { busyMs, hotFunctions, readProfiles } from './support/cpuProfile.ts';
import { numbers, questdbUrls } from './support/env.ts';
import { writeResults } from './support/load.ts';
import { fmt, median, mib, pct, spread } from './support/measure.ts';
import { createFleet } from './support/meterSetup.ts';
import { ilpBodies, questdbPeer } from './support/questdbPeer.ts';
import { monthStart, readingsBody } from './support/readingsData.ts';
import { ROOT, currentRss, postReadings, startBenchDatabase, startServerProcess } from './support/serverProcess.ts';

const { RUNS, METERS, REGISTERS_PER_METER, READINGS, PEER_BODIES } = numbers({ RUNS: 5, METERS: 100, REGISTERS_PER_METER: 10, READINGS: 1000, PEER_BODIES: 10 });
const CPU_PROF = process.env.CPU_PROF === '1';
const PHASES = process.env.PHASES === '1';
const TOTAL = METERS * REGISTERS_PER_METER * READINGS;
const { httpUrl, pgUrl } = questdbUrls();
/** The timings of a `QuestDB batch written` log line, in ms. */
function phases(line: string): string {
  const fields = JSON.parse(line) as Record<string, unknown>;
  return Object.entries(fields)
    .filter(([key, v]) => key.endsWith('Ms') && typeof v === 'number')
    .map(([key, v]) => `${key.slice(0, -2)} ${fmt(v as number)}`)
    .join(', ');
}
const flexTable = `bench_flex_${process.pid}`;
const peer = (await questdbPeer(`bench_peer_${process.pid}`, httpUrl))!;
await peer.createTable();

const db = await startBenchDatabase();
const profileDir = CPU_PROF ? fs.mkdtempSync(path.join(os.tmpdir(), 'flex-bench-prof-')) : undefined;
const server = await startServerProcess({
  databaseUrl: db.postgres.connectionString,
  dataDir: db.dataDir,
  env: {
    RATE_LIMIT_READINGS_PER_SECOND: '1000',
    RATE_LIMIT_READINGS_PER_MINUTE: '100000',
    TIMESERIES_BACKEND: 'questdb',
    QUESTDB_HTTP_URL: httpUrl,
    QUESTDB_PG_URL: pgUrl,
    QUESTDB_TABLE: flexTable,
    // Not measured here; the default port may be taken on a shared machine.
    MQTT_ENABLED: 'false',
    ...(PHASES ? { LOG_LEVEL: 'debug' } : {}),
  },
  cpuProfDir: profileDir,
  // PHASES=1: where each POST's time went, from the store's debug line.
  onLine: PHASES ? (line) => line.includes('QuestDB batch written') && console.log(`  ${phases(line)}`) : undefined,
});
console.log(`${peer.version}; Flex pid ${server.pid} on table ${flexTable}, peer table ${peer.table}; creating ${METERS} meters × ${REGISTERS_PER_METER} registers`);
const fleet = await createFleet(server.baseUrl, server.adminToken, { meters: METERS, registersPerMeter: REGISTERS_PER_METER, permissions: ['Meter.Organization.ReadWrite'] });
const registerIds = fleet.registers.map((r) => r.id);

const post = (body: Buffer) => postReadings(server, fleet.token, body);

/** Readings of the month range Flex wrote, counted in QuestDB right after the 204. */
const questdb = new pg.Client({ connectionString: pgUrl });
await questdb.connect();
async function visibleRows(table: string, startMs: number): Promise<number> {
  const { rows } = await questdb.query(`SELECT count() AS n FROM ${table} WHERE ts >= $1 AND ts < $2`, [new Date(startMs), new Date(monthStart(1000))]);
  return Number(rows[0].n);
}
/** Superseded versions of readings in [startMs, endMs), in Flex's versions table. */
async function keptVersions(startMs: number, endMs: number): Promise<number> {
  const { rows } = await questdb.query(`SELECT count() AS n FROM ${flexTable}_versions WHERE reading_ts >= $1 AND reading_ts < $2`, [new Date(startMs), new Date(endMs)]);
  return Number(rows[0].n);
}

const rate = (ms: number) => TOTAL / (ms / 1000);
/** The same readings with other values, alike in the JSON body and in ILP: a digit 1 before each
 * value's text (12.345 → 112.345; every value of the bench is a number from 0 to 99.999). */
const corrected = (text: Buffer, before: string) => Buffer.from(text.toString('latin1').replaceAll(before, `${before}1`), 'latin1');
const samples = { fresh: [] as number[], corrections: [] as number[], peer: [] as number[], peerAck: [] as number[], peerCorrections: [] as number[] };
const rss = { fresh: [] as number[], corrections: [] as number[], idle: [] as number[] };
let bodyBytes = 0;
for (let round = 0; round <= RUNS; round += 1) {
  const month = 200 + round;
  const body = readingsBody(fleet.meters, monthStart(month), READINGS);
  bodyBytes = body.length;
  rss.idle.push(currentRss(server.pid));
  const fresh = await post(body);
  // The 204 promises read-your-writes: every reading is there now.
  const seen = await visibleRows(flexTable, monthStart(month));
  if (seen !== TOTAL) throw new Error(`after the 204, QuestDB shows ${seen} of ${TOTAL} readings`);
  const corrections = await post(corrected(body, '"value":'));
  // Versions kept: each reading's first value is in the versions table now.
  const kept = await keptVersions(monthStart(month), monthStart(month) + READINGS * 900_000);
  if (kept !== TOTAL) throw new Error(`after the corrections, ${kept} of ${TOTAL} replaced values are in the versions table`);
  const peerBodies = ilpBodies(peer.table, registerIds, monthStart(month), READINGS, PEER_BODIES);
  const peerRun = await peer.ingest(peerBodies, PEER_BODIES);
  const peerAgain = await peer.ingest(
    peerBodies.map((b) => corrected(b, ' value=')),
    PEER_BODIES,
  );
  const label = round === 0 ? 'warm-up' : `run ${round}/${RUNS}`;
  console.log(
    `${label}: Flex POST ${fmt(rate(fresh.ms))}/s (${fmt(fresh.ms)} ms, peak RSS ${mib(fresh.peakRss)}), corrections ${fmt(rate(corrections.ms))}/s, ` +
      `QuestDB direct ${fmt(rate(peerRun.visibleMs))}/s (${fmt(peerRun.visibleMs)} ms to visible, ${fmt(peerRun.ackMs)} ms to the last 204), its corrections ${fmt(rate(peerAgain.visibleMs))}/s`,
  );
  if (round === 0) continue;
  samples.fresh.push(fresh.ms);
  samples.corrections.push(corrections.ms);
  samples.peer.push(peerRun.visibleMs);
  samples.peerAck.push(peerRun.ackMs);
  samples.peerCorrections.push(peerAgain.visibleMs);
  rss.fresh.push(fresh.peakRss);
  rss.corrections.push(corrections.peakRss);
}

// 50 writers at once into the same 10 register-days: each POST every quarter hour of one day of
// 10 registers (960 readings), its own values; all must answer 204.
const WRITERS = 50;
const sameDays = { meters: fleet.meters.slice(0, 1).map((m) => ({ ...m, registers: m.registers.slice(0, 10) })), start: monthStart(190) };
/** One day of quarter hours of each register of `meters`, values w × 1000 + i. */
const dayBody = (meters: typeof sameDays.meters, start: number, w: number) =>
  Buffer.from(
    JSON.stringify({
      meters: meters.map((m) => ({
        id: m.externalId,
        registers: m.registers.map((r) => ({ id: r.externalId, values: Array.from({ length: 96 }, (_, i) => ({ timestamp: new Date(start + i * 900_000).toISOString(), value: w * 1000 + i, resolution: 900 })) })),
      })),
    }),
  );
const writerBodies = Array.from({ length: WRITERS }, (_, w) => dayBody(sameDays.meters, sameDays.start, w));
const concurrentStart = performance.now();
const concurrent = await Promise.all(writerBodies.map((b) => post(b).then(() => 204, (err: Error) => err.message)));
const concurrentMs = performance.now() - concurrentStart;
const refusedWriters = concurrent.filter((c) => c !== 204);
if (refusedWriters.length > 0) throw new Error(`${refusedWriters.length} of ${WRITERS} concurrent writers failed: ${String(refusedWriters[0]).slice(0, 300)}`);
const concurrentVersions = await keptVersions(sameDays.start, sameDays.start + 86_400_000);
console.log(
  `${WRITERS} concurrent POSTs into the same 10 register-days: all 204 in ${fmt(concurrentMs)} ms (${fmt((WRITERS * 960) / (concurrentMs / 1000))} readings/s); ` +
    `${fmt(concurrentVersions)} replaced values kept (${fmt((WRITERS - 1) * 960)} expected)`,
);

await server.stop();
await questdb.end();
const serverProfiles = profileDir ? readProfiles(profileDir) : [];
const figures = (ms: number[]) => {
  const s = spread(ms.map(rate));
  return { 'readings/s (median)': fmt(s.median), min: fmt(s.min), max: fmt(s.max), 'ms (median)': fmt(median(ms)) };
};
console.log(`\n${fmt(TOTAL)} readings per POST (${METERS} meters × ${REGISTERS_PER_METER} registers × ${READINGS}), body ${mib(bodyBytes)}; ${RUNS} runs after a warm-up; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.table([
  { path: 'Flex POST /api/readings on QuestDB (fresh, 204 = readable)', ...figures(samples.fresh) },
  { path: 'Flex POST /api/readings on QuestDB (corrections)', ...figures(samples.corrections) },
  { path: `${peer.version} direct, ILP/HTTP ${PEER_BODIES} bodies in parallel, until visible`, ...figures(samples.peer) },
  { path: `${peer.version} direct, until the last 204 (not yet visible)`, ...figures(samples.peerAck) },
  { path: `${peer.version} direct, the same points with other values (corrections, DEDUP), until visible`, ...figures(samples.peerCorrections) },
]);
const ratios = {
  freshToQuestDb: median(samples.fresh.map(rate)) / median(samples.peer.map(rate)),
  correctionsToQuestDb: median(samples.corrections.map(rate)) / median(samples.peerCorrections.map(rate)),
  correctionsToQuestDbFresh: median(samples.corrections.map(rate)) / median(samples.peer.map(rate)),
  // Each run's Flex against the QuestDB load right after it (load on a shared machine drifts
  // between runs more than within one).
  freshByRun: samples.fresh.map((ms, k) => samples.peer[k]! / ms),
  correctionsByRun: samples.corrections.map((ms, k) => samples.peerCorrections[k]! / ms),
};
console.log(
  `Flex / QuestDB direct: fresh ${pct(ratios.freshToQuestDb)}, corrections ${pct(ratios.correctionsToQuestDb)} of QuestDB's own corrections (target ≥ 60%; ${pct(ratios.correctionsToQuestDbFresh)} of its fresh rate)`,
);
console.log(`  run by run: fresh ${ratios.freshByRun.map(pct).join(', ')}; corrections ${ratios.correctionsByRun.map(pct).join(', ')}`);
console.log(`server peak RSS during one POST: fresh ${mib(Math.max(...rss.fresh))}, corrections ${mib(Math.max(...rss.corrections))}, idle before ${mib(median(rss.idle))} (target < 1 GiB)`);
const profiles: Record<string, unknown> = {};
const mainProfile = serverProfiles.sort((a, b) => busyMs(b) - busyMs(a))[0];
if (mainProfile) {
  profiles.serverMainThread = { busyMs: busyMs(mainProfile), top: hotFunctions(mainProfile, 20, ROOT) };
  console.log(`\nserver main thread, whole run (${fmt(busyMs(mainProfile))} ms busy), self time:`);
  console.table(hotFunctions(mainProfile, 20, ROOT));
}
const file = writeResults('ingest-questdb', {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, questdb: peer.version, loadavg: os.loadavg() },
  setup: { meters: METERS, registersPerMeter: REGISTERS_PER_METER, readingsPerRegister: READINGS, readingsPerPost: TOTAL, bodyBytes, runs: RUNS, peerBodies: PEER_BODIES },
  readingsPerSecond: { fresh: spread(samples.fresh.map(rate)), corrections: spread(samples.corrections.map(rate)), questdbDirect: spread(samples.peer.map(rate)), questdbDirectAck: spread(samples.peerAck.map(rate)) },
  ratios,
  targets: { freshToQuestDb: 0.6, correctionsToQuestDb: 0.6, peakRssBytes: 2 ** 30 },
  peakRssBytes: { fresh: spread(rss.fresh), corrections: spread(rss.corrections), idleBefore: median(rss.idle) },
  concurrentWriters: { writers: WRITERS, readingsEach: 960, ms: concurrentMs, readingsPerSecond: (WRITERS * 960) / (concurrentMs / 1000), versionsKept: concurrentVersions },
  profiles,
});
console.log(`written ${file}`);
await peer.exec(`DROP TABLE IF EXISTS ${flexTable}`);
await peer.exec(`DROP TABLE IF EXISTS ${flexTable}_versions`);
await peer.dropTable();
if (profileDir) fs.rmSync(profileDir, { recursive: true, force: true });
await db.close();
process.exit(0);
