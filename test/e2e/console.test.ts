// The analyst console in a real headless Chromium against the real server: sign-in both ways,
// readings charted exactly as the API answers them, hourly averages, zoom, CSV, coverage, the
// demand-response timeline, a dead-lettered notification retried (MQTT delivery state beside it), refusals shown plainly,
// the API reference, and the page of links at / with every link followed.
import fs from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, NO_CHROMIUM, pixelStats } from '../support/browser.ts';
import { readingsUrl } from '../support/meterFixtures.ts';
import { expectStatus, startReceiver, waitFor, type Receiver } from '../support/vtn.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { buildMarket, buildWorld, DAY1, DAY2, MISSING_AT, type ConsoleWorld } from './consoleFixture.ts';

let t: TestApp;
let world: ConsoleWorld;
let browser: Browser;
let receiver: Receiver | undefined;
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
    // Low, so that the sign-in form can be shown a 429.
    RATE_LIMIT_TOKEN_PER_MINUTE: '6',
  });
  world = await buildWorld(t.api, t.adminToken);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await receiver?.close();
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

async function signInWithClient(page: Page, clientId: string, clientSecret: string): Promise<void> {
  await page.goto(`${t.url}/console`);
  await page.getByTestId('method-client').click();
  await page.getByTestId('client-id').fill(clientId);
  await page.getByTestId('client-secret').fill(clientSecret);
  await page.getByTestId('sign-in').click();
}

async function signInWithPat(page: Page, token: string): Promise<void> {
  await page.goto(`${t.url}/console`);
  await page.getByTestId('method-pat').click();
  await page.getByTestId('token').fill(token);
  await page.getByTestId('sign-in').click();
  await page.getByTestId('identity').waitFor();
}

/** Waits until the chart holds data satisfying a condition (polled from the test: the pages'
 * Content-Security-Policy forbids evaluating strings in them, as it should). */
async function waitForChart(page: Page, condition: (c: Awaited<ReturnType<typeof chartData>>) => boolean = () => true): Promise<void> {
  await waitFor('the chart', async () => {
    const present = await page.evaluate(() => Boolean((globalThis as any).__flexConsole?.chart));
    return present && condition(await chartData(page));
  });
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

// A browser page under a loaded machine takes seconds; the default 30 s per test is tight for /docs.
describe.skipIf(NO_CHROMIUM !== undefined)('the console in Chromium', { timeout: 90_000 }, () => {
  it('signs in with a personal access token and plots two registers exactly as the API answers', async () => {
    const page = await newPage();
    await signInWithPat(page, world.adminPat);
    expect(await page.getByTestId('identity').textContent()).toContain(`organization ${world.organizationId}`);
    const ids = [world.registerA.id, world.registerB.id];
    await page.goto(`${t.url}/console#/readings?org=${world.organizationId}&r=${ids.join(',')}&from=${DAY1}&to=${DAY2}&res=0`);
    await page.locator('[data-testid=chart] canvas').waitFor();
    await waitForChart(page, (c) => c.labels.length === 2);
    const chart = await chartData(page);
    const expected = await apiPoints(readingsUrl(world.organizationId, ids, `${DAY1}T00:00:00Z`, '2024-03-06T00:00:00Z', 0), world.adminPat, ids);
    expect(chartPoints(chart)).toEqual(expected);
    expect(expected[0]!.length).toBe(191);
    // The missing reading is a gap (null at the end of the previous reading), not a line across it.
    const gapAt = Date.parse(MISSING_AT) / 1000;
    expect(chart.ys[0]![chart.x.indexOf(gapAt)]).toBeNull();
    await expectNotBlank(page, 'readings');
  });

  it('signs in with client credentials, keeps the token in sessionStorage only, and charts hourly averages', async () => {
    const page = await newPage();
    await signInWithClient(page, world.reader.clientId, world.reader.clientSecret);
    await page.getByTestId('identity').waitFor();
    expect(await page.getByTestId('identity').textContent()).toContain(world.reader.clientId);
    const storage = await page.evaluate(() => {
      const g = globalThis as any;
      return { session: Object.keys(g.sessionStorage), local: Object.keys(g.localStorage), cookie: g.document.cookie };
    });
    expect(storage).toEqual({ session: ['flex.console.session'], local: [], cookie: '' });
    const ids = [world.registerA.id, world.registerB.id];
    // No organization in the URL: a client's own organization.
    await page.goto(`${t.url}/console#/readings?r=${ids.join(',')}&from=${DAY1}&to=${DAY2}`);
    await waitForChart(page, (c) => c.labels.length === 2 && c.x.length > 100);
    const stored = await apiPoints(readingsUrl(world.organizationId, ids, `${DAY1}T00:00:00Z`, '2024-03-06T00:00:00Z', 0), world.reader.token, ids);
    expect(chartPoints(await chartData(page))).toEqual(stored);

    await page.getByTestId('resolution').selectOption('avg');
    await waitForChart(page, (c) => c.x.length === 48);
    const hourlyUrl = readingsUrl(world.organizationId, ids, `${DAY1}T00:00:00Z`, '2024-03-06T00:00:00Z').replace('/api/readings?', '/api/readings/average/hourly?');
    const hourly = await apiPoints(hourlyUrl, world.reader.token, ids);
    expect(hourly[0]!.length).toBe(48);
    expect(chartPoints(await chartData(page))).toEqual(hourly);
  });

  it('zooms by dragging, and the table and the CSV hold exactly what is shown', async () => {
    const page = await newPage();
    await signInWithPat(page, world.adminPat);
    const ids = [world.registerA.id, world.registerB.id];
    await page.goto(`${t.url}/console#/readings?org=${world.organizationId}&r=${ids.join(',')}&from=${DAY1}&to=${DAY2}&res=0`);
    await waitForChart(page, (c) => c.labels.length === 2);
    const box = (await page.locator('.u-over').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.55, box.y + box.height / 2, { steps: 8 });
    await page.mouse.up();
    await waitForChart(page, (c) => c.min > c.x[0]! && c.max < c.x.at(-1)!);
    const chart = await chartData(page);
    const expected = (await apiPoints(readingsUrl(world.organizationId, ids, `${DAY1}T00:00:00Z`, '2024-03-06T00:00:00Z', 0), world.adminPat, ids)).map((points) =>
      points.filter(([x]) => x >= chart.min && x <= chart.max),
    );
    expect(expected[0]!.length).toBeGreaterThan(10);
    expect(expected[0]!.length).toBeLessThan(191);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-csv').click()]);
    const csv = fs.readFileSync((await download.path())!, 'utf8').trimEnd().split('\r\n');
    expect(csv[0]).toBe('timestamp,#' + `${world.registerA.id} ${world.registerA.externalId} (kWh),#${world.registerB.id} ${world.registerB.externalId} (kWh)`);
    const rows = csv.slice(1).map((line) => line.split(','));
    const fromCsv = [1, 2].map((col) => rows.filter((r) => r[col] !== '').map((r) => [Date.parse(r[0]!) / 1000, Number(r[col])]));
    expect(fromCsv).toEqual(expected);

    // Hiding a series (legend click) takes it out of the CSV too.
    await page.locator('.u-legend .u-series').nth(2).click();
    await waitForChart(page, (c) => c.shown.length === 1);
    const [download2] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-csv').click()]);
    const csv2 = fs.readFileSync((await download2.path())!, 'utf8').trimEnd().split('\r\n');
    expect(csv2[0]).toBe(`timestamp,#${world.registerA.id} ${world.registerA.externalId} (kWh)`);
    expect(csv2.length - 1).toBe(expected[0]!.length);

    await page.getByTestId('show-table').click();
    const table = page.getByTestId('readings-table');
    await table.waitFor();
    expect(Number(await table.getAttribute('data-rows'))).toBe(expected[0]!.length);
    expect(await table.locator('tbody tr').first().locator('td').first().textContent()).toBe(new Date(expected[0]![0]![0] * 1000).toISOString());
  });

  it('overlays a virtual register with its sources', async () => {
    const page = await newPage();
    await signInWithPat(page, world.adminPat);
    await page.goto(`${t.url}/console#/readings?org=${world.organizationId}&r=${world.virtualSum.id}&from=${DAY1}&to=${DAY2}&res=3600`);
    await waitForChart(page, (c) => c.labels.length === 1);
    await page.getByTestId(`add-sources-${world.virtualSum.id}`).click();
    await waitForChart(page, (c) => c.labels.length === 3);
    const ids = [world.virtualSum.id, world.registerA.id, world.registerB.id];
    const expected = await apiPoints(readingsUrl(world.organizationId, ids, `${DAY1}T00:00:00Z`, '2024-03-06T00:00:00Z', 3600), world.adminPat, ids);
    expect(expected[0]!.length).toBeGreaterThan(0);
    expect(chartPoints(await chartData(page))).toEqual(expected);
  });

  it('marks the day with a missing reading as partial on the coverage calendar', async () => {
    const page = await newPage();
    await signInWithPat(page, world.adminPat);
    await page.goto(`${t.url}/console#/coverage?org=${world.organizationId}&r=${world.registerA.id},${world.registerB.id}&year=2024`);
    const a = page.getByTestId(`coverage-${world.registerA.id}`);
    const b = page.getByTestId(`coverage-${world.registerB.id}`);
    await b.waitFor();
    expect(await a.locator(`rect[data-day="${DAY1}"]`).getAttribute('data-state')).toBe('complete');
    expect(await a.locator(`rect[data-day="${DAY2}"]`).getAttribute('data-state')).toBe('partial');
    expect(await b.locator(`rect[data-day="${DAY2}"]`).getAttribute('data-state')).toBe('complete');
    expect(await a.locator('rect[data-day="2024-03-06"]').getAttribute('data-state')).toBe('missing');
    expect(await a.locator('rect[data-day]').count()).toBe(366);
    await expectNotBlank(page, 'coverage');
  });

  it('shows an event created through the API on the timeline, with its intervals and payloads', async () => {
    const vtn = (path: string, body: unknown) => expectStatus(t.api.post(`/api/openadr/v1${path}`, body, world.adminPat), 201);
    const program = await vtn('/programs', { programName: 'Evening peak' });
    const today = new Date().toISOString().slice(0, 10);
    const event = await vtn('/events', {
      programID: program.id,
      eventName: 'peak-shave',
      intervalPeriod: { start: `${today}T12:00:00Z`, duration: 'PT2H' },
      intervals: [
        { id: 0, payloads: [{ type: 'PRICE', values: [0.25] }] },
        { id: 1, payloads: [{ type: 'PRICE', values: [0.5] }] },
      ],
    });
    const page = await newPage();
    await signInWithPat(page, world.adminPat);
    await page.goto(`${t.url}/console#/demand-response`);
    const onTimeline = page.locator(`[data-event-id="${event.id}"]`);
    await onTimeline.waitFor();
    expect(await onTimeline.locator('rect[data-interval-id]').count()).toBe(2);
    await onTimeline.locator('rect').first().click();
    const detail = page.getByTestId('event-detail');
    await detail.waitFor();
    expect(await detail.textContent()).toContain('PRICE 0.25');
    expect(await detail.textContent()).toContain(`${today} 14:00:00 UTC`);
    await expectNotBlank(page, 'demand-response');
  });

  it('shows a dead-lettered notification and retries it', async () => {
    let answer = 500;
    receiver = await startReceiver(() => answer);
    const vtn = (path: string, body: unknown) => expectStatus(t.api.post(`/api/openadr/v1${path}`, body, world.adminPat), 201);
    const program = await vtn('/programs', { programName: 'Webhooks' });
    const subscription = await vtn('/subscriptions', { clientName: 'ven-a', programID: program.id, objectOperations: [{ objects: ['EVENT'], operations: ['POST'], callbackUrl: `${receiver.url}/hook` }] });
    await vtn('/events', { programID: program.id, eventName: 'will-fail', intervalPeriod: { start: '2024-06-01T00:00:00Z', duration: 'PT1H' } });
    const [dead] = await waitFor('a dead letter', async () => {
      const rows = await expectStatus(t.api.get(`/api/admin/notifications?subscriptionID=${subscription.id}&state=dead`, world.adminPat), 200);
      return rows.length > 0 ? rows : undefined;
    });

    const page = await newPage();
    await signInWithPat(page, world.adminPat);
    await page.goto(`${t.url}/console#/demand-response`);
    const row = page.locator(`[data-testid=dead-notification][data-notification-id="${dead.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('2 attempts');
    expect(await row.textContent()).toContain('500');
    answer = 200;
    await row.getByTestId('retry').click();
    await row.waitFor({ state: 'detached' });
    await waitFor('delivered', async () => (await t.api.get(`/api/admin/notifications/${dead.id}`, world.adminPat)).body.state === 'delivered' || undefined);
    const states = page.getByTestId('notification-states');
    await waitFor('delivered in the console', async () => (await states.getAttribute('data-delivered')) === '1' || undefined);
    expect(await states.getAttribute('data-dead')).toBe('0');
    expect(receiver.received.at(-1)!.status).toBe(200);
    // MQTT delivery state beside it: the program, subscription and event went to the broker too.
    const mqttStates = page.getByTestId('mqtt-messages');
    await mqttStates.getByRole('button').click();
    await waitFor('MQTT messages published', async () => Number(await mqttStates.getAttribute('data-published')) >= 3 || undefined);
    expect(await mqttStates.getAttribute('data-pending')).toBe('0');
    expect(await mqttStates.locator('[data-state=published]').count()).toBeGreaterThanOrEqual(3);
  });

  it('shows the market: orders, transactions with their validation status, settlement, substation impact', async () => {
    const market = await buildMarket(t.api, t.adminToken);
    const page = await newPage();
    await signInWithClient(page, market.operator.clientId, market.operator.clientSecret);
    await page.getByTestId('identity').waitFor();
    await page.goto(`${t.url}/console#/market`);
    await page.locator(`[data-testid=orders] [data-order-id="${market.orderId}"]`).waitFor();
    const transaction = page.locator(`[data-testid=transactions] [data-transaction-id="${market.transactionId}"]`);
    await transaction.waitFor();
    expect(await transaction.getAttribute('data-validation')).toBe('1');
    expect(await transaction.textContent()).toContain('Pending');
    await page.getByTestId('settlement').waitFor();
    await page.getByTestId('substation-impact').locator('input').fill(String(market.substationId));
    const impact = page.getByTestId('substation-impact').locator('tbody tr').first();
    await impact.waitFor();
    expect(await impact.textContent()).toContain(`#${market.transactionId}`);
    expect(await impact.locator('td').nth(4).textContent()).toBe('3.2'); // 4 kWh × impact 0.8
    expect(await page.locator('.error').count()).toBe(0);
    await expectNotBlank(page, 'market');
  });

  it('says why instead of showing an empty chart: 403, 401 and 429', async () => {
    const page = await newPage();
    await signInWithClient(page, world.outsider.clientId, world.outsider.clientSecret);
    await page.getByTestId('identity').waitFor();
    await page.goto(`${t.url}/console#/readings?r=${world.registerA.id}&from=${DAY1}&to=${DAY2}`);
    const refused = page.locator('.error[data-status="403"]').last();
    await refused.waitFor();
    expect(await refused.textContent()).toContain('Meter.Organization.Read');
    expect(await page.locator('[data-testid=chart]').count()).toBe(0);

    await page.getByTestId('sign-out').click();
    await page.getByTestId('method-pat').click();
    await page.getByTestId('token').fill('flex_pat_not-a-real-token');
    await page.getByTestId('sign-in').click();
    const invalid = page.locator('.error[data-status="401"]');
    await invalid.waitFor();
    expect(await invalid.textContent()).toContain('invalid or has expired');
    expect(await page.evaluate(() => Object.keys((globalThis as any).sessionStorage))).toEqual([]);

    // The token endpoint allows 6 requests per client and minute here.
    await page.getByTestId('method-client').click();
    let limited = false;
    for (let attempt = 0; attempt < 14 && !limited; attempt += 1) {
      await page.getByTestId('client-id').fill(world.outsider.clientId);
      await page.getByTestId('client-secret').fill('wrong secret');
      await page.getByTestId('sign-in').click();
      await page.locator('.error').waitFor();
      limited = (await page.locator('.error').getAttribute('data-status')) === '429';
    }
    expect(limited).toBe(true);
    expect(await page.locator('.error').textContent()).toMatch(/Rate limit reached; try again in \d+ s/);
  });

  it('renders the API reference, where "Authorize" gets a token by client credentials and "Try it out" uses it', async () => {
    const page = await newPage();
    await page.goto(`${t.url}/docs`);
    await page.locator('.opblock-tag').first().waitFor();
    await expectNotBlank(page, 'docs');
    await page.locator('.btn.authorize').first().click();
    await page.locator('#client_id_clientCredentials').fill(world.reader.clientId);
    await page.locator('#client_secret_clientCredentials').fill(world.reader.clientSecret);
    await page.locator('.auth-container').first().locator('button.authorize').click();
    await page.locator('.auth-container').first().getByText('Logout').waitFor();
    await page.locator('.close-modal').click();
    await page.locator('#operations-tag-Authentication').click();
    const me = page.locator('#operations-Authentication-getApiMe');
    await me.locator('.opblock-summary').click();
    await me.locator('.try-out__btn').click();
    await me.locator('.execute').click();
    const status = me.locator('.live-responses-table tr.response .response-col_status');
    await status.waitFor();
    expect((await status.textContent())!.trim()).toBe('200');
    expect(await me.locator('.live-responses-table tr.response .microlight').first().textContent()).toContain(world.reader.clientId);
  });

  it('opens the page of links at /, and every link there opens in the browser without credentials', async () => {
    const page = await newPage();
    await page.goto(`${t.url}/`);
    await page.getByRole('heading', { name: 'Flex' }).waitFor();
    expect(await page.textContent('body')).toContain('METRICS_TOKEN');
    const links = await page.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')!));
    expect(links).toEqual(['/console', '/docs', '/api/openapi.json', '/health']);
    for (const link of links) {
      await page.goto(`${t.url}/`);
      const [response] = await Promise.all([page.waitForNavigation(), page.locator(`a[href="${link}"]`).click()]);
      expect([link, response?.status()]).toEqual([link, 200]);
    }
  });

  it('loaded nothing from anywhere but this server, and no page threw', () => {
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
