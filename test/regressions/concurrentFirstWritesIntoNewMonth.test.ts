// Regression: 15–30 concurrent POST /api/readings into a month without data
// answered 500 for some (42P07 relation "readings_YYYYMM" already exists, from
// flex_ensure_reading_partitions) and dropped those batches. Now all 30 are stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../support/fixtures.ts';
import { createMeter, createRegister, readingsUrl, series } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let organizationId: number;

beforeAll(async () => {
  t = await startTestApp({ DB_POOL_MAX: '40' });
  organizationId = await createOrganization(t.api, t.adminToken, []);
});
afterAll(() => t?.close());

describe('first writes into a new month', () => {
  it('stores 30 concurrent batches into months without a partition, all 204', async () => {
    const meter = await createMeter(t.api, t.adminToken, [organizationId]);
    const registers = await Promise.all(Array.from({ length: 30 }, () => createRegister(t.api, t.adminToken, meter.id)));
    // Three rounds, each into months no reading has touched yet (every round a new pair of months).
    for (const [round, start] of ['2031-03-31T22:00:00Z', '2032-07-31T23:00:00Z', '2033-11-30T23:30:00Z'].entries()) {
      const values = series(start, 16, 900, (i) => round * 100 + i);
      const statuses = await Promise.all(
        registers.map((r) => t.api.post('/api/readings', { meters: [{ id: meter.externalId, registers: [{ id: r.externalId, values }] }] }, t.adminToken)),
      );
      expect(statuses.map((s) => `${s.status} ${s.status === 204 ? '' : s.text}`.trim())).toEqual(registers.map(() => '204'));
      const end = new Date(Date.parse(start) + 16 * 900_000).toISOString();
      const stored = await t.api.get(readingsUrl(organizationId, registers.map((r) => r.id), start, end), t.adminToken);
      expect(stored.status, stored.text).toBe(200);
      expect(stored.body).toHaveLength(30);
      for (const entry of stored.body) expect(entry.readings.map((x: any) => x.value)).toEqual(values.map((v) => v.value));
    }
  });
});
