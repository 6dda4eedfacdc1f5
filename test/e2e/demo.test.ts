// `npm run demo` as a newcomer meets it: `src/main.ts --demo` as its own process on an empty
// DATA_DIR seeds the sample world through the API and prints how to sign in; every console view
// then has data (checked through the API with the printed token, then in headless Chromium, with
// screenshots); the demo step of a second start finds the same world. The seeding code imports
// nothing of the server but the code tables, so it uses only what users use.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startDemo } from '../../src/cli/demo/demo.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, NO_CHROMIUM, pixelStats } from '../support/browser.ts';
import { startFlexProcess, type FlexProcess } from '../support/flexProcess.ts';
import { Api, createTestDatabase } from '../support/testApp.ts';
import { expectStatus, waitFor } from '../support/vtn.ts';

const DAY = 86_400_000;
const SIGN_IN = /Sign in at (\S+)\/console with the personal access token of "Demo analyst":\n\n\s+(flex_pat_\S+)\n\n\s+then open\n\s+Readings\s+\S+?(\/console\S+)\n\s+Coverage\s+\S+?(\/console\S+)\n\s+Demand response\s+\S+?(\/console\S+)\n\s+Market\s+\S+?(\/console\S+)\n\s+Battery's loop\s+\S+?(\/console\S+)\n\s+Every id, client id and secret of the demo: (\S+)\n/;

let dataDir: string;
let databaseUrl: string;
let flex: FlexProcess;
let api: Api;
let token: string;
let links: { readings: string; coverage: string; demandResponse: string; market: string; loop: string };
let world: any;


beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-demo-'));
  databaseUrl = await createTestDatabase();
  flex = await startFlexProcess({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir }, 120_000, ['--demo']);
  await flex.waitForOutput(SIGN_IN, 120_000);
  const m = SIGN_IN.exec(flex.output())!;
  api = new Api(flex.baseUrl);
  token = m[2]!;
  links = { readings: m[3]!, coverage: m[4]!, demandResponse: m[5]!, market: m[6]!, loop: m[7]! };
  world = JSON.parse(fs.readFileSync(m[8]!, 'utf8')).world;
}, 180_000);

afterAll(async () => {
  flex?.child.kill('SIGTERM');
  await flex?.exited;
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const get = (p: string) => expectStatus(api.get(p, token), 200);
const query = (link: string) => new URLSearchParams(link.split('?')[1]);

describe('npm run demo on an empty DATA_DIR', () => {
  it('seeds through the API and prints how to sign in, keeping the world in DATA_DIR/demo.json (0600)', () => {
    expect(flex.output()).toMatch(/Demo data seeded in [\d.]+ s: 3 organizations, \d+ registers with [\d,]+ readings/);
    expect(fs.statSync(path.join(dataDir, 'demo.json')).mode & 0o777).toBe(0o600);
    expect(world.readings).toBeGreaterThan(30 * 35_000);
    expect(world.market.validated).toBe(world.market.flexibilityTransactions + world.market.availabilityTransactions);
  });

  it('has readings behind the readings view: the pool and its baseline around a delivery', async () => {
    const q = query(links.readings);
    const ids = q.get('r')!.split(',').map(Number);
    const end = new Date(Date.parse(`${q.get('to')}T00:00:00Z`) + DAY).toISOString();
    const body = await get(`/api/readings?organizationId=${q.get('org')}&registerId=${ids.join(',')}&start=${q.get('from')}T00:00:00Z&end=${end}&resolution=0`);
    for (const id of ids) expect(body.find((r: any) => r.registerId === id).readings.length, `register ${id}`).toBe(3 * 96);
  });

  it('has a year behind the coverage view, with the days a meter was silent', async () => {
    const q = query(links.coverage);
    const [home, pool] = q.get('r')!.split(',').map(Number);
    const year = Number(q.get('year'));
    const days = async (id: number) => {
      const body = await get(`/api/readings?organizationId=${q.get('org')}&registerId=${id}&start=${year}-01-01T00:00:00Z&end=${year + 1}-01-01T00:00:00Z&resolution=86400`);
      return body[0].readings.length as number;
    };
    const [homeDays, poolDays] = [await days(home!), await days(pool!)];
    expect(poolDays).toBeGreaterThan(100);
    // The home's meter was silent for a whole local day the pool's meter has.
    expect(poolDays - homeDays).toBeGreaterThan(0);
  });

  it('has programs, events, VENs with resources and a subscription with delivered notifications behind the demand-response view', async () => {
    const vtn = '/api/openadr/v1';
    expect((await get(`${vtn}/programs`)).map((p: any) => p.programName)).toEqual(['evening-peak', 'day-ahead-price', 'NL North']);
    const now = Date.now();
    const events = await get(`${vtn}/events?x-start=${new Date(now - 3 * DAY).toISOString()}&x-end=${new Date(now + 7 * DAY).toISOString()}`);
    expect(events.length).toBeGreaterThan(3);
    const vens = await get(`${vtn}/vens`);
    expect(vens.map((v: any) => [v.venName, v.resources.length])).toEqual([
      ['ven-heat-pumps', 8],
      ['ven-battery', 1],
    ]);
    expect((await get(`${vtn}/subscriptions`)).length).toBe(3);
    const organizationId = world.organizations.polder.id;
    await waitFor('delivered notifications', async () => ((await get(`/api/admin/notifications?organizationId=${organizationId}&state=delivered`)).length >= events.length ? true : undefined), 30_000);
    await waitFor('published MQTT messages', async () => ((await get(`/api/admin/mqtt-messages?organizationId=${organizationId}&state=published`)).length > 0 ? true : undefined), 30_000);
  });

  it('has orders, validated transactions and a settlement behind the market view', async () => {
    const org = query(links.market).get('org');
    const today = Math.floor(Date.now() / DAY) * DAY;
    const period = `organizationId=${org}&start=${new Date(today - 30 * DAY).toISOString()}&end=${new Date(today + 31 * DAY).toISOString()}`;
    const orders = await get(`/api/product/order/flexibility?${period}`);
    expect(orders.length).toBeGreaterThan(10);
    expect(orders.some((o: any) => o.remainingQuantity > 0)).toBe(true);
    const flexibility = (await get(`/api/product/transaction/flexibility?${period}`)).flexibilityTransactions;
    const availability = await get(`/api/product/transaction/availability?${period}`);
    expect(flexibility.length).toBeGreaterThan(10);
    expect(availability.length).toBe(2);
    expect([...flexibility, ...availability].every((t: any) => t.deliveryValidationStatus === 2)).toBe(true);
    const spec = await get(`/api/product/settlement/specification?organizationId=${org}&start=${world.market.start}&end=${world.market.end}`);
    const bought = spec.counterParts.reduce((s: number, c: any) => s + c.flexibilityBoughtSummary.totalRemunerationSum + c.availabilityBoughtSummary.totalRemunerationSum, 0);
    expect(bought).toBeGreaterThan(100);
    expect(spec.counterParts.length).toBe(2);
  });

  it('has the battery’s whole loop: bound, its transactions dispatched as events, its usage reported by the VEN, validated', async () => {
    const org = query(links.loop).get('org');
    const resources = await get(`/api/grid/resource?organizationId=${org}`);
    const battery = resources.find((r: any) => r.id === world.resources.battery);
    expect(battery.binding).toEqual({ venID: world.loop.venID, resourceID: world.loop.venResourceID });
    const period = `organizationId=${org}&start=${world.market.start}&end=${world.market.end}`;
    const mine = (await get(`/api/product/transaction/flexibility?${period}`)).flexibilityTransactions.filter((t: any) => t.resourceId === battery.id);
    expect(mine.length).toBe(world.loop.transactions);
    expect(mine.length).toBeGreaterThan(3);
    for (const t of mine) {
      expect(t.dispatch.state).toBe('sent');
      const event = await get(`/api/openadr/v1/events/${t.dispatch.eventID}`);
      expect(event.eventName).toBe(t.transactionCorrelationId);
      expect(event.intervals[0].payloads[0].type).toBe('DISPATCH_SETPOINT_RELATIVE');
      expect(t.deliveryValidationStatus).toBe(2);
      // Measured from what the VEN reported (the meter sent nothing for those intervals).
      expect(t.validationInputs.actual.source).toBe('ven');
    }
    for (const id of world.loop.reports) expect((await get(`/api/openadr/v1/reports/${id}/processing`)).state).toBe('stored');
    // Settled: the provider accepted its lines but one, disputed and resolved by the operator.
    const spec = await get(`/api/product/settlement/specification?${period}`);
    const lines = spec.counterParts.flatMap((c: any) => c.flexibilitySoldSummary.transactions).filter((l: any) => l.resourceId === battery.id);
    expect(lines.map((l: any) => l.agreementState).sort()).toEqual([...Array(world.loop.accepted).fill('accepted'), 'resolved']);
  });

  it('seeds with code that imports nothing of the server but its code tables', () => {
    const dir = 'src/cli/demo';
    for (const file of fs.readdirSync(dir)) {
      const imports = [...fs.readFileSync(path.join(dir, file), 'utf8').matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]!);
      const outside = imports.filter((i) => !i.startsWith('./') && !i.startsWith('node:') && i !== '../../codes.ts' && i !== '../../auth/catalogue.ts');
      expect(outside, file).toEqual([]);
    }
  });
});

describe.skipIf(NO_CHROMIUM !== undefined)('the demo in Chromium', { timeout: 90_000 }, () => {
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(`${flex.baseUrl}/console`);
    await page.getByTestId('method-pat').click();
    await page.getByTestId('token').fill(token);
    await page.getByTestId('sign-in').click();
    await page.getByTestId('identity').waitFor();
  }, 60_000);
  afterAll(() => browser?.close());

  async function screenshot(name: string): Promise<void> {
    const dir = process.env.CONSOLE_SCREENSHOTS;
    const png = await page.screenshot({ fullPage: true, path: dir ? `${dir}/demo-${name}.png` : undefined });
    const stats = await pixelStats(page, png);
    expect(stats.colours, `${name}: distinct colours`).toBeGreaterThan(20);
    expect(stats.inked, `${name}: share of non-white pixels`).toBeGreaterThan(0.02);
  }

  it('charts the heat pump pool against its baseline', async () => {
    await page.goto(`${flex.baseUrl}${links.readings}`);
    await waitFor('two series on the chart', () => page.evaluate(() => ((globalThis as any).__flexConsole?.chart?.labels.length === 2 ? true : undefined)), 30_000);
    const points = await page.evaluate(() => (globalThis as any).__flexConsole.chart.ys.map((y: unknown[]) => y.filter((v) => typeof v === 'number').length));
    expect(points).toEqual([288, 288]);
    await screenshot('readings');
  });

  it('shows a year of coverage with complete and missing days', async () => {
    await page.goto(`${flex.baseUrl}${links.coverage}`);
    const [home] = query(links.coverage).get('r')!.split(',');
    const calendar = page.getByTestId(`coverage-${home}`);
    await calendar.waitFor({ timeout: 60_000 });
    expect(await calendar.locator('rect[data-state=complete]').count()).toBeGreaterThan(100);
    expect(await calendar.locator('rect[data-state=missing]').count()).toBeGreaterThan(0);
    await screenshot('coverage');
  });

  it('shows the VTN: events on the timeline, VENs, subscriptions with delivered notifications', async () => {
    await page.goto(`${flex.baseUrl}${links.demandResponse}`);
    await page.getByTestId('timeline-event').first().waitFor();
    expect(await page.getByTestId('timeline-event').count()).toBeGreaterThan(3);
    expect(await page.locator('[data-testid=vens] tbody tr').count()).toBe(2);
    await waitFor('delivered notifications', async () => (Number(await page.getByTestId('notification-states').getAttribute('data-delivered')) > 0 ? true : await page.getByRole('button', { name: 'Refresh delivery states' }).click().then(() => undefined)), 30_000);
    await screenshot('demand-response');
  });

  it('shows the market: orders, validated transactions, settlement', async () => {
    await page.goto(`${flex.baseUrl}${links.market}`);
    await page.locator('[data-testid=transactions] tbody tr').first().waitFor();
    expect(await page.locator('[data-testid=orders] tbody tr').count()).toBeGreaterThan(10);
    expect(await page.locator('[data-testid=transactions] tbody tr[data-validation="2"]').count()).toBeGreaterThan(10);
    await page.getByTestId('settlement').waitFor({ timeout: 30_000 });
    const nets = await page.locator('[data-testid=settlement] tbody tr td:last-child').allTextContents();
    expect(nets.some((n) => Number(n.replace(/,/g, '')) !== 0)).toBe(true);
    await screenshot('market');
  });

  it('follows the battery’s loop from the market view to its event in the demand-response view', async () => {
    await page.goto(`${flex.baseUrl}${links.loop}`);
    const link = page.getByTestId('dispatch-event').first();
    await link.waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-testid=transactions] [data-dispatch=sent]').count()).toBe(world.loop.transactions);
    await page.locator('[data-testid=transactions] [data-agreement=resolved]').first().waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-testid=transactions] [data-agreement=accepted]').count()).toBe(world.loop.accepted);
    await link.click();
    await page.getByTestId('event-detail').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('event-detail').textContent()).toMatch(/DISPATCH_SETPOINT_RELATIVE/);
    expect(await page.getByTestId('event-targets').textContent()).toContain('battery-zeeburg');
    await screenshot('loop-event');
  });
});

describe('npm run demo again on the same DATA_DIR', () => {
  // The second start's demo step, run here against the same server and DATA_DIR (a second
  // process would only add its start-up): the world is found, not seeded, and since the running
  // demo still holds the VENs' receiver port, the subscriptions follow the new receiver.
  it('shows the same world without seeding again, its VENs reachable where the receiver now listens', async () => {
    const { venReceiverPort } = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8'));
    let printed = '';
    const again = await startDemo({ baseUrl: flex.baseUrl, dataDir, adminToken: undefined, write: (text) => (printed += text) });
    try {
      expect(printed).not.toContain('Seeding');
      expect(printed).toContain(`Demo data from ${world.seededAt.slice(0, 10)}`);
      expect(SIGN_IN.exec(printed)![2]).toBe(token);
      expect((await get('/api/admin/organizations')).length).toBe(3);
      const moved = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8')).venReceiverPort;
      expect(moved).not.toBe(venReceiverPort);
      const callbacks = (await get('/api/openadr/v1/subscriptions')).flatMap((sub: any) => sub.objectOperations.map((o: any) => new URL(o.callbackUrl).port));
      expect(callbacks).toEqual([String(moved), String(moved), String(moved)]);
    } finally {
      await again.stop();
    }
  });
});
