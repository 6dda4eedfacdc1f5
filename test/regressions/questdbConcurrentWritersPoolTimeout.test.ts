// Regression: on QuestDB, many POST /api/readings sent at once into the same register-days
// answered 500 for some. Each writer holds a platform database connection from its journal entry
// until its batch is applied, and waits meanwhile for the older batches of the same readings
// (journal order); with more writers than the pool has connections, those still asking for one
// gave up after the pool's 10 s ("timeout exceeded when trying to connect") whenever the batches
// ahead took that long (a loaded machine, or QuestDB away for a while, as here: its HTTP port
// refuses connections for 11 s while the writers arrive). Writers now take a journal session in
// turn (half the pool at most, waiting without a limit), so every batch is stored, the last
// journaled winning, each replaced value kept. Runs against a real QuestDB when QUESTDB_HTTP_URL
// and QUESTDB_PG_URL are set; skipped (with the reason) otherwise.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../support/fixtures.ts';
import { createMeter, createRegister, readingsUrl } from '../support/meterFixtures.ts';
import { tcpRelay } from '../support/tcpRelay.ts';
import { startTestApp } from '../support/testApp.ts';

const httpUrl = process.env.QUESTDB_HTTP_URL;
const pgUrl = process.env.QUESTDB_PG_URL;
const table = `regression_writers_${process.pid}`;
const Q = 900_000;
const DAY = 86_400_000;

afterAll(async () => {
  if (!pgUrl) return;
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  for (const name of [table, `${table}_versions`]) await client.query(`DROP TABLE IF EXISTS ${name}`).catch(() => undefined);
  await client.end();
});

describe.skipIf(!httpUrl || !pgUrl)('many writers at once into the same register-days on QuestDB (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => {
  it('stores every batch (all 204), the last journaled winning, each replaced value kept', async () => {
    const relay = await tcpRelay(new URL(httpUrl!), 9000);
    const t = await startTestApp({ TIMESERIES_BACKEND: 'questdb', QUESTDB_HTTP_URL: relay.url, QUESTDB_PG_URL: pgUrl!, QUESTDB_TABLE: table, DB_POOL_MAX: '4' });
    try {
      const organizationId = await createOrganization(t.api, t.adminToken, []);
      const meter = await createMeter(t.api, t.adminToken, [organizationId]);
      const registers = await Promise.all(Array.from({ length: 10 }, () => createRegister(t.api, t.adminToken, meter.id)));
      const start = Date.UTC(2031, 4, 1);
      const writers = 20;
      // QuestDB's HTTP port refuses connections from now until 11 s after the first batch is
      // journaled: the batches behind it wait that long.
      relay.cut(60_000);
      const platform = new pg.Client({ connectionString: t.databaseUrl });
      await platform.connect();
      const journaled = (async () => {
        while (Number((await platform.query('SELECT count(*) AS n FROM timeseries_pending_batches')).rows[0].n) === 0) await new Promise((r) => setTimeout(r, 20));
        relay.cut(11_000);
        await platform.end();
      })();
      // Writer w: every quarter hour of the same two days of all ten registers, values w × 1000 + i.
      const posts = await Promise.all(
        Array.from({ length: writers }, (_, w) =>
          t.api.post(
            '/api/readings',
            {
              meters: [
                {
                  id: meter.externalId,
                  registers: registers.map((r) => ({ id: r.externalId, values: Array.from({ length: 192 }, (_, i) => ({ timestamp: new Date(start + i * Q).toISOString(), value: w * 1000 + i, resolution: 900 })) })),
                },
              ],
            },
            t.adminToken,
          ),
        ),
      );
      await journaled;
      expect(posts.map((p) => `${p.status} ${p.status === 204 ? '' : p.text}`.trim())).toEqual(posts.map(() => '204'));
      const stored = await t.api.get(readingsUrl(organizationId, registers.map((r) => r.id), new Date(start).toISOString(), new Date(start + 2 * DAY).toISOString()), t.adminToken);
      expect(stored.status).toBe(200);
      // One writer's batch is the current value of every reading.
      const winners = new Set<number>();
      for (const entry of stored.body as { readings: { value: number }[] }[]) {
        expect(entry.readings.map((r) => r.value % 1000)).toEqual(Array.from({ length: 192 }, (_, i) => i));
        for (const r of entry.readings) winners.add(Math.floor(r.value / 1000));
      }
      expect(winners.size).toBe(1);
      // Every other writer's value of each reading was kept as a superseded version.
      const questdb = new pg.Client({ connectionString: pgUrl });
      await questdb.connect();
      const { rows } = await questdb.query(`SELECT count() AS n, count_distinct(cast(value AS long) / 1000) AS batches FROM ${table}_versions`);
      await questdb.end();
      expect([Number(rows[0].n), Number(rows[0].batches)]).toEqual([10 * 192 * (writers - 1), writers - 1]);
    } finally {
      await t.close();
      relay.close();
    }
  }, 120_000);
});
