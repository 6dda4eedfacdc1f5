// Regression: delivery validation looked for corrected readings in PostgreSQL's `readings`
// table, so with TIMESERIES_BACKEND=questdb it never saw a correction and kept stale figures.
// It now asks the time-series store (changedSince). Runs against a real QuestDB when
// QUESTDB_HTTP_URL and QUESTDB_PG_URL are set; skipped (with the reason) otherwise.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, createMarket, createMeasuredResource, eventually, insertFlexibilityTransaction, postReadings, postReference, quarterHours, type Market } from '../support/productFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const httpUrl = process.env.QUESTDB_HTTP_URL;
const pgUrl = process.env.QUESTDB_PG_URL;
const DAY = 86_400_000;
const D = Math.floor(Date.now() / DAY) * DAY - 2 * DAY;
const at = (hh: number, mm = 0) => new Date(D + hh * 3_600_000 + mm * 60_000).toISOString();

describe.skipIf(!httpUrl || !pgUrl)('delivery validation on QuestDB (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => {
  let t: TestApp;
  let db: pg.Client;
  let market: Market;

  beforeAll(async () => {
    t = await startTestApp({
      LOG_LEVEL: 'error',
      TIMESERIES_BACKEND: 'questdb',
      QUESTDB_HTTP_URL: httpUrl!,
      QUESTDB_PG_URL: pgUrl!,
      VALIDATION_DELAY_MS: '0',
      VALIDATION_INTERVAL_MS: '200',
      VALIDATION_RETRY_MS: '300',
    });
    db = await connect(t);
    // QuestDB keeps readings across runs while every test database numbers registers from 1:
    // start this test's register ids where no other run of it wrote.
    await db.query(`SELECT setval(pg_get_serial_sequence('registers', 'id'), $1)`, [1_000_000 + Math.floor(Math.random() * 1_000_000_000)]);
    market = await createMarket(t, 1);
  });
  afterAll(async () => {
    await db?.end();
    await t?.close();
  });

  it('re-validates a transaction after its actual readings were corrected', async () => {
    const provider = market.providers[0]!;
    const r = await createMeasuredResource(t, provider.organizationId, market.zoneId);
    await postReadings(t.api, t.adminToken, r.meterExternalId, r.actual!.externalId, quarterHours(at(10), [2, 2.5, 3, 1.5]));
    await postReference(t.api, provider.token, provider.organizationId, r.id, quarterHours(at(10), [5, 5, 5, 5]));
    const id = await insertFlexibilityTransaction(db, { market, seller: provider.organizationId, resourceId: r.id, productType: 1, start: at(10), end: at(11), quantity: 12, unitPrice: 2 });
    const figures = async () => (await db.query('SELECT delivery_validation_status AS status, delivered_quantity::text AS delivered FROM flexibility_transactions WHERE id = $1', [id])).rows[0];
    // QuestDB shows writes a moment after they are acknowledged: until then the data is missing and retried.
    expect(await eventually(async () => ((await figures()).delivered === '11' ? figures() : undefined), 20_000, 'validation')).toEqual({ status: 2, delivered: '11' });
    await postReadings(t.api, t.adminToken, r.meterExternalId, r.actual!.externalId, quarterHours(at(10, 15), [0.5]));
    // 20 − 7 = 13 of 12.
    expect(await eventually(async () => ((await figures()).delivered === '13' ? figures() : undefined), 20_000, 're-validation')).toEqual({ status: 2, delivered: '13' });
  });
});
