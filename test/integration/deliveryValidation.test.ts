// Delivery validation against the real server and PostgreSQL: each status, upward and downward,
// posted, zero and baseline references, corrections, availability expectations, the reference
// adjustment, the scheduled job (after end + delay, once with two instances) and the admin call.
// Transactions lie in the past, so they are written straight into the test database (the API
// only creates future ones); readings go through the HTTP API.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connect,
  createMarket,
  createMeasuredResource,
  eventually,
  insertAvailabilityTransaction,
  insertFlexibilityTransaction,
  postReadings,
  postReference,
  quarterHours,
  type Market,
  type MeasuredResource,
} from '../support/productFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let db: pg.Client;
let market: Market;

const DAY = 86_400_000;
/** Midnight UTC two days ago: recent enough for the validation window. */
const D = Math.floor(Date.now() / DAY) * DAY - 2 * DAY;
const at = (hh: number, mm = 0, day = D) => new Date(day + hh * 3_600_000 + mm * 60_000).toISOString();
const UP = 1;
const DOWN = 2;

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error', VALIDATION_DELAY_MS: '0', VALIDATION_INTERVAL_MS: '200', VALIDATION_RETRY_MS: '300' });
  db = await connect(t);
  market = await createMarket(t, 2);
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

const provider = () => market.providers[0]!;

async function actual(resource: MeasuredResource, start: string, values: number[]): Promise<void> {
  await postReadings(t.api, t.adminToken, resource.meterExternalId, resource.actual!.externalId, quarterHours(start, values));
}

async function flex(resource: MeasuredResource, productType: number, quantity: number | string, start = at(10), end = at(11), extra: Record<string, unknown> = {}): Promise<number> {
  return insertFlexibilityTransaction(db, { market, seller: provider().organizationId, resourceId: resource.id, productType, start, end, quantity, unitPrice: 2, ...extra });
}

async function validate(body: Record<string, unknown>) {
  const res = await t.api.post('/api/admin/transactions/validate', body, t.adminToken);
  expect(res.status, res.text).toBe(200);
  return res.body as { flexibilityTransactions: any[]; availabilityTransactions: any[] };
}

const validateFlex = async (id: number) => (await validate({ flexibilityTransactionIds: [id] })).flexibilityTransactions[0];

async function row(id: number) {
  const { rows } = await db.query(
    `SELECT delivery_validation_status AS status, validated_at, validation_attempts, delivered_quantity::text AS delivered, delivery_percentage::text AS pct,
       remuneration_percentage::text AS rem, reference_reading_value::text AS ref, validation_reading_value::text AS act FROM flexibility_transactions WHERE id = $1`,
    [id],
  );
  return rows[0];
}

describe('flexibility transactions', () => {
  let r1: MeasuredResource;
  let first: number;

  it('upward with posted reference readings: validated by the job once the period (plus the delay) is over', async () => {
    r1 = await createMeasuredResource(t, provider().organizationId, market.zoneId);
    await actual(r1, at(10), [2, 2.5, 3, 1.5]); // 9 kWh
    await postReference(t.api, provider().token, provider().organizationId, r1.id, quarterHours(at(10), [5, 5, 5, 5])); // 20 kWh
    first = await flex(r1, UP, 12);
    const done = await eventually(async () => ((await row(first)).status === 2 ? row(first) : undefined), 20_000, 'validation by the job');
    // Upward: delivered = reference − actual = 20 − 9 = 11 of 12 → 91.67 %; paid as delivered (≥ 60 %, ≤ 100 %).
    expect(done).toMatchObject({ ref: '20', act: '9', delivered: '11', pct: '91.67', rem: '91.67' });
    expect(done.validated_at).toBeInstanceOf(Date);
    const seen = await t.api.get(`/api/product/transaction/flexibility?organizationId=${provider().organizationId}&start=${at(0)}&end=${at(24)}`, provider().token);
    expect(seen.body.flexibilityTransactions.find((x: { id: number }) => x.id === first)).toMatchObject({
      deliveryValidationStatus: 2,
      referenceReadingValue: 20,
      validationReadingValue: 9,
      deliveredQuantity: 11,
      referenceAdjustmentQuantity: 0,
      deliveryPercentage: 91.67,
      remunerationPercentage: 91.67,
    });
  });

  it('re-validates after corrected readings, updating the figures', async () => {
    const before = await row(first);
    // The 10:15 reading was 2.5 kWh; corrected to 0.5: actual 7, delivered 13 of 12 → 108.33 %, paid 100 %.
    await actual(r1, at(10, 15), [0.5]);
    const after = await eventually(async () => ((await row(first)).delivered === '13' ? row(first) : undefined), 20_000, 're-validation');
    expect(after).toMatchObject({ status: 2, act: '7', delivered: '13', pct: '108.33', rem: '100' });
    expect(after.validated_at.getTime()).toBeGreaterThan(before.validated_at.getTime());
  });

  it('downward against a zero reference', async () => {
    const r = await createMeasuredResource(t, provider().organizationId, market.zoneId, { reference: 'none', useZeroReference: true, regulationType: 2 });
    await actual(r, at(12), [1, 1.25, 0.75, 1]); // 4 kWh of extra consumption
    const tx = await validateFlex(await flex(r, DOWN, 5, at(12), at(13)));
    // Downward: delivered = actual − reference = 4 − 0 = 4 of 5 → 80 %.
    expect(tx).toMatchObject({ deliveryValidationStatus: 2, referenceReadingValue: 0, validationReadingValue: 4, deliveredQuantity: 4, deliveryPercentage: 80, remunerationPercentage: 80 });
  });

  it('upward against a baseline (virtual register: previous day)', async () => {
    const r = await createMeasuredResource(t, provider().organizationId, market.zoneId, { reference: { baselineAlgorithmType: 2 } });
    await actual(r, at(10, 0, D - DAY), [3, 3, 3, 3]); // the day before: the baseline, 12 kWh
    await actual(r, at(10), [1, 1, 1, 1]); // during the activation: 4 kWh
    const tx = await validateFlex(await flex(r, UP, 8));
    expect(tx).toMatchObject({ deliveryValidationStatus: 2, referenceReadingValue: 12, validationReadingValue: 4, deliveredQuantity: 8, deliveryPercentage: 100, remunerationPercentage: 100 });
  });

  it('missing actual data: its own status, no figures; retried until the data arrives', async () => {
    const r = await createMeasuredResource(t, provider().organizationId, market.zoneId);
    await postReference(t.api, provider().token, provider().organizationId, r.id, quarterHours(at(14), [4, 4, 4, 4]));
    await actual(r, at(14), [1, 1, 1]); // 14:45 missing
    const id = await flex(r, UP, 10, at(14), at(15));
    const missing = await validateFlex(id);
    expect(missing).toMatchObject({ deliveryValidationStatus: 3, deliveredQuantity: null, deliveryPercentage: null, remunerationPercentage: null, validationReadingValue: null, validatedAt: null });
    await actual(r, at(14, 45), [1]);
    const done = await eventually(async () => ((await row(id)).status === 2 ? row(id) : undefined), 20_000, 'retry');
    expect(done).toMatchObject({ ref: '16', act: '4', delivered: '12', pct: '120', rem: '100' });
  });

  it('missing reference data: its own status, the actual energy kept', async () => {
    const r = await createMeasuredResource(t, provider().organizationId, market.zoneId);
    await actual(r, at(16), [1, 1, 1, 1]);
    await postReference(t.api, provider().token, provider().organizationId, r.id, quarterHours(at(16), [4, 4])); // half the period
    const tx = await validateFlex(await flex(r, UP, 4, at(16), at(17)));
    expect(tx).toMatchObject({ deliveryValidationStatus: 4, validationReadingValue: 4, referenceReadingValue: null, deliveredQuantity: null, remunerationPercentage: null });
  });

  it('not measurable without an actual register, or without any reference', async () => {
    const noActual = await createMeasuredResource(t, provider().organizationId, market.zoneId, { withActual: false });
    const noReference = await createMeasuredResource(t, provider().organizationId, market.zoneId, { reference: 'none' });
    await actual(noReference, at(10), [1, 1, 1, 1]);
    const body = await validate({ flexibilityTransactionIds: [await flex(noActual, UP, 1), await flex(noReference, UP, 1)] });
    expect(body.flexibilityTransactions.map((x) => x.deliveryValidationStatus)).toEqual([5, 5]);
  });

  it('adjusts the reference for earlier transactions of the same resource', async () => {
    const r = await createMeasuredResource(t, provider().organizationId, market.zoneId);
    await actual(r, at(18), [1.25, 1.25, 1.25, 1.25]); // 5
    await postReference(t.api, provider().token, provider().organizationId, r.id, quarterHours(at(18), [5, 5, 5, 5])); // 20: a drop of 15
    const earlier = await flex(r, UP, 10, at(18), at(19));
    const later = await flex(r, UP, 5, at(18), at(19));
    const body = await validate({ flexibilityTransactionIds: [earlier, later] });
    const [a, b] = body.flexibilityTransactions;
    // The earlier one is served first (15 of 10, paid 100 %); the later one gets what the earlier did not ask for: 15 − 10 = 5 of 5.
    expect(a).toMatchObject({ id: earlier, referenceAdjustmentQuantity: 0, deliveredQuantity: 15, deliveryPercentage: 150, remunerationPercentage: 100 });
    expect(b).toMatchObject({ id: later, referenceAdjustmentQuantity: 10, deliveredQuantity: 5, deliveryPercentage: 100, remunerationPercentage: 100 });
  });

  it('admin validation: required input, unknown ids, a period, permissions', async () => {
    expect((await t.api.post('/api/admin/transactions/validate', {}, t.adminToken)).status).toBe(400);
    expect((await t.api.post('/api/admin/transactions/validate', { start: at(0) }, t.adminToken)).status).toBe(400);
    expect((await t.api.post('/api/admin/transactions/validate', { start: at(2), end: at(1) }, t.adminToken)).status).toBe(400);
    expect((await t.api.post('/api/admin/transactions/validate', { flexibilityTransactionIds: [first, 99999999] }, t.adminToken)).status).toBe(404);
    expect((await t.api.post('/api/admin/transactions/validate', { flexibilityTransactionIds: [first] }, provider().token)).status).toBe(403);
    const period = await validate({ start: at(10), end: at(10, 15) });
    expect(period.flexibilityTransactions.map((x) => x.id)).toContain(first);
    expect(period.flexibilityTransactions.every((x) => Date.parse(x.start) >= Date.parse(at(10)) && Date.parse(x.start) < Date.parse(at(10, 15)))).toBe(true);
  });
});

describe('availability transactions', () => {
  it('expect the energy called by their flexibility transactions and get its delivered sum', async () => {
    const seller = market.providers[1]!;
    const r = await createMeasuredResource(t, seller.organizationId, market.zoneId);
    const a = await insertAvailabilityTransaction(db, { market, seller: seller.organizationId, resourceId: r.id, productType: 3, start: at(20), end: at(22), quantity: 10, availabilityPrice: 3 });
    await postReference(t.api, seller.token, seller.organizationId, r.id, quarterHours(at(20), Array(8).fill(5)));
    await actual(r, at(20), [3.5, 3.5, 3.5, 3.5, 4.5, 4.5, 4.5, 4.75]);
    const call = (start: string, end: string, quantity: number) =>
      insertFlexibilityTransaction(db, { market, seller: seller.organizationId, resourceId: r.id, productType: UP, start, end, quantity, availabilityTransactionId: a });
    const f1 = await call(at(20), at(21), 6); // 20 − 14 = 6 of 6
    const f2 = await call(at(21), at(22), 4); // 20 − 18.25 = 1.75 of 4 → 43.75 %, paid 0
    const idle = await insertAvailabilityTransaction(db, { market, seller: seller.organizationId, resourceId: r.id, productType: 3, start: at(20), end: at(22), quantity: 5 });
    const body = await validate({ availabilityTransactionIds: [a, idle] });
    expect(body.flexibilityTransactions.map((x) => [x.id, x.deliveredQuantity, x.remunerationPercentage])).toEqual([
      [f1, 6, 100],
      [f2, 1.75, 0],
    ]);
    // Expected 6 + 4 = 10, delivered 6 + 1.75 = 7.75 → 77.5 %. Nothing called: 100 %.
    expect(body.availabilityTransactions).toEqual([
      expect.objectContaining({ id: a, deliveryValidationStatus: 2, expectedDeliveredQuantity: 10, deliveredQuantity: 7.75, deliveryPercentage: 77.5, remunerationPercentage: 77.5 }),
      expect.objectContaining({ id: idle, deliveryValidationStatus: 2, expectedDeliveredQuantity: 0, deliveredQuantity: 0, deliveryPercentage: 100, remunerationPercentage: 100 }),
    ]);
  });

  it('are validated by the job after their calls', async () => {
    const seller = market.providers[1]!;
    const r = await createMeasuredResource(t, seller.organizationId, market.zoneId, { reference: 'none', useZeroReference: true });
    await actual(r, at(8), [1, 1, 1, 1]);
    const a = await insertAvailabilityTransaction(db, { market, seller: seller.organizationId, resourceId: r.id, productType: 4, start: at(8), end: at(9), quantity: 4 });
    await insertFlexibilityTransaction(db, { market, seller: seller.organizationId, resourceId: r.id, productType: DOWN, start: at(8), end: at(9), quantity: 5, availabilityTransactionId: a });
    const done = await eventually(async () => {
      const { rows } = await db.query('SELECT delivery_validation_status AS s, expected_delivered_quantity::text AS e, delivered_quantity::text AS d, remuneration_percentage::text AS r FROM availability_transactions WHERE id = $1', [a]);
      return rows[0].s === 2 ? rows[0] : undefined;
    }, 20_000, 'availability validation');
    expect(done).toEqual({ s: 2, e: '5', d: '4', r: '80' });
  });
});

describe('the scheduled job', () => {
  it('waits for end + VALIDATION_DELAY_MS, and validates each transaction once with two instances', async () => {
    const first = await startTestApp({ LOG_LEVEL: 'error', VALIDATION_DELAY_MS: '3600000', VALIDATION_INTERVAL_MS: '100', VALIDATION_RETRY_MS: '600000' });
    // Same database and administrator token: two instances of one installation.
    const second = await startTestApp({ LOG_LEVEL: 'error', VALIDATION_DELAY_MS: '3600000', VALIDATION_INTERVAL_MS: '100', VALIDATION_RETRY_MS: '600000', ADMIN_TOKEN: first.adminToken }, first.databaseUrl);
    const client = await connect(first);
    try {
      const m = await createMarket(first, 1);
      const r = await createMeasuredResource(first, m.providers[0]!.organizationId, m.zoneId, { reference: 'none', useZeroReference: true });
      // Data first (so that nothing is missing), then 40 transactions that ended 2 h ago and one 10 minutes ago.
      const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
      const old = hour - 3 * 3_600_000;
      await postReadings(first.api, first.adminToken, r.meterExternalId, r.actual!.externalId, quarterHours(old, Array(12).fill(0.25)));
      const recentEnd = Math.floor((Date.now() - 600_000) / 900_000) * 900_000;
      const recent = await insertFlexibilityTransaction(client, { market: m, seller: m.providers[0]!.organizationId, resourceId: r.id, productType: DOWN, start: new Date(recentEnd - 900_000).toISOString(), end: new Date(recentEnd).toISOString(), quantity: 1 });
      const ids: number[] = [];
      for (let i = 0; i < 40; i += 1) {
        const start = old + (i % 4) * 900_000;
        ids.push(await insertFlexibilityTransaction(client, { market: m, seller: m.providers[0]!.organizationId, resourceId: r.id, productType: DOWN, start: new Date(start).toISOString(), end: new Date(start + 900_000).toISOString(), quantity: 0.25 }));
      }
      const attempts = await eventually(async () => {
        const { rows } = await client.query<{ status: number; attempts: number }>('SELECT delivery_validation_status AS status, validation_attempts AS attempts FROM flexibility_transactions WHERE id = ANY($1) ORDER BY id', [ids]);
        return rows.every((x) => x.status === 2) ? rows.map((x) => x.attempts) : undefined;
      }, 30_000, 'both instances to validate');
      expect(attempts).toEqual(Array(40).fill(1));
      const { rows } = await client.query('SELECT delivery_validation_status AS status, validation_attempts AS attempts FROM flexibility_transactions WHERE id = $1', [recent]);
      expect(rows[0]).toEqual({ status: 1, attempts: 0 });
    } finally {
      await client.end();
      await second.close();
      await first.close();
    }
  });
});
