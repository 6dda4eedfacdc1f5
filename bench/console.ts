// Console benchmark (npm run bench:console), in a real headless Chromium (Debian's package,
// driven by playwright-core) against the real server:
//  1. one register-year of 15-minute readings (35,040 points) as stored: time from the response
//     arriving (the later of the readings and the register list) to the chart's first draw,
//     measured in the page with performance.mark/measure (target 500 ms);
//  2. 100 register-months of hourly averages (100 × 744 points): the same (target 1 s);
//  3. the console's JavaScript, gzipped, as the server sends it (target 300 KB).
// Each page load is a fresh navigation with the session kept (sessionStorage). Figures go to
// bench/results/console.json; ratios are measured / target (below 1 meets it).
// Environment: RUNS (5), CHROMIUM_PATH (/usr/bin/chromium).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { ensureConsoleBuilt, CONSOLE_DIST } from '../test/support/consoleBuild.ts';
import { launchChromium, NO_CHROMIUM } from '../test/support/browser.ts';
import { bootApp, call } from './support/bootApp.ts';
import { writeResults } from './support/load.ts';
import { createFleet } from './support/meterSetup.ts';
import { valueOf } from './support/readingsData.ts';

const RUNS = Number(process.env.RUNS ?? 5);
const YEAR = 2022;
const MONTH = { from: '2023-01-01', to: '2023-01-31' };

if (NO_CHROMIUM) {
  console.error(`bench:console needs Chromium: ${NO_CHROMIUM}`);
  process.exit(1);
}
ensureConsoleBuilt();

/** The console's own JavaScript as index.html loads it (Swagger UI belongs to /docs). */
function consoleScriptBytes(): { files: string[]; raw: number; gzip: number; brotli: number } {
  const html = fs.readFileSync(path.join(CONSOLE_DIST, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  const size = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
  const at = (f: string) => path.join(CONSOLE_DIST, f);
  return {
    files,
    raw: files.reduce((n, f) => n + size(at(f)), 0),
    gzip: files.reduce((n, f) => n + size(`${at(f)}.gz`), 0),
    brotli: files.reduce((n, f) => n + size(`${at(f)}.br`), 0),
  };
}

function quarterHourBody(meterExternalId: string, registerExternalId: string, startMs: number, count: number, r: number): string {
  const values = new Array<string>(count);
  for (let i = 0; i < count; i += 1) values[i] = `{"timestamp":"${new Date(startMs + i * 900_000).toISOString()}","value":${valueOf(r, i)},"resolution":900}`;
  return `{"id":${JSON.stringify(registerExternalId)},"values":[${values.join(',')}]}`;
}

const boot = await bootApp({ DB_POOL_MAX: '10' });
const { app, adminToken } = boot;
const base = app.baseUrl;
const fleet = await createFleet(base, adminToken, { meters: 10, registersPerMeter: 10, permissions: ['Meter.Organization.ReadWrite'] });

// A year for the first register; January for all hundred (POSTed per meter, as a utility would).
const yearStart = Date.UTC(YEAR, 0, 1);
const yearPoints = (Date.UTC(YEAR + 1, 0, 1) - yearStart) / 900_000;
const first = fleet.meters[0]!;
await call(base, 'POST', '/api/readings', adminToken, JSON.parse(`{"meters":[{"id":${JSON.stringify(first.externalId)},"registers":[${quarterHourBody(first.externalId, first.registers[0]!.externalId, yearStart, yearPoints, 0)}]}]}`));
const monthStart = Date.parse(`${MONTH.from}T00:00:00Z`);
const monthPoints = 31 * 96;
let r = 0;
for (const meter of fleet.meters) {
  const registers = meter.registers.map((reg) => quarterHourBody(meter.externalId, reg.externalId, monthStart, monthPoints, ++r));
  await call(base, 'POST', '/api/readings', adminToken, JSON.parse(`{"meters":[{"id":${JSON.stringify(meter.externalId)},"registers":[${registers.join(',')}]}]}`));
}
console.log(`data: ${yearPoints} readings of one register in ${YEAR}; ${fleet.registers.length} registers × ${monthPoints} readings in January 2023`);

const browser = await launchChromium();
const chromiumVersion = browser.version();
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
await page.goto(`${base}/console`);
await page.getByTestId('method-pat').click();
await page.getByTestId('token').fill(adminToken);
await page.getByTestId('sign-in').click();
await page.getByTestId('identity').waitFor();

interface Run {
  drawMs: number;
  points: number;
  fetchMs: number;
  bytes: number;
}

/** Loads the readings view fresh and reads the page's own timing of response → first draw. */
async function measure(p: Page, hash: string, expectPoints: number): Promise<Run> {
  await p.goto('about:blank');
  await p.goto(`${base}/console#/readings?${hash}`);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const timing = await p.evaluate(() => (globalThis as any).__flexConsole?.drawTiming as { ms: number; points: number } | undefined);
    if (timing) {
      const resource = await p.evaluate(() => {
        const entries = (globalThis as any).performance.getEntriesByType('resource').filter((e: any) => e.name.includes('/api/readings'));
        const e = entries.at(-1);
        return e ? { fetchMs: e.responseEnd - e.requestStart, bytes: e.encodedBodySize || e.transferSize } : { fetchMs: NaN, bytes: NaN };
      });
      if (timing.points < expectPoints) throw new Error(`the chart holds ${timing.points} points, expected ${expectPoints}`);
      return { drawMs: timing.ms, points: timing.points, ...resource };
    }
    const error = await p.locator('.error').first().textContent({ timeout: 50 }).catch(() => undefined);
    if (error) throw new Error(`the console shows an error: ${error}`);
    if (Date.now() > deadline) throw new Error('no chart within 120 s');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const summarize = (runs: Run[]) => {
  const ms = runs.map((x) => x.drawMs).sort((a, b) => a - b);
  return { medianMs: Math.round(ms[Math.floor(ms.length / 2)]! * 10) / 10, maxMs: Math.round(ms.at(-1)! * 10) / 10, points: runs[0]!.points, fetchMs: Math.round(runs[0]!.fetchMs), responseBytes: runs[0]!.bytes, runs: ms.map((x) => Math.round(x * 10) / 10) };
};

const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
const yearHash = `org=${fleet.organizationId}&r=${first.registers[0]!.id}&from=${YEAR}-01-01&to=${YEAR}-12-31&res=0`;
const monthHash = `org=${fleet.organizationId}&r=${fleet.registers.map((x) => x.id).join(',')}&from=${MONTH.from}&to=${MONTH.to}&res=avg`;
await measure(page, yearHash, yearPoints); // warm-up: compile the page's code once
const yearRuns: Run[] = [];
for (let i = 0; i < RUNS; i += 1) yearRuns.push(await measure(page, yearHash, yearPoints));
const monthRuns: Run[] = [];
for (let i = 0; i < RUNS; i += 1) monthRuns.push(await measure(page, monthHash, 100 * 744));
await browser.close();
await boot.close();

const year = summarize(yearRuns);
const month = summarize(monthRuns);
const js = consoleScriptBytes();
const results = {
  when: new Date().toISOString(),
  loadAverage: load,
  machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, Chromium ${chromiumVersion}`,
  registerYear: { ...year, targetMs: 500, ratio: Math.round((year.medianMs / 500) * 100) / 100 },
  hundredRegisterMonthsHourly: { ...month, targetMs: 1000, ratio: Math.round((month.medianMs / 1000) * 100) / 100 },
  javascript: { ...js, targetGzip: 300 * 1024, ratio: Math.round((js.gzip / (300 * 1024)) * 100) / 100 },
};
const file = writeResults('console', results);
const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`load average at start: ${load}`);
console.log(`| measurement | median | max | target | median / target |`);
console.log(`|---|---|---|---|---|`);
console.log(`| 1 register-year, 15 min (${year.points.toLocaleString('en-US')} points): response → drawn | ${year.medianMs} ms | ${year.maxMs} ms | 500 ms | ${results.registerYear.ratio} |`);
console.log(`| 100 register-months, hourly averages (${month.points.toLocaleString('en-US')} points): response → drawn | ${month.medianMs} ms | ${month.maxMs} ms | 1,000 ms | ${results.hundredRegisterMonthsHourly.ratio} |`);
console.log(`| console JavaScript, gzipped (${js.files.join(', ')}; raw ${kb(js.raw)}, brotli ${kb(js.brotli)}) | ${kb(js.gzip)} | | 300 KiB | ${results.javascript.ratio} |`);
console.log(`(fetch of the year: ${year.fetchMs} ms for ${kb(year.responseBytes)} on the wire; of the 100 months: ${month.fetchMs} ms for ${kb(month.responseBytes)})`);
console.log(`results: ${file}`);
process.exit(0);
