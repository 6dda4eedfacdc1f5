// Regression: bucket sums and averages showed binary float noise
// (0.1 + 0.2 → 0.30000000000000004, 89.14799999999998) in GET /api/readings and in CSV exports.
// Computed values are rounded to 12 significant digits; readings as stored stay as posted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportPages } from '../../src/cli/exportReadings.ts';
import { registersForRead } from '../../src/meter/meterStore.ts';
import { roundComputed } from '../../src/store/timeseries/readingJson.ts';
import { batch, createMeteredClient, readingsUrl, type Ref } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let token: string;
let org: number;
let energy: Ref;
const values = [0.1, 0.2, 29.716, 29.716, 29.716, 0.1234567890123456];

beforeAll(async () => {
  t = await startTestApp();
  const metered = await createMeteredClient(t.api, t.adminToken, ['Meter.Organization.ReadWrite']);
  ({ token, organizationId: org, energy } = metered);
  const readings = values.map((value, i) => ({ timestamp: new Date(Date.parse('2024-06-01T00:00:00Z') + i * 900_000).toISOString(), value, resolution: 900 }));
  expect((await t.api.post('/api/readings', batch(metered.meter.externalId, { [energy.externalId]: readings }), token)).status).toBe(204);
});
afterAll(() => t?.close());

describe('computed values', () => {
  it('the noise exists without rounding', () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(roundComputed(0.1 + 0.2)).toBe(0.3);
    expect(roundComputed(89.14799999999998)).toBe(89.148);
    expect(roundComputed(29.716 + 0.1234567890123456)).toBe(29.839456789);
  });

  it('GET /api/readings: sums and averages are exact-looking, stored readings exact', async () => {
    const sums = await t.api.get(readingsUrl(org, [energy.id], '2024-06-01T00:00:00Z', '2024-06-01T02:00:00Z', 1800), token);
    expect(sums.status).toBe(200);
    expect(sums.body[0].readings.map((r: { value: number }) => r.value)).toEqual([0.3, 59.432, 29.839456789]);
    expect(sums.text).not.toMatch(/\d{14,}/);
    const hourly = await t.api.get(`/api/readings/average/hourly?organizationId=${org}&registerId=${energy.id}&start=2024-06-01T00:00:00Z&end=2024-06-01T01:00:00Z`, token);
    expect(hourly.body[0].readings[0].value).toBe(14.933);
    const stored = await t.api.get(readingsUrl(org, [energy.id], '2024-06-01T00:00:00Z', '2024-06-01T02:00:00Z'), token);
    expect(stored.body[0].readings.map((r: { value: number }) => r.value)).toEqual(values);
  });

  it('CSV export: the same rounded values', async () => {
    const registers = await registersForRead(t.app.pool, [energy.id]);
    let csv = '';
    for await (const page of exportPages(t.app.timeSeries, { registers, start: Date.parse('2024-06-01T00:00:00Z'), end: Date.parse('2024-06-01T02:00:00Z'), resolution: 3600 })) csv += page;
    expect(csv.trimEnd().split('\n').slice(1).map((line) => Number(line.split(',')[4]))).toEqual([59.732, 29.839456789]);
  });
});
