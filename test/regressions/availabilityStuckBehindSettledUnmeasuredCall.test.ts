// Regression: an availability transaction waits for its calls' validations, and a final
// settlement line is never re-validated. A call accepted while its meter data was missing
// (MissingActualData, agreed at 0) therefore held its availability transaction in
// MissingActualData for good: its line counted 0 and the job never looked at it again. Now a call
// settled without a validation counts as delivering nothing, and its availability transaction is
// re-validated when the call's line becomes final.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, createMarket, createMeasuredResource, insertAvailabilityTransaction, insertFlexibilityTransaction, type Market } from '../support/productFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const DAY = 86_400_000;
const D = Math.floor(Date.now() / DAY) * DAY - 2 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();

let t: TestApp;
let db: pg.Client;
let market: Market;

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error', VALIDATION_INTERVAL_MS: '3600000' });
  db = await connect(t);
  market = await createMarket(t, 1);
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

describe('a call settled without meter data', () => {
  it('lets its availability transaction be validated', async () => {
    const seller = market.providers[0]!;
    const resource = await createMeasuredResource(t, seller.organizationId, market.zoneId);
    const availability = await insertAvailabilityTransaction(db, { market, seller: seller.organizationId, resourceId: resource.id, productType: 3, start: iso(D), end: iso(D + DAY), quantity: 10, availabilityPrice: 3 });
    const call = await insertFlexibilityTransaction(db, { market, seller: seller.organizationId, resourceId: resource.id, productType: 1, start: iso(D + 36_000_000), end: iso(D + 39_600_000), quantity: 4, availabilityTransactionId: availability });
    // No readings at all: the call misses its actual data, and so does the availability transaction.
    const validated = await t.api.post('/api/admin/transactions/validate', { availabilityTransactionIds: [availability] }, t.adminToken);
    expect(validated.status).toBe(200);
    expect(validated.body.availabilityTransactions[0]).toMatchObject({ deliveryValidationStatus: 3 });
    // The seller accepts the call as it stands (nothing to be paid): its line is final.
    const accepted = await t.api.post('/api/product/settlement/responses', { organizationId: seller.organizationId, flexibilityTransactionId: call, response: 'accepted' }, seller.token);
    expect(accepted.status, accepted.text).toBe(201);
    const list = await t.api.get(`/api/product/transaction/availability?organizationId=${seller.organizationId}&start=${iso(D)}&end=${iso(D + DAY)}`, seller.token);
    expect(list.body.find((a: { id: number }) => a.id === availability)).toMatchObject({ deliveryValidationStatus: 2, expectedDeliveredQuantity: 4, deliveredQuantity: 0, deliveryPercentage: 0, remunerationPercentage: 0 });
    const history = await t.api.get(`/api/product/transaction/availability/${availability}/validations?organizationId=${seller.organizationId}`, seller.token);
    expect(history.body.map((v: { cause: string; deliveryValidationStatus: number }) => [v.cause, v.deliveryValidationStatus])).toEqual([
      ['administrator', 3],
      ['correction', 2],
    ]);
  });
});
