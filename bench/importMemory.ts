// Memory and throughput of the CSV import (`npm run import`): generates a large CSV in a temporary
// directory, creates its meters and registers through the admin API of a fresh embedded
// database, stops the app, then runs the importer as its own process (it starts the embedded
// PostgreSQL itself, as on a machine where the app is down) and samples the importer's RSS every
// second from /proc. The claim to check: RSS stays flat whatever the file size.
//   npm run bench:import                      (IMPORT_BENCH_MB=1024 by default)
//   IMPORT_BENCH_MB=5120 npm run bench:import (5 GB)
//   IMPORT_BENCH_GZIP=1                       (import a .csv.gz of the same rows instead)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pino } from 'pino';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { call } from './support/bootApp.ts';
import { printTable, writeResults } from './support/load.ts';

const targetBytes = Number(process.env.IMPORT_BENCH_MB ?? 1024) * 1024 * 1024;
const gzip = process.env.IMPORT_BENCH_GZIP === '1';
const METERS = 100;
const REGISTERS_PER_METER = 10;
const DAY_ROWS = 96; // 15-minute readings
const WARMUP_S = 5;

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-bench-import-'));
fs.chmodSync(root, 0o755);
const dataDir = path.join(root, 'data');
const csvFile = path.join(root, gzip ? 'readings.csv.gz' : 'readings.csv');
const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

// 1. Meters and registers through the real admin API, then the app stops.
const adminToken = `flex_pat_bench_${randomBytes(24).toString('base64url')}`;
const app = await createApp(loadConfig({ ...process.env, DATABASE_URL: '', PORT: '0', MQTT_PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN: adminToken, LOG_LEVEL: 'error' }), { log: pino({ level: 'error' }) });
const series: string[] = [];
for (let m = 0; m < METERS; m += 1) {
  const meter = await call(app.baseUrl, 'POST', '/api/admin/meters', adminToken, { externalId: `bench-meter-${m}`, name: `m${m}`, type: 1, organizationsIds: [] });
  for (let r = 0; r < REGISTERS_PER_METER; r += 1) {
    await call(app.baseUrl, 'POST', '/api/admin/registers', adminToken, {
      externalId: `bench-register-${m}-${r}`,
      name: `r${r}`,
      type: 1,
      measurementType: 1,
      measurementPrefix: 3,
      defaultResolution: 900,
      updateFrequency: 3600,
      meterId: meter.id,
      isVirtual: false,
      timeZone: 'UTC',
      virtualDefinition: null,
    });
    series.push(`bench-meter-${m},bench-register-${m}-${r},`);
  }
}
await app.close();

// 2. The CSV: day by day, each register's 96 readings of the day, until the target size.
const generateStarted = performance.now();
let rows = 0;
let csvBytes = 0;
async function* csvChunks(): AsyncGenerator<string> {
  yield 'meterId,registerId,timestamp,value,resolution\n';
  const start = Date.UTC(2020, 0, 1);
  for (let day = 0; csvBytes < targetBytes; day += 1) {
    let text = '';
    for (let k = 0; k < DAY_ROWS; k += 1) {
      const ts = new Date(start + day * 86_400_000 + k * 900_000).toISOString();
      for (let s = 0; s < series.length; s += 1) text += `${series[s]}${ts},${((day * 7 + k * 13 + s) % 10_000) / 100},900\n`;
    }
    rows += DAY_ROWS * series.length;
    csvBytes += text.length;
    yield text;
  }
}
const source = Readable.from(csvChunks());
if (gzip) await pipeline(source, createGzip({ level: 1 }), fs.createWriteStream(csvFile));
else await pipeline(source, fs.createWriteStream(csvFile));
const fileBytes = fs.statSync(csvFile).size;
console.log(`generated ${rows.toLocaleString('en-US')} rows, ${mib(csvBytes)} MiB of CSV${gzip ? ` (${mib(fileBytes)} MiB gzip)` : ''} in ${((performance.now() - generateStarted) / 1000).toFixed(0)} s`);

// 3. The import as its own process, its RSS sampled every second.
function rssOf(pid: number): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/importCsv.ts', csvFile, '--progress-interval', '15'], {
  env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let summary = '';
child.stdout.setEncoding('utf8').on('data', (d: string) => (summary += d));
const started = performance.now();
const samples: { second: number; rss: number }[] = [];
const sampler = setInterval(() => {
  const rss = rssOf(child.pid!);
  if (rss !== undefined) samples.push({ second: Math.round((performance.now() - started) / 1000), rss });
}, 1000);
const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
clearInterval(sampler);
process.stdout.write(summary);
if (code !== 0) throw new Error(`the import exited with ${code}`);

const value = (label: string) => Number(new RegExp(`^  ${label}: ([\\d.]+)`, 'm').exec(summary)?.[1]);
const steady = samples.filter((s) => s.second >= WARMUP_S);
const rssValues = (steady.length > 0 ? steady : samples).map((s) => s.rss);
const result = {
  machine: `${os.cpus().length} vCPU ${os.cpus()[0]?.model ?? ''}, ${mib(os.totalmem())} MiB, Node ${process.version}`,
  command: `IMPORT_BENCH_MB=${targetBytes / 1024 / 1024}${gzip ? ' IMPORT_BENCH_GZIP=1' : ''} npm run bench:import`,
  rows: value('rows read'),
  stored: value('rows stored'),
  csvMiB: mib(csvBytes),
  fileMiB: mib(fileBytes),
  seconds: value('duration'),
  rowsPerSecond: value('rows/s'),
  // CPU of the importer process itself: the rest of the wall time it waits for PostgreSQL.
  importerCpuSeconds: value('importer CPU'),
  csvMiBPerSecond: Math.round((mib(csvBytes) / value('duration')) * 10) / 10,
  rssMiBMin: mib(Math.min(...rssValues)),
  rssMiBMax: mib(Math.max(...rssValues)),
  rssSamples: samples.length,
  // RSS at each tenth of the run, to see that it does not climb.
  rssMiBByTenth: Array.from({ length: 10 }, (_, k) => mib(samples[Math.min(samples.length - 1, Math.floor(((k + 1) * samples.length) / 10) - 1)]?.rss ?? 0)),
};
printTable([
  {
    rows: result.rows,
    'CSV MiB': result.csvMiB,
    seconds: result.seconds,
    'rows/s': result.rowsPerSecond,
    'CSV MiB/s': result.csvMiBPerSecond,
    'importer CPU s': result.importerCpuSeconds,
    [`RSS min MiB (after ${WARMUP_S} s)`]: result.rssMiBMin,
    'RSS max MiB': result.rssMiBMax,
  },
]);
console.log(`RSS by tenth of the run (MiB): ${result.rssMiBByTenth.join(', ')}`);
console.log(`results: ${writeResults(gzip ? 'import-memory-gzip' : 'import-memory', result)}`);
if (process.env.IMPORT_BENCH_KEEP !== '1') fs.rmSync(root, { recursive: true, force: true });
