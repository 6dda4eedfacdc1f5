// Virtual registers read over HTTP: expression, constant, running total with a daily restart,
// and a baseline, checked against values computed in the test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient } from '../support/fixtures.ts';
import { batch, createMeter, createRegister, readingsUrl, series } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let token: string;
let org: number;
let meterId: number;
let a: { id: number };
let b: { id: number };
const aValues = series('2024-05-01T00:00:00Z', 96 * 2, 900, (i) => i + 1);
const bValues = series('2024-05-01T00:00:00Z', 96 * 2, 900, (i) => 2 * (i % 4));

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error' });
  const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
  token = client.token;
  org = client.organizationId;
  const meter = await createMeter(t.api, t.adminToken, [org]);
  meterId = meter.id;
  const ra = await createRegister(t.api, t.adminToken, meter.id);
  const rb = await createRegister(t.api, t.adminToken, meter.id);
  a = ra;
  b = rb;
  expect((await t.api.post('/api/readings', batch(meter.externalId, { [ra.externalId]: aValues, [rb.externalId]: bValues }), token)).status).toBe(204);
});
afterAll(() => t?.close());

const values = async (registerId: number, start: string, end: string, resolution?: number) => {
  const res = await t.api.get(readingsUrl(org, [registerId], start, end, resolution), token);
  expect(res.status).toBe(200);
  return res.body[0].readings as { timestamp: string; value: number; resolution: number; periodTo: string }[];
};

describe('virtual registers', () => {
  it('evaluates an expression per interval (r0 - 0.5 * r1)', async () => {
    const v = await createRegister(t.api, t.adminToken, meterId, { isVirtual: true, virtualDefinition: { calculationType: 1, expression: 'r0 - 0.5 * r1', sourceRegisters: [a.id, b.id] } });
    const got = await values(v.id, '2024-05-01T00:00:00Z', '2024-05-01T02:00:00Z');
    expect(got.map((r) => r.value)).toEqual(aValues.slice(0, 8).map((x, i) => x.value - 0.5 * bValues[i]!.value));
    expect(got[0]).toMatchObject({ timestamp: '2024-05-01T00:00:00.000Z', periodTo: '2024-05-01T00:15:00.000Z', resolution: 900 });
    // Hourly buckets of an energy register: sums of the computed intervals.
    const hourly = await values(v.id, '2024-05-01T00:00:00Z', '2024-05-01T02:00:00Z', 3600);
    const computed = aValues.slice(0, 8).map((x, i) => x.value - 0.5 * bValues[i]!.value);
    expect(hourly.map((r) => r.value)).toEqual([computed.slice(0, 4).reduce((x, y) => x + y), computed.slice(4, 8).reduce((x, y) => x + y)]);
  });

  it('returns a constant in every interval', async () => {
    const v = await createRegister(t.api, t.adminToken, meterId, { isVirtual: true, defaultResolution: 3600, virtualDefinition: { calculationType: 2, constant: 2.5 } });
    const got = await values(v.id, '2024-05-01T00:00:00Z', '2024-05-01T03:00:00Z');
    expect(got.map((r) => [r.timestamp, r.value])).toEqual([
      ['2024-05-01T00:00:00.000Z', 2.5],
      ['2024-05-01T01:00:00.000Z', 2.5],
      ['2024-05-01T02:00:00.000Z', 2.5],
    ]);
  });

  it('keeps a running total that restarts each day at 06:00 UTC', async () => {
    const v = await createRegister(t.api, t.adminToken, meterId, {
      isVirtual: true,
      virtualDefinition: { calculationType: 1, expression: 'r0', sourceRegisters: [a.id], sumPreviousValues: true, timeOfDay: '06:00:00', timeZone: 'UTC' },
    });
    // From 05:30: the total includes everything since the 06:00 restart of the day before (none: data starts at 00:00 today).
    const got = await values(v.id, '2024-05-01T05:30:00Z', '2024-05-01T06:30:00Z');
    const before = aValues.slice(0, 22).reduce((s, x) => s + x.value, 0); // 00:00 … 05:15
    expect(got.map((r) => r.value)).toEqual([before + aValues[22]!.value, before + aValues[22]!.value + aValues[23]!.value, aValues[24]!.value, aValues[24]!.value + aValues[25]!.value]);
  });

  it('computes a previous-day baseline of a source register', async () => {
    const v = await createRegister(t.api, t.adminToken, meterId, { isVirtual: true, virtualDefinition: { calculationType: 3, baselineAlgorithmType: 2, sourceRegisters: [a.id] } });
    const got = await values(v.id, '2024-05-02T00:00:00Z', '2024-05-02T01:00:00Z');
    expect(got.map((r) => r.value)).toEqual(aValues.slice(0, 4).map((x) => x.value));
    // No previous day for May 1st: missing, not zero.
    expect(await values(v.id, '2024-05-01T00:00:00Z', '2024-05-01T01:00:00Z')).toEqual([]);
  });
});
