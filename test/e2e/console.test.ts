// The analyst console in a real headless Chromium against the real server: sign-in both ways,
// readings charted exactly as the API answers them, hourly averages, zoom, CSV, coverage, the
// demand-response timeline, a dead-lettered notification retried, and refusals shown plainly.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, NO_CHROMIUM, pixelStats } from '../support/browser.ts';
import { readingsUrl } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { buildWorld, DAY1, DAY2, MISSING_AT, type ConsoleWorld } from './consoleFixture.ts';

let t: TestApp;
let world: ConsoleWorld;
let browser: Browser;
const contexts: BrowserContext[] = [];
/** Requests the pages made to anywhere but the server under test (must stay empty: offline). */
const foreignRequests: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  if (NO_CHROMIUM) return;
  t = await startTestApp({
    VTN_WEBHOOK_ALLOW_PRIVATE: 'true',
    VTN_DISPATCH_POLL_MS: '50',
    VTN_WEBHOOK_BACKOFF_BASE_MS: '10',
    VTN_WEBHOOK_BACKOFF_CAP_MS: '50',
    VTN_WEBHOOK_MAX_ATTEMPTS: '2',
    VTN_WEBHOOK_TIMEOUT_MS: '1000',
  });
  world = await buildWorld(t.api, t.adminToken);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await t?.close();
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on('request', (req) => {
    if (!req.url().startsWith(t.url) && !req.url().startsWith('data:') && !req.url().startsWith('blob:')) foreignRequests.push(req.url());
  });
  page.on('pageerror', (err) => pageErrors.push(err.message));
  return page;
}

async function signInWithPat(page: Page, token: string): Promise<void> {
  await page.goto(`${t.url}/console`);
  await page.getByTestId('method-pat').click();
  await page.getByTestId('token').fill(token);
  await page.getByTestId('sign-in').click();
  await page.getByTestId('identity').waitFor();
}

/** What the chart holds, read from the console's debug hook. */
async function chartData(page: Page): Promise<{ x: number[]; ys: (number | null | undefined)[][]; labels: string[]; min: number; max: number; shown: number[] }> {
  return page.evaluate(() => {
    const c = (globalThis as any).__flexConsole.chart;
    // undefined does not survive JSON: encode it
    return { ...c, ys: c.ys.map((y: unknown[]) => Array.from(y, (v) => (v === undefined ? '__undefined' : v))) };
  }).then((c: any) => ({ ...c, ys: c.ys.map((y: unknown[]) => y.map((v) => (v === '__undefined' ? undefined : v))) }));
}

/** The API's readings as (seconds, value) pairs per register. */
async function apiPoints(path: string, token: string, ids: number[]): Promise<[number, number][][]> {
  const res = await t.api.get(path, token);
  expect(res.status).toBe(200);
  return ids.map((id) => (res.body.find((r: any) => r.registerId === id)?.readings ?? []).map((r: any) => [Date.parse(r.timestamp) / 1000, r.value]));
}

/** The chart's points per series, without gap markers and alignment holes. */
function chartPoints(chart: { x: number[]; ys: (number | null | undefined)[][] }): [number, number][][] {
  return chart.ys.map((y) => y.flatMap((v, i) => (typeof v === 'number' ? [[chart.x[i]!, v] as [number, number]] : [])));
}

async function expectNotBlank(page: Page, name: string): Promise<void> {
  const png = await page.screenshot({ fullPage: true, path: process.env.CONSOLE_SCREENSHOTS ? `${process.env.CONSOLE_SCREENSHOTS}/${name}.png` : undefined });
  const stats = await pixelStats(page, png);
  expect(stats.colours, `${name}: distinct colours`).toBeGreaterThan(20);
  expect(stats.inked, `${name}: share of non-white pixels`).toBeGreaterThan(0.02);
}

describe.skipIf(NO_CHROMIUM !== undefined)('the console in Chromium', () => {
  it('signs in with a personal access token and plots two registers exactly as the API answers', async () => {
    const page = await newPage();
    await signInWithPat(page, world.adminPat);
    expect(await page.getByTestId('identity').textContent()).toContain(`organization ${world.organizationId}`);
    const ids = [world.registerA.id, world.registerB.id];
    await page.goto(`${t.url}/console#/readings?org=${world.organizationId}&r=${ids.join(',')}&from=${DAY1}&to=${DAY2}&res=0`);
    await page.locator('[data-testid=chart] canvas').waitFor();
    const chart = await chartData(page);
    const expected = await apiPoints(readingsUrl(world.organizationId, ids, `${DAY1}T00:00:00Z`, '2024-03-06T00:00:00Z', 0), world.adminPat, ids);
    expect(chartPoints(chart)).toEqual(expected);
    expect(expected[0]!.length).toBe(191);
    // The missing reading is a gap (null at the end of the previous reading), not a line across it.
    const gapAt = Date.parse(MISSING_AT) / 1000;
    expect(chart.ys[0]![chart.x.indexOf(gapAt)]).toBeNull();
    await expectNotBlank(page, 'readings');
  });
});
