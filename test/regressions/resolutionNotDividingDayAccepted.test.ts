// Regression: GET /api/readings accepted resolution=3601 and answered buckets
// aligned to the epoch at times like 23:02:59. A bucket length must divide a day evenly or be a
// whole number of days; anything else is a 400 naming the rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolutionError } from '../../src/meter/readingsQuery.ts';
import { batch, createMeteredClient, readingsUrl, series, type Ref } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let token: string;
let org: number;
let register: Ref;

beforeAll(async () => {
  t = await startTestApp();
  const metered = await createMeteredClient(t.api, t.adminToken, ['Meter.Organization.ReadWrite']);
  ({ token, organizationId: org, energy: register } = metered);
  const res = await t.api.post('/api/readings', batch(metered.meter.externalId, { [register.externalId]: series('2024-05-01T00:00:00Z', 96 * 3, 900, () => 1) }), token);
  expect(res.status).toBe(204);
});
afterAll(() => t?.close());

describe('bucket lengths', () => {
  it('refuses one that does not divide a day, with the rule in the message', async () => {
    for (const resolution of [3601, 7, 7000, 90000]) {
      const res = await t.api.get(readingsUrl(org, [register.id], '2024-05-01T00:00:00Z', '2024-05-03T00:00:00Z', resolution), token);
      expect(res.status, String(resolution)).toBe(400);
      expect(res.body.detail).toContain('does not divide a day (86400 s) evenly');
      expect(res.body.errors).toEqual([{ path: 'query.resolution', message: expect.any(String) }]);
    }
  });

  it('accepts divisors of a day and whole days, every bucket starting on the grid', async () => {
    for (const resolution of [900, 5400, 86400, 172800]) {
      const res = await t.api.get(readingsUrl(org, [register.id], '2024-05-01T00:00:00Z', '2024-05-04T00:00:00Z', resolution), token);
      expect(res.status, String(resolution)).toBe(200);
      for (const r of res.body[0].readings) expect((Date.parse(r.timestamp) / 1000) % resolution).toBe(0);
    }
  });

  it('has one rule for the API and the export', () => {
    expect(resolutionError(0)).toBeUndefined();
    expect(resolutionError(3600)).toBeUndefined();
    expect(resolutionError(31 * 86400)).toBeUndefined();
    expect(resolutionError(3601)).toMatch(/3601/);
  });
});
