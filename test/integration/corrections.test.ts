// The correction scan of delivery validation (src/products/corrections.ts): validated
// transactions of the window, page by page, asked of the time-series store whether their
// readings changed since their figures were computed.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCorrected } from '../../src/products/corrections.ts';
import { connect, createMarket, createMeasuredResource, insertFlexibilityTransaction, type MeasuredResource } from '../support/productFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const Q = 900_000;
const WINDOW = 30 * 86_400_000;
/** More than one page (1,000) of validated transactions, a quarter-hour each, back to back. */
const COUNT = 1_050;
const START = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 14 * 86_400_000;
/** When the figures were computed. */
const SINCE = Date.now() - 3_600_000;

let t: TestApp;
let db: pg.Client;
let resource: MeasuredResource;
const ids: number[] = [];

/** Writes one reading of the actual register for transaction k's quarter hour. */
async function reading(k: number, value: number, updatedAtMs: number): Promise<void> {
  const rows = { registerIds: [resource.actual!.id], offsets: Int32Array.of(0, 1), timestamps: Float64Array.of(START + k * Q), values: Float64Array.of(value), resolutions: Int32Array.of(900) };
  await t.app.timeSeries.write({ rows, updatedAtMs });
}

beforeAll(async () => {
  // The job stays away: it runs hourly, and nothing here is pending.
  t = await startTestApp({ LOG_LEVEL: 'error', VALIDATION_DELAY_MS: String(31 * 86_400_000), VALIDATION_INTERVAL_MS: '3600000' });
  db = await connect(t);
  const market = await createMarket(t, 1);
  resource = await createMeasuredResource(t, market.providers[0]!.organizationId, market.zoneId);
  for (let k = 0; k < COUNT; k += 1) {
    const start = new Date(START + k * Q).toISOString();
    const end = new Date(START + (k + 1) * Q).toISOString();
    ids.push(await insertFlexibilityTransaction(db, { market, seller: market.providers[0]!.organizationId, resourceId: resource.id, productType: 1, start, end, quantity: 1, status: 2 }));
  }
  await db.query('UPDATE flexibility_transactions SET validated_at = now(), readings_updated_at = to_timestamp($2::float8 / 1000) WHERE id = ANY($1::int[])', [ids, SINCE]);
  // Every quarter hour has a reading from before the figures.
  const rows = {
    registerIds: [resource.actual!.id],
    offsets: Int32Array.of(0, COUNT),
    timestamps: Float64Array.from({ length: COUNT }, (_, k) => START + k * Q),
    values: new Float64Array(COUNT).fill(1),
    resolutions: new Int32Array(COUNT).fill(900),
  };
  await t.app.timeSeries.write({ rows, updatedAtMs: SINCE - 60_000 });
}, 120_000);
afterAll(async () => {
  await db?.end();
  await t?.close();
});

describe('the correction scan', () => {
  it('finds nothing when no reading changed since the figures', async () => {
    expect(await findCorrected(t.app.pool, t.app.timeSeries, WINDOW, 10)).toEqual({ ids: [], attempts: [], exhausted: true });
  });

  it('finds a correction on a later page, and only the transaction whose period it is in', async () => {
    await reading(1_020, 2, SINCE + 1);
    expect(await findCorrected(t.app.pool, t.app.timeSeries, WINDOW, 10)).toEqual({ ids: [ids[1_020]], attempts: [0], exhausted: true });
  });

  it('stops at the limit and says the scan is not complete', async () => {
    await reading(3, 2, SINCE + 1);
    await reading(500, 2, SINCE + 1);
    const found = await findCorrected(t.app.pool, t.app.timeSeries, WINDOW, 2);
    expect(found).toEqual({ ids: [ids[3], ids[500]], attempts: [0, 0], exhausted: false });
  });

  it('does not count a reading updated exactly when the figures were computed', async () => {
    await reading(700, 3, SINCE);
    const found = await findCorrected(t.app.pool, t.app.timeSeries, WINDOW, 10);
    expect(found.ids).toEqual([ids[3], ids[500], ids[1_020]]);
  });
});
