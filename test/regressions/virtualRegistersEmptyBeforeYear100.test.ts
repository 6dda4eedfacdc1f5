// Regression: the virtual-register engine turned a zone's wall clock back into an
// instant with Date.UTC, which reads years 0–99 as 1900–1999, so before year 100 every local-day
// computation was off by some 1900 years: an expression register answered no day buckets where
// its source had them, and a previous-day baseline nothing at all. Stored readings were right.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient, type OrgClient } from '../support/fixtures.ts';
import { batch, createMeter, createRegister, readingsUrl, series } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let c: OrgClient;
beforeAll(async () => {
  t = await startTestApp();
  c = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
});
afterAll(() => t?.close());

type Series = { registerId: number; readings: { timestamp: string; value: number }[] }[];

describe.each(['0050', '2050'])('virtual registers in year %s', (year) => {
  it('compute day buckets and baselines like in any other year', async () => {
    const meter = await createMeter(t.api, t.adminToken, [c.organizationId]);
    const zone = { timeZone: 'Europe/Oslo' };
    const source = await createRegister(t.api, t.adminToken, meter.id, zone);
    const doubled = await createRegister(t.api, t.adminToken, meter.id, { ...zone, isVirtual: true, virtualDefinition: { calculationType: 1, expression: 'r0 * 2', sourceRegisters: [source.id], sumPreviousValues: false } });
    const previousDay = await createRegister(t.api, t.adminToken, meter.id, { ...zone, isVirtual: true, virtualDefinition: { calculationType: 3, baselineAlgorithmType: 2, sourceRegisters: [source.id], sumPreviousValues: false } });
    expect((await t.api.post('/api/readings', batch(meter.externalId, { [source.externalId]: series(`${year}-06-01T00:00:00Z`, 288, 900, (i) => i % 96) }), c.token)).status).toBe(204);
    const get = async (id: number, resolution: number) => {
      const res = await t.api.get<Series>(readingsUrl(c.organizationId, [id], `${year}-06-01T00:00:00Z`, `${year}-06-04T00:00:00Z`, resolution), c.token);
      expect(res.status, res.text).toBe(200);
      return res.body[0]!.readings;
    };
    const days = await get(source.id, 86400);
    expect(days.length).toBeGreaterThan(2);
    expect(await get(doubled.id, 86400)).toEqual(days.map((d) => ({ ...d, value: d.value * 2 })));
    // The source repeats every 24 hours, so its previous-day baseline equals it wherever the day
    // before has data: from the second local day on.
    const stored = new Map((await get(source.id, 0)).map((r) => [r.timestamp, r.value]));
    const baseline = await get(previousDay.id, 0);
    expect(baseline.length).toBeGreaterThan(96);
    for (const r of baseline) expect(r.value, r.timestamp).toBe(stored.get(r.timestamp));
  });
});
