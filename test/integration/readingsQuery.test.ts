// GET /api/readings and GET /api/readings/average/hourly, checked against values computed in
// the test from the readings it posted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../support/fixtures.ts';
import { batch, createMeter, createMeteredClient, createRegister, readingsUrl, series, type Ref, type Value } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let token: string;
let org: number;
let meter: Ref;
let energy: Ref;
let power: Ref;
let oslo: Ref;
let foreign: Ref;
const energyValues = series('2024-03-01T00:00:00Z', 96 * 3, 900, (i) => (i % 7) + 0.25);
const powerValues = series('2024-03-01T00:00:00Z', 96 * 3, 900, (i) => 100 + (i % 5) * 10);
// Across the Oslo DST change of 2024-03-31 (23-hour local day).
const osloValues = series('2024-03-29T23:00:00Z', 24 * 4, 3600, () => 1);

function expected(values: Value[], bucketMs: (ms: number) => number, aggregate: 'sum' | 'avg') {
  const buckets = new Map<number, number[]>();
  for (const v of values) {
    const b = bucketMs(Date.parse(v.timestamp));
    buckets.set(b, [...(buckets.get(b) ?? []), v.value]);
  }
  return [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([b, vs]) => ({ timestamp: new Date(b).toISOString(), value: aggregate === 'sum' ? vs.reduce((x, y) => x + y, 0) : vs.reduce((x, y) => x + y, 0) / vs.length }));
}

beforeAll(async () => {
  t = await startTestApp({ READINGS_MAX_POINTS: '5000', LOG_LEVEL: 'error' });
  ({ token, organizationId: org, meter, energy, power } = await createMeteredClient(t.api, t.adminToken, ['Meter.Organization.ReadWrite']));
  oslo = await createRegister(t.api, t.adminToken, meter.id, { measurementType: 1, defaultResolution: 3600, timeZone: 'Europe/Oslo' });
  const res = await t.api.post('/api/readings', batch(meter.externalId, { [energy.externalId]: energyValues, [power.externalId]: powerValues, [oslo.externalId]: osloValues }), token);
  expect(res.status).toBe(204);
  const other = await createMeter(t.api, t.adminToken, [await createOrganization(t.api, t.adminToken)]);
  foreign = await createRegister(t.api, t.adminToken, other.id);
});
afterAll(() => t?.close());

const get = (url: string, tok = token) => t.api.get(url, tok);
const hour = (ms: number) => ms - (ms % 3_600_000);

describe('GET /api/readings', () => {
  it('returns readings as stored, per register, in the order asked', async () => {
    const res = await get(readingsUrl(org, [power.id, energy.id], '2024-03-01T00:00:00Z', '2024-03-01T01:00:00Z'));
    expect(res.status).toBe(200);
    expect(res.body.map((r: { registerId: number }) => r.registerId)).toEqual([power.id, energy.id]);
    expect(res.body[1].readings.map((r: { value: number }) => r.value)).toEqual(energyValues.slice(0, 4).map((v) => v.value));
  });

  it('accepts registerId as a comma list', async () => {
    const res = await get(`/api/readings?organizationId=${org}&registerId=${energy.id},${power.id}&start=2024-03-01T00:00:00Z&end=2024-03-01T00:30:00Z`);
    expect(res.body).toHaveLength(2);
  });

  it('sums energy and averages power into hourly buckets aligned to the epoch', async () => {
    const res = await get(readingsUrl(org, [energy.id, power.id], '2024-03-01T00:00:00Z', '2024-03-04T00:00:00Z', 3600));
    const [e, p] = res.body;
    expect(e.readings.map((r: { timestamp: string; value: number }) => ({ timestamp: r.timestamp, value: r.value }))).toEqual(expected(energyValues, hour, 'sum'));
    expect(p.readings.map((r: { timestamp: string; value: number }) => ({ timestamp: r.timestamp, value: r.value }))).toEqual(expected(powerValues, hour, 'avg'));
    expect(e.readings[0]).toMatchObject({ periodTo: '2024-03-01T01:00:00.000Z', resolution: 3600 });
  });

  it('makes day buckets from local midnight in the register’s time zone (23-hour DST day)', async () => {
    const res = await get(readingsUrl(org, [oslo.id], '2024-03-29T00:00:00Z', '2024-04-03T00:00:00Z', 86400));
    const readings = res.body[0].readings;
    // 96 hourly values from local midnight of March 30th: 24 + 23 (DST) + 24 + 24, and one more.
    expect(readings.map((r: { timestamp: string }) => r.timestamp)).toEqual([
      '2024-03-29T23:00:00.000Z',
      '2024-03-30T23:00:00.000Z',
      '2024-03-31T22:00:00.000Z',
      '2024-04-01T22:00:00.000Z',
      '2024-04-02T22:00:00.000Z',
    ]);
    expect(readings.map((r: { value: number }) => r.value)).toEqual([24, 23, 24, 24, 1]);
    expect(readings[1].periodTo).toBe('2024-03-31T22:00:00.000Z');
  });

  it('refuses missing parameters, start ≥ end, unknown registers, too many points', async () => {
    expect((await get(`/api/readings?organizationId=${org}&start=2024-03-01T00:00:00Z&end=2024-03-02T00:00:00Z`)).body.errors).toContainEqual({ path: 'query.registerId', message: 'is required' });
    const backwards = await get(readingsUrl(org, [energy.id], '2024-03-02T00:00:00Z', '2024-03-01T00:00:00Z'));
    expect(backwards.status).toBe(400);
    expect((await get(readingsUrl(org, [energy.id], '2024-03-01T00:00:00+01:00', '2024-03-02T00:00:00Z'))).status).toBe(400);
    const unknown = await get(readingsUrl(org, [energy.id, 999999], '2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z'));
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].path).toBe('query.registerId[1]');
    const tooMany = await get(readingsUrl(org, [energy.id], '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z', 60));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.detail).toContain('5000');
    expect((await get(readingsUrl(org, [energy.id], '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z', 0))).status).toBe(200);
  });

  it('refuses registers of meters not shared with the organization (as unknown ones), and other organizations', async () => {
    expect((await get(readingsUrl(org, [foreign.id], '2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z'))).status).toBe(400);
    expect((await get(readingsUrl(org + 1000, [energy.id], '2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z'))).status).toBe(403);
    const admin = await get(readingsUrl(org, [foreign.id], '2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z'), t.adminToken);
    expect(admin.status).toBe(200);
  });
});

describe('GET /api/readings/average/hourly', () => {
  it('averages every UTC hour whatever the register kind', async () => {
    const res = await get(readingsUrl(org, [energy.id], '2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z').replace('/api/readings?', '/api/readings/average/hourly?'));
    expect(res.status).toBe(200);
    const want = expected(energyValues.filter((v) => v.timestamp < '2024-03-02'), hour, 'avg');
    expect(res.body[0].readings.map((r: { timestamp: string; value: number }) => ({ timestamp: r.timestamp, value: r.value }))).toEqual(want);
    expect(res.body[0].readings[0].resolution).toBe(3600);
  });

  // The store is asked at the same time as the register check here (readingsQuery.ts,
  // averagesBeforeCheck): the refusals must stay those of the check, in the same order.
  it('refuses unknown registers, registers not shared and other organizations as GET /api/readings does', async () => {
    const hourly = (ids: number[], organizationId = org, tok = token) =>
      get(readingsUrl(organizationId, ids, '2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z').replace('/api/readings?', '/api/readings/average/hourly?'), tok);
    const unknown = await hourly([energy.id, 999999]);
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].path).toBe('query.registerId[1]');
    // Unknown and too many points: the unknown register is named, as before.
    const both = await get(readingsUrl(org, [energy.id, 999999], '2023-01-01T00:00:00Z', '2024-01-01T00:00:00Z').replace('/api/readings?', '/api/readings/average/hourly?'));
    expect(both.status).toBe(400);
    expect(both.body.errors[0].path).toBe('query.registerId[1]');
    const tooMany = await get(readingsUrl(org, [energy.id], '2023-01-01T00:00:00Z', '2024-01-01T00:00:00Z').replace('/api/readings?', '/api/readings/average/hourly?'));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.detail).toContain('5000');
    const denied = await hourly([energy.id, foreign.id]);
    expect(denied.status).toBe(400);
    expect(denied.body.errors).toEqual([{ path: 'query.registerId[1]', message: unknown.body.errors[0].message.replace('999999', String(foreign.id)) }]);
    expect(JSON.stringify(denied.body)).not.toContain('readings');
    expect((await hourly([energy.id], org + 1000)).status).toBe(403);
    expect((await hourly([foreign.id], org, t.adminToken)).status).toBe(200);
  });

  it('answers stored and virtual registers together as each alone', async () => {
    const computed = await createRegister(t.api, t.adminToken, meter.id, { isVirtual: true, virtualDefinition: { calculationType: 2, constant: 1 } });
    const hourly = (ids: number[]) => get(readingsUrl(org, ids, '2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z').replace('/api/readings?', '/api/readings/average/hourly?'));
    const together = await hourly([computed.id, energy.id, power.id]);
    expect(together.status).toBe(200);
    expect(together.body.map((s: { registerId: number }) => s.registerId)).toEqual([computed.id, energy.id, power.id]);
    expect(together.body[0].readings.length).toBeGreaterThan(0);
    expect(together.body[1].readings.length).toBe(24);
    // A computed constant's updatedAt is the time it was computed.
    const withoutUpdated = (series: { readings: { updatedAt: string }[] }) => series.readings.map(({ updatedAt: _, ...r }) => r);
    expect(withoutUpdated(together.body[0])).toEqual(withoutUpdated((await hourly([computed.id])).body[0]));
    for (const [i, id] of [energy.id, power.id].entries()) expect(together.body[i + 1]).toEqual((await hourly([id])).body[0]);
  });

  // Each answer's JSON is written into kept memory lent until the server has written it
  // (readingJson.ts seriesJsonById): answers in flight together must not share it, and memory
  // given back must not change an answer already sent. Compressed and not, plain and hourly.
  it('answers many requests in flight at once each as alone', async () => {
    const urls = [energy.id, power.id, oslo.id, [energy.id, power.id]].flatMap((ids) => {
      const url = t.api.baseUrl + readingsUrl(org, [ids].flat(), '2024-03-01T00:00:00Z', '2024-03-04T00:00:00Z');
      return [url, `${url}&resolution=3600`, url.replace('/api/readings?', '/api/readings/average/hourly?')];
    });
    const read = async (url: string, k: number) => {
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, 'accept-encoding': k % 2 ? 'gzip' : 'identity' } });
      expect(res.status).toBe(200);
      return (await res.text()) as string;
    };
    const alone: string[] = [];
    for (const url of urls) alone.push(await read(url, 0));
    for (let round = 0; round < 3; round += 1) {
      const together = await Promise.all([...urls, ...urls].map((url, k) => read(url, k + round)));
      together.forEach((text, k) => expect(text, urls[k % urls.length]).toBe(alone[k % urls.length]));
    }
  });

  // The answer is sent as pieces (register by register) without being joined first.
  it('sends several registers whole, with their length, and HEAD that length without a body', async () => {
    const url = t.api.baseUrl + readingsUrl(org, [energy.id, power.id, oslo.id], '2024-03-01T00:00:00Z', '2024-03-04T00:00:00Z').replace('/api/readings?', '/api/readings/average/hourly?');
    const headers = { authorization: `Bearer ${token}`, 'accept-encoding': 'identity' };
    const got = await fetch(url, { headers });
    const bytes = Buffer.from(await got.arrayBuffer());
    expect(Number(got.headers.get('content-length'))).toBe(bytes.length);
    expect(JSON.parse(bytes.toString()).map((s: { readings: unknown[] }) => s.readings.length)).toEqual([72, 72, 0]);
    const head = await fetch(url, { method: 'HEAD', headers });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBe(bytes.length);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it('needs organizationId, registerId, start and end', async () => {
    const res = await get(`/api/readings/average/hourly?registerId=${energy.id}`);
    expect(res.status).toBe(400);
    const paths = res.body.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['query.organizationId', 'query.start', 'query.end']));
  });
});
