// Regression: on QuestDB the 204 of POST /api/readings came 200–470 ms before the readings could
// be read (QuestDB applies its WAL asynchronously): a client that posted and then read saw
// nothing. The store now waits until the batch is applied before it answers. Runs against a real
// QuestDB when QUESTDB_HTTP_URL and QUESTDB_PG_URL are set; skipped (with the reason) otherwise.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createOrgClient } from '../support/fixtures.ts';
import { batch, createMeter, createRegister, readingsUrl, series } from '../support/meterFixtures.ts';
import { startTestApp } from '../support/testApp.ts';

const httpUrl = process.env.QUESTDB_HTTP_URL;
const pgUrl = process.env.QUESTDB_PG_URL;
const table = `regression_ryw_${process.pid}_${randomBytes(3).toString('hex')}`;

afterAll(async () => {
  if (!httpUrl || !pgUrl) return;
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  for (const name of [table, `${table}_versions`]) await client.query(`DROP TABLE IF EXISTS ${name}`);
  await client.end();
});

describe.skipIf(!httpUrl || !pgUrl)('reading right after a POST on QuestDB (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => {
  it('sees the whole batch in the first GET after the 204', async () => {
    const t = await startTestApp({ TIMESERIES_BACKEND: 'questdb', QUESTDB_HTTP_URL: httpUrl!, QUESTDB_PG_URL: pgUrl!, QUESTDB_TABLE: table, RATE_LIMIT_READINGS_PER_SECOND: '100' });
    try {
      const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite', 'Meter.Organization.Read'] });
      const meter = await createMeter(t.api, t.adminToken, [client.organizationId]);
      const registers = await Promise.all(Array.from({ length: 10 }, () => createRegister(t.api, t.adminToken, meter.id)));
      for (let round = 0; round < 3; round += 1) {
        const start = new Date(Date.UTC(2030, round, 1)).toISOString();
        const values = series(start, 2_000, 900, (i) => i + round);
        const res = await t.api.post('/api/readings', batch(meter.externalId, Object.fromEntries(registers.map((r) => [r.externalId, values]))), client.token);
        expect(res.status).toBe(204);
        const read = await t.api.get(readingsUrl(client.organizationId, registers.map((r) => r.id), start, new Date(Date.UTC(2030, round + 1, 1)).toISOString()), client.token);
        expect(read.status).toBe(200);
        expect(read.body.map((s: { readings: unknown[] }) => s.readings.length)).toEqual(registers.map(() => 2_000));
      }
    } finally {
      await t.close();
    }
  }, 120_000);
});
