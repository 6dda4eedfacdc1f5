// What baselines take through the admin API besides readings: event periods (on the source
// register) and holidays (on the baseline register), checked for bad input, and used by a PJM
// Customer Baseline read over HTTP: the weekday example of docs/virtual-registers.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient, type OrgClient } from '../support/fixtures.ts';
import { batch, createMeter, createRegister, readingsUrl, type Ref, type Value } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let c: OrgClient;
let source: Ref;
let pjm: Ref;
const NY = 'America/New_York';
const HOUR = 3_600_000;

/** Weekday levels of the example (from 13:00; every day reads 50 before 13:00, the 17th 80). */
const LEVEL: Record<string, number> = {
  '2024-07-01': 100, '2024-07-02': 115, '2024-07-03': 85, '2024-07-04': 33, '2024-07-05': 80, '2024-07-08': 95, '2024-07-09': 105,
  '2024-07-10': 500, '2024-07-11': 90, '2024-07-12': 110, '2024-07-15': 20, '2024-07-16': 100, '2024-07-17': 60,
};

/** Hourly readings, New York (EDT, UTC−4 all summer), 1 May – 31 July 2024. */
function readings(): Value[] {
  const out: Value[] = [];
  for (let t0 = Date.parse('2024-05-01T04:00:00Z'); t0 < Date.parse('2024-08-01T04:00:00Z'); t0 += HOUR) {
    const local = new Date(t0 - 4 * HOUR);
    const day = local.toISOString().slice(0, 10);
    const weekend = local.getUTCDay() === 0 || local.getUTCDay() === 6;
    const hour = local.getUTCHours();
    const value = hour < 13 ? (day === '2024-07-17' ? 80 : 50) : (LEVEL[day] ?? (weekend ? 30 : 100));
    out.push({ timestamp: new Date(t0).toISOString(), value, resolution: 3600 });
  }
  return out;
}

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error' });
  c = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
  const meter = await createMeter(t.api, t.adminToken, [c.organizationId]);
  source = await createRegister(t.api, t.adminToken, meter.id, { timeZone: NY, defaultResolution: 3600 });
  pjm = await createRegister(t.api, t.adminToken, meter.id, { timeZone: NY, defaultResolution: 3600, isVirtual: true, virtualDefinition: { calculationType: 3, baselineAlgorithmType: 9, sourceRegisters: [source.id] } });
  const posted = await t.api.post('/api/readings', batch(meter.externalId, { [source.externalId]: readings() }), c.token);
  expect(posted.status, posted.text).toBe(204);
});
afterAll(() => t?.close());

const read = async (start: string, end: string) => {
  const res = await t.api.get<{ readings: { timestamp: string; value: number }[] }[]>(readingsUrl(c.organizationId, [pjm.id], start, end), c.token);
  expect(res.status, res.text).toBe(200);
  return res.body[0]!.readings.map((r) => [r.timestamp, r.value]);
};

describe('event periods', () => {
  const url = () => `/api/admin/registers/${source.id}/event-periods`;

  it('are refused when they end before they start, last over 31 days or are not instants', async () => {
    for (const periods of [
      [{ start: '2024-07-17T18:00:00Z', end: '2024-07-17T18:00:00Z' }],
      [{ start: '2024-07-17T18:00:00Z', end: '2024-08-18T18:00:01Z' }],
      [{ start: 'yesterday', end: '2024-07-17T18:00:00Z' }],
      [{ start: '2024-07-17T18:00:00Z' }],
    ]) {
      const res = await t.api.put(url(), { periods }, t.adminToken);
      expect(res.status, JSON.stringify(periods)).toBe(400);
    }
    expect((await t.api.put('/api/admin/registers/999999/event-periods', { periods: [] }, t.adminToken)).status).toBe(404);
    expect((await t.api.get(url(), t.adminToken)).body).toEqual({ periods: [] });
  });

  it('are replaced as a whole and come back in order', async () => {
    const periods = [
      { start: '2024-07-17T18:00:00.000Z', end: '2024-07-17T21:00:00.000Z' },
      { start: '2024-06-03T12:00:00.000Z', end: '2024-06-03T13:00:00.000Z' },
    ];
    const put = await t.api.put(url(), { periods }, t.adminToken);
    expect(put.status, put.text).toBe(200);
    expect(put.body).toEqual({ periods: [periods[1], periods[0]] });
    expect((await t.api.put(url(), { periods: [periods[0]] }, t.adminToken)).body).toEqual({ periods: [periods[0]] });
  });
});

describe('holidays', () => {
  it('are kept per baseline register', async () => {
    const url = `/api/admin/registers/${pjm.id}/holidays`;
    expect((await t.api.put(url, { days: ['2024-13-01'] }, t.adminToken)).status).toBe(400);
    const put = await t.api.put(url, { days: ['2024-07-04', '2024-05-27'] }, t.adminToken);
    expect(put.status, put.text).toBe(200);
    expect((await t.api.get(url, t.adminToken)).body).toEqual({ days: ['2024-05-27', '2024-07-04'] });
  });
});

describe('a PJM Customer Baseline read over HTTP', () => {
  it('compares and adjusts the event day over its event period, whatever range is asked', async () => {
    expect((await t.api.put(`/api/admin/registers/${source.id}/event-days`, { days: ['2024-07-10'] }, t.adminToken)).status).toBe(200);
    expect((await t.api.put(`/api/admin/registers/${source.id}/event-periods`, { periods: [{ start: '2024-07-17T18:00:00Z', end: '2024-07-17T21:00:00Z' }] }, t.adminToken)).status).toBe(200);
    expect((await t.api.put(`/api/admin/registers/${pjm.id}/holidays`, { days: ['2024-07-04'] }, t.adminToken)).status).toBe(200);
    // 16, 12, 11, 9, 8 July (15 July is a low-usage day) → 102.5; +30 from the 10:00–13:00 window → 132.5.
    const event = await read('2024-07-17T18:00:00Z', '2024-07-17T21:00:00Z');
    expect(event).toEqual([
      ['2024-07-17T18:00:00.000Z', 132.5],
      ['2024-07-17T19:00:00.000Z', 132.5],
      ['2024-07-17T20:00:00.000Z', 132.5],
    ]);
    const week = await read('2024-07-14T04:00:00Z', '2024-07-21T04:00:00Z');
    expect(week.filter(([ts]) => (ts as string) >= '2024-07-17T18:00:00.000Z' && (ts as string) < '2024-07-17T21:00:00.000Z')).toEqual(event);
  });
});
