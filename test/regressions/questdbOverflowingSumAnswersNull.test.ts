// Regression: an hourly sum past the largest double (readings near 1e308) answered
// `"value": null` on QuestDB (its sum is NaN) and on PostgreSQL (Infinity, written as JSON.stringify
// does), which the published response schema does not allow (`value` is a number). Both backends
// now refuse the read with the same 422 naming the register and the bucket; stored readings
// near the limit still read back as posted.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createOrgClient } from '../support/fixtures.ts';
import { batch, createMeter, createRegister, readingsUrl, series } from '../support/meterFixtures.ts';
import { startTestApp } from '../support/testApp.ts';

const questdbHttp = process.env.QUESTDB_HTTP_URL;
const questdbPg = process.env.QUESTDB_PG_URL;
const tables: string[] = [];

afterAll(async () => {
  if (tables.length === 0) return;
  const client = new pg.Client({ connectionString: questdbPg });
  await client.connect();
  for (const table of tables) for (const name of [table, `${table}_versions`]) await client.query(`DROP TABLE IF EXISTS ${name}`).catch(() => undefined);
  await client.end();
});

function overflow(backend: 'postgres' | 'questdb') {
  it(`${backend}: an hourly sum past the largest double`, async () => {
    const env: Record<string, string> = {};
    if (backend === 'questdb') {
      const table = `regr_${process.pid}_${randomBytes(4).toString('hex')}`;
      tables.push(table);
      Object.assign(env, { TIMESERIES_BACKEND: 'questdb', QUESTDB_HTTP_URL: questdbHttp!, QUESTDB_PG_URL: questdbPg!, QUESTDB_TABLE: table });
    }
    const t = await startTestApp(env);
    try {
      const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite', 'Meter.Organization.Read'] });
      const meter = await createMeter(t.api, t.adminToken, [client.organizationId]);
      const energy = await createRegister(t.api, t.adminToken, meter.id, { measurementType: 1 });
      const values = series('2024-06-01T00:00:00Z', 8, 900, (i) => (i < 4 ? 1e308 : i));
      expect((await t.api.post('/api/readings', batch(meter.externalId, { [energy.externalId]: values }), client.token)).status).toBe(204);
      const org = client.organizationId;
      const hourly = readingsUrl(org, [energy.id], '2024-06-01T00:00:00Z', '2024-06-01T02:00:00Z', 3600);
      for (const url of [hourly, hourly.replace('/api/readings?', '/api/readings/average/hourly?').replace('&resolution=3600', '')]) {
        const res = await t.api.get(url, client.token);
        expect(res.status, res.text).toBe(422);
        expect(res.body.detail).toBe(`The value of register ${energy.id} for the period from 2024-06-01T00:00:00.000Z is beyond ±1.7976931348623157e308, the largest number a reading can carry; ask for a smaller resolution`);
      }
      // The next hour alone sums fine, and the readings as stored read back as posted.
      const next = await t.api.get(readingsUrl(org, [energy.id], '2024-06-01T01:00:00Z', '2024-06-01T02:00:00Z', 3600), client.token);
      expect(next.body[0].readings.map((r: { value: number }) => r.value)).toEqual([4 + 5 + 6 + 7]);
      const stored = await t.api.get(readingsUrl(org, [energy.id], '2024-06-01T00:00:00Z', '2024-06-01T01:00:00Z'), client.token);
      expect(stored.body[0].readings.map((r: { value: number }) => r.value)).toEqual([1e308, 1e308, 1e308, 1e308]);
    } finally {
      await t.close();
    }
  }, 60_000);
}

describe('an overflowing sum', () => {
  overflow('postgres');
  describe.skipIf(!questdbHttp || !questdbPg)('QuestDB (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => overflow('questdb'));
});
