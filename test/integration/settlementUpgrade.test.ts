// An installation with transactions from before settlement versions migrates: each line becomes
// a version recorded when the migration ran (history starts there: asOf before it is a 400), each
// transaction validated before keeps its figures as an inherited validation version.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { createDatabaseMigratedTo } from '../support/upgrade.ts';

let t: TestApp;
let db: pg.Client;
const ids: Record<string, number> = {};
let before: number;
/** Midnight UTC ten days ahead: the transactions lie in the future, so nothing is due for validation. */
const DAY = 86_400_000;
const BASE = Math.floor(Date.now() / DAY) * DAY + 10 * DAY;
const at = (hours: number) => new Date(BASE + hours * 3_600_000).toISOString();

beforeAll(async () => {
  const url = await createDatabaseMigratedTo('products', 2);
  db = new pg.Client({ connectionString: url });
  await db.connect();
  const one = async (sql: string, params: unknown[] = []) => (await db.query<{ id: number }>(sql, params)).rows[0]!.id;
  const buyer = await one(`INSERT INTO organizations (name, features) VALUES ('buyer', '{Grid,Settlements}') RETURNING id`);
  const seller = await one(`INSERT INTO organizations (name, features) VALUES ('seller', '{Grid,Settlements}') RETURNING id`);
  const zone = await one(`INSERT INTO market_zones (name, time_resolution, order_quantity_resolution, created_by) VALUES ('zone', 1, 0.5, 'test') RETURNING id`);
  const market = await one('INSERT INTO markets (market_zone_id, name) VALUES ($1, $2) RETURNING id', [zone, 'market']);
  const resource = await one(`INSERT INTO grid_resources (organization_id, market_zone_id, name, type, regulation_type, max_quantity, created_by) VALUES ($1, $2, 'r', 1, 3, 100, 'test') RETURNING id`, [seller, zone]);
  const order = await one(
    `INSERT INTO flexibility_orders (organization_id, market_zone_id, market_id, product_type, start, "end", expires_at, unit_price, min_quantity, max_quantity, remaining_quantity, created_by)
     VALUES ($1, $2, $3, 1, $4, $5, $6, 2, 1, 10, 0, 'test') RETURNING id`,
    [buyer, zone, market, at(10), at(11), at(9)],
  );
  ids.buyer = buyer;
  ids.flexibility = await one(
    `INSERT INTO flexibility_transactions (flexibility_order_id, seller_organization_id, buyer_organization_id, seller_created_by, buyer_created_by, resource_id, market_id, market_zone_id,
       product_type, start, "end", quantity, unit_price, delivery_validation_status, validated_at, validation_attempted_at, validation_attempts, delivery_percentage, delivered_quantity, remuneration_percentage)
     VALUES ($1, $2, $3, 's', 'b', $4, $5, $6, 1, $7, $8, 10, 2, 2, $9, $9, 1, 90, 9, 90) RETURNING id`,
    [order, seller, buyer, resource, market, zone, at(10), at(11), '2024-05-01T12:00Z'],
  );
  const availabilityOrder = await one(
    `INSERT INTO availability_orders (organization_id, market_zone_id, market_id, product_type, start, "end", expires_at, quantity, availability_price, clearing_status, created_by)
     VALUES ($1, $2, $3, 3, $4, $5, $6, 5, 3, 2, 'test') RETURNING id`,
    [buyer, zone, market, at(24), at(48), at(0)],
  );
  ids.availability = await one(
    `INSERT INTO availability_transactions (availability_order_id, seller_organization_id, buyer_organization_id, seller_created_by, buyer_created_by, resource_id, market_id, product_type,
       start, "end", quantity, availability_price, activation_price) VALUES ($1, $2, $3, 's', 'b', $4, $5, 3, $6, $7, 5, 3, 1) RETURNING id`,
    [availabilityOrder, seller, buyer, resource, market, at(24), at(48)],
  );
  before = Date.now();
  // The app applies the remaining migrations at start (its validation job finds nothing due: the
  // transactions lie ahead).
  t = await startTestApp({ LOG_LEVEL: 'error', VALIDATION_INTERVAL_MS: '3600000' }, url);
}, 60_000);
afterAll(async () => {
  await db?.end();
  await t?.close();
});

describe('an installation upgraded with transactions', () => {
  const spec = (asOf?: string) =>
    t.api.get(`/api/product/settlement/specification?organizationId=${ids.buyer}&start=${at(0)}&end=${at(72)}${asOf ? `&asOf=${asOf}` : ''}`, t.adminToken);

  it('keeps each line as it stood, from the migration on', async () => {
    const { rows } = await db.query<{ starts: Date }>('SELECT starts_at AS starts FROM settlement_history');
    const starts = rows[0]!.starts.getTime();
    expect(starts).toBeGreaterThanOrEqual(before);
    const now = await spec();
    expect(now.status).toBe(200);
    const summary = now.body.counterParts[0];
    expect(summary.flexibilityBoughtSummary.transactions).toEqual([
      expect.objectContaining({ flexibilityTransactionId: ids.flexibility, deliveryPercentage: 90, totalRemuneration: 18, deliveryValidationStatus: 2, agreementState: 'unanswered' }),
    ]);
    expect(summary.availabilityBoughtSummary.transactions).toEqual([expect.objectContaining({ availabilityTransactionId: ids.availability, deliveryValidationStatus: 1, totalRemuneration: 0 })]);
    const atStart = await spec(new Date(starts).toISOString());
    expect(atStart.text.replace(/"asOf":"[^"]*"/, '')).toBe(now.text.replace(/"asOf":"[^"]*"/, ''));
    const earlier = await spec(new Date(starts - 1).toISOString());
    expect(earlier.status).toBe(400);
    expect(earlier.body.detail).toBe(`Settlement history starts at ${new Date(starts).toISOString()}`);
  });

  it('keeps the figures of a transaction validated before as an inherited validation', async () => {
    const flexibility = await t.api.get(`/api/product/transaction/flexibility/${ids.flexibility}/validations?organizationId=${ids.buyer}`, t.adminToken);
    expect(flexibility.body).toEqual([
      expect.objectContaining({ version: 1, cause: 'inherited', recordedAt: '2024-05-01T12:00:00.000Z', readingsAsOf: null, deliveryValidationStatus: 2, deliveryPercentage: 90, deliveredQuantity: 9, attempts: 1 }),
    ]);
    const availability = await t.api.get(`/api/product/transaction/availability/${ids.availability}/validations?organizationId=${ids.buyer}`, t.adminToken);
    expect(availability.body).toEqual([]);
  });
});
