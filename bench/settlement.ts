// Products benchmark (npm run bench:settlement):
//  1. GET /api/product/settlement/specification for an organization with 100,000 validated
//     transactions in a month (bulk-inserted with SQL, created then validated: two line versions
//     each; then every tenth corrected: a third), p50/p99 over several rounds of sequential
//     requests, now and as of before the correction, plus the SQL statement alone, and
//     GET /api/product/settlement/changes since before the correction (10,000 lines).
//  2. Delivery validation throughput (transactions/s): resources with a month of 15-minute
//     readings (written by binary COPY through the time-series store), thousands of one-hour
//     transactions validated by the job's step function; stored references and baselines.
//  3. An idle job step (nothing due) over those validated transactions: the correction scan.
// Figures go to bench/results/settlement.json. Environment: BENCH_TRANSACTIONS (100000),
// BENCH_VALIDATIONS (5000), BENCH_BASELINE_VALIDATIONS (1000), BENCH_ROUNDS (5), BENCH_REQUESTS (10),
// BENCH_PARTS (settlement,validation).
//   npm run bench:settlement            node --cpu-prof --import tsx bench/settlement.ts
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { VirtualRegisters } from '../src/meter/virtualRegisters.ts';
import { settlementSpecification } from '../src/products/settlement.ts';
import type { ValidationDeps } from '../src/products/validationData.ts';
import { validateDueTransactions, type ValidationTiming } from '../src/products/validationJob.ts';
import { bootApp } from './support/bootApp.ts';
import { writeResults } from './support/load.ts';
import { DAY, createBenchMarket, insertPending, measuredResources, resetToPending, seedSettlement, validateSettlement } from './support/productsData.ts';

const TRANSACTIONS = Number(process.env.BENCH_TRANSACTIONS ?? 100_000);
const VALIDATIONS = Number(process.env.BENCH_VALIDATIONS ?? 5000);
const BASELINE_VALIDATIONS = Number(process.env.BENCH_BASELINE_VALIDATIONS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 10);
/** settlement,validation (default both). */
const PARTS = (process.env.BENCH_PARTS ?? 'settlement,validation').split(',');
const MONTH_START = Date.parse('2025-01-01T00:00:00Z');
const MONTH_END = Date.parse('2025-02-01T00:00:00Z');

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const spread = (xs: number[]) => ({ median: round(median(xs)), min: round(Math.min(...xs)), max: round(Math.max(...xs)) });

const boot = await bootApp({ VALIDATION_INTERVAL_MS: '3600000', CLEARING_INTERVAL_MS: '3600000', DB_POOL_MAX: '10' });
const { app, adminToken } = boot;
const base = app.baseUrl;
const pool = app.pool;

// ---------------------------------------------------------------------------------------------
// 1. Settlement specification

async function settlementBench() {
  const m = await createBenchMarket(base, adminToken, 10);
  const seeded = await seedSettlement(pool, m, TRANSACTIONS, 100, MONTH_START);
  console.log(`settlement: inserted ${seeded.flexibility} flexibility + ${seeded.availability} availability transactions, created then validated, in ${seeded.seconds.toFixed(1)} s`);

  const query = `organizationId=${m.buyer.organizationId}&start=${new Date(MONTH_START).toISOString()}&end=${new Date(MONTH_END).toISOString()}`;
  const url = `${base}/api/product/settlement/specification?${query}`;
  const headers = { authorization: `Bearer ${m.buyer.token}` };
  let bytes = 0;
  let lines = 0;
  const once = async (target = url) => {
    const t = performance.now();
    const res = await fetch(target, { headers });
    const text = await res.text();
    const elapsed = performance.now() - t;
    if (res.status !== 200) throw new Error(`settlement: ${res.status} ${text.slice(0, 300)}`);
    return { elapsed, text };
  };
  const validated = await once();
  const first = JSON.parse(validated.text);
  for (const cp of first.counterParts) for (const k of ['flexibilityBoughtSummary', 'availabilityBoughtSummary']) lines += cp[k].transactions.length;
  if (lines !== TRANSACTIONS) throw new Error(`expected ${TRANSACTIONS} lines, got ${lines}`);
  // A correction re-validates every tenth transaction: a third version of those lines, after the
  // instant of the specification just fetched.
  await validateSettlement(pool, m, 5, 10);
  await pool.query('VACUUM ANALYZE flexibility_transactions, availability_transactions, settlement_line_versions');
  const asOfUrl = `${url}&asOf=${first.asOf}`;
  const reproduced = await once(asOfUrl);
  if (reproduced.text !== validated.text) throw new Error('settlement: the specification as of before the correction differs from the one fetched then');
  const changesUrl = `${base}/api/product/settlement/changes?${query}&since=${first.asOf}`;
  const changed = JSON.parse((await once(changesUrl)).text).changes.length;
  if (changed !== TRANSACTIONS / 10) throw new Error(`settlement: expected ${TRANSACTIONS / 10} changed lines, got ${changed}`);
  const { rows: stats } = await pool.query<{ versions: number; bytes: number }>(
    "SELECT count(*)::int AS versions, pg_total_relation_size('settlement_line_versions')::float8 AS bytes FROM settlement_line_versions",
  );
  console.log(`settlement: ${stats[0]!.versions} line versions, ${(stats[0]!.bytes / 2 ** 20).toFixed(1)} MiB with indexes (${Math.round(stats[0]!.bytes / stats[0]!.versions)} bytes each); ${changed} lines changed`);

  const rounds: { p50: number; p99: number; asOfP50: number; asOfP99: number; sqlMs: number; changesMs: number }[] = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    const times: number[] = [];
    const asOfTimes: number[] = [];
    for (let i = 0; i < REQUESTS; i += 1) {
      const current = await once();
      bytes = current.text.length;
      times.push(current.elapsed);
      asOfTimes.push((await once(asOfUrl)).elapsed);
    }
    times.sort((a, b) => a - b);
    asOfTimes.sort((a, b) => a - b);
    const s = performance.now();
    await settlementSpecification(pool, { organizationId: m.buyer.organizationId, start: MONTH_START, end: MONTH_END });
    const sqlMs = performance.now() - s;
    const changesMs = (await once(changesUrl)).elapsed;
    rounds.push({ p50: quantile(times, 0.5), p99: quantile(times, 0.99), asOfP50: quantile(asOfTimes, 0.5), asOfP99: quantile(asOfTimes, 0.99), sqlMs, changesMs });
    const x = rounds[r]!;
    console.log(
      `settlement round ${r + 1}: now p50 ${x.p50.toFixed(0)} ms, p99 ${x.p99.toFixed(0)} ms; asOf before the correction p50 ${x.asOfP50.toFixed(0)} ms, p99 ${x.asOfP99.toFixed(0)} ms; ` +
        `SQL alone ${x.sqlMs.toFixed(0)} ms; changes ${x.changesMs.toFixed(0)} ms`,
    );
  }
  // Ratios measured in the same rounds (the machine's load moves every figure alike).
  const ratio = (key: 'asOfP50' | 'sqlMs' | 'changesMs') => round(median(rounds.map((r) => r[key] / r.p50)), 2);
  const ratios = { asOfOverNow: ratio('asOfP50'), sqlOverHttp: ratio('sqlMs'), changesOverSpecification: ratio('changesMs') };
  console.log(`settlement ratios (median of rounds): asOf before the correction / now ${ratios.asOfOverNow}×, changes / specification ${ratios.changesOverSpecification}×`);
  return {
    transactions: TRANSACTIONS,
    ratios,
    counterparts: first.counterParts.length,
    resources: first.remunerationPerResource.length,
    responseBytes: bytes,
    lineVersions: stats[0]!.versions,
    lineVersionBytes: Math.round(stats[0]!.bytes / stats[0]!.versions),
    changedLines: changed,
    requestsPerRound: REQUESTS,
    rounds: rounds.map((r) => ({ p50Ms: round(r.p50), p99Ms: round(r.p99), asOfP50Ms: round(r.asOfP50), asOfP99Ms: round(r.asOfP99), sqlMs: round(r.sqlMs), changesMs: round(r.changesMs) })),
    p50Ms: spread(rounds.map((r) => r.p50)),
    p99Ms: spread(rounds.map((r) => r.p99)),
    asOfP50Ms: spread(rounds.map((r) => r.asOfP50)),
    asOfP99Ms: spread(rounds.map((r) => r.asOfP99)),
    sqlMs: spread(rounds.map((r) => r.sqlMs)),
    changesMs: spread(rounds.map((r) => r.changesMs)),
    bulkInsertSeconds: round(seeded.seconds),
  };
}

// ---------------------------------------------------------------------------------------------
// 2. Delivery validation throughput

async function throughput(deps: ValidationDeps, ids: number[], label: string) {
  const timing: ValidationTiming = { delayMs: 0, retryMs: 3_600_000, windowMs: 60 * DAY, batchSize: 200 };
  const rates: number[] = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    await resetToPending(pool, ids);
    const t = performance.now();
    let done = 0;
    for (let n = await validateDueTransactions(deps, timing); n > 0; n = await validateDueTransactions(deps, timing)) done += n;
    const seconds = (performance.now() - t) / 1000;
    const { rows } = await pool.query<{ status: number; n: number }>('SELECT delivery_validation_status AS status, count(*)::int AS n FROM flexibility_transactions WHERE id = ANY($1::int[]) GROUP BY 1', [ids]);
    if (rows.length !== 1 || rows[0]!.status !== 2) throw new Error(`${label}: not all validated: ${JSON.stringify(rows)}`);
    rates.push(ids.length / seconds);
    console.log(`${label} round ${r + 1}: ${done} handled, ${ids.length} validated in ${seconds.toFixed(2)} s = ${(ids.length / seconds).toFixed(0)} transactions/s`);
  }
  // A step when nothing is due, with the correction scan (every validated transaction of the
  // window probed for corrected readings; once per VALIDATION_RETRY_MS) and without it.
  const scans: number[] = [];
  const idle: number[] = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    const state = { lastCorrectionScan: 0 };
    for (const list of [scans, idle]) {
      const t = performance.now();
      const n = await validateDueTransactions(deps, timing, state);
      if (n !== 0) throw new Error(`${label}: ${n} transactions due again without any change`);
      list.push(performance.now() - t);
    }
  }
  return { transactions: ids.length, transactionsPerSecond: spread(rates), rounds: rates.map((x) => Math.round(x)), correctionScanStepMs: spread(scans), idleStepMs: spread(idle) };
}

async function validationBench() {
  const m = await createBenchMarket(base, adminToken, 10);
  const to = Math.floor(Date.now() / DAY) * DAY;
  const from = to - 30 * DAY;
  const deps: ValidationDeps = { pool, store: app.timeSeries, virtual: new VirtualRegisters(pool, app.timeSeries, app.workers), log: app.log };
  const storedResources = await measuredResources(app, adminToken, m, 50, 'stored', from, to);
  const storedIds = await insertPending(pool, m, storedResources, VALIDATIONS, from, to);
  const stored = await throughput(deps, storedIds, 'validation (stored reference)');
  const baselineResources = await measuredResources(app, adminToken, m, 10, 'baseline', from, to);
  // Baselines need the previous day: transactions from the second day on.
  const baselineIds = await insertPending(pool, m, baselineResources, BASELINE_VALIDATIONS, from + DAY, to);
  const baseline = await throughput(deps, baselineIds, 'validation (baseline reference)');
  return { readings: '30 days × 96 quarter hours per register', storedReference: { resources: 50, ...stored }, baselineReference: { resources: 10, ...baseline } };
}

/** How fast this machine's PostgreSQL is, to scale the figures: count a million generated rows. */
async function calibration() {
  const times: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    const t = performance.now();
    await pool.query('SELECT count(*) FROM generate_series(1, 1000000)');
    times.push(performance.now() - t);
  }
  return { postgresCountMillionRowsMs: spread(times) };
}

try {
  const machine = await calibration();
  const settlement = PARTS.includes('settlement') ? await settlementBench() : undefined;
  const validation = PARTS.includes('validation') ? await validationBench() : undefined;
  const file = writeResults('settlement', {
    date: new Date().toISOString(),
    machine: { cpus: os.availableParallelism(), model: os.cpus()[0]?.model, node: process.version, memoryGiB: Math.round(os.totalmem() / 2 ** 30) },
    command: 'npm run bench:settlement',
    calibration: machine,
    settlement,
    validation,
  });
  console.log(JSON.stringify({ settlement, validation }, null, 2));
  console.log(`written to ${file}`);
} finally {
  await boot.close();
}
