// An installation with flexibility transactions accepted before event periods were recorded
// migrates: each transaction's order period becomes an event period of its resource's actual
// register where the register still has an event day on a local day the period touches; a day an
// administrator took out of the event days stays out (products migration 010).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { createDatabaseMigratedTo } from '../support/upgrade.ts';

let t: TestApp;
let db: pg.Client;
const ids: Record<string, number> = {};

beforeAll(async () => {
  const url = await createDatabaseMigratedTo('products', 9);
  db = new pg.Client({ connectionString: url });
  await db.connect();
  const one = async (sql: string, params: unknown[] = []) => (await db.query<{ id: number }>(sql, params)).rows[0]!.id;
  const buyer = await one(`INSERT INTO organizations (name, features) VALUES ('buyer', '{Grid}') RETURNING id`);
  const seller = await one(`INSERT INTO organizations (name, features) VALUES ('seller', '{Grid}') RETURNING id`);
  const meter = await one(`INSERT INTO meters (external_id, name, type) VALUES ('m-1', 'battery meter', 1) RETURNING id`);
  const register = await one(
    `INSERT INTO registers (meter_id, external_id, name, type, measurement_type, measurement_prefix, default_resolution, update_frequency, time_zone)
     VALUES ($1, 'actual', 'actual', 1, 1, 3, 900, 900, 'Europe/Amsterdam') RETURNING id`,
    [meter],
  );
  const zone = await one(`INSERT INTO market_zones (name, time_resolution, order_quantity_resolution, created_by) VALUES ('zone', 1, 0.5, 'test') RETURNING id`);
  const market = await one('INSERT INTO markets (market_zone_id, name) VALUES ($1, $2) RETURNING id', [zone, 'market']);
  const resource = await one(
    `INSERT INTO grid_resources (organization_id, market_zone_id, name, type, regulation_type, max_quantity, created_by, actual_register_id) VALUES ($1, $2, 'r', 1, 3, 100, 'test', $3) RETURNING id`,
    [seller, zone, register],
  );
  const accepted = async (start: string, end: string): Promise<void> => {
    const order = await one(
      `INSERT INTO flexibility_orders (organization_id, market_zone_id, market_id, product_type, start, "end", expires_at, unit_price, min_quantity, max_quantity, remaining_quantity, created_by)
       VALUES ($1, $2, $3, 1, $4, $5, $4::timestamptz - interval '1 hour', 2, 1, 10, 0, 'test') RETURNING id`,
      [buyer, zone, market, start, end],
    );
    await db.query(
      `INSERT INTO flexibility_transactions (flexibility_order_id, seller_organization_id, buyer_organization_id, seller_created_by, buyer_created_by, resource_id, market_id, market_zone_id,
         product_type, start, "end", quantity, unit_price) VALUES ($1, $2, $3, 's', 'b', $4, $5, $6, 1, $7, $8, 10, 2)`,
      [order, seller, buyer, resource, market, zone, start, end],
    );
  };
  // 23:30–00:30 UTC is 00:30–01:30 in Amsterdam on 15 January: the event day the acceptance
  // recorded is the local day, not the UTC one.
  await accepted('2026-01-14T23:30:00Z', '2026-01-15T00:30:00Z');
  // An administrator took 20 January out of the event days afterwards.
  await accepted('2026-01-20T16:00:00Z', '2026-01-20T18:00:00Z');
  await db.query(`INSERT INTO register_event_days (register_id, day) VALUES ($1, '2026-01-15')`, [register]);
  ids.register = register;
  t = await startTestApp({ LOG_LEVEL: 'error', VALIDATION_INTERVAL_MS: '3600000' }, url);
}, 60_000);
afterAll(async () => {
  await db?.end();
  await t?.close();
});

describe('an installation upgraded with transactions accepted before event periods', () => {
  it('gives each its order period where its local event day is still recorded', async () => {
    const periods = await t.api.get(`/api/admin/registers/${ids.register}/event-periods`, t.adminToken);
    expect(periods.status).toBe(200);
    expect(periods.body).toEqual({ periods: [{ start: '2026-01-14T23:30:00.000Z', end: '2026-01-15T00:30:00.000Z' }] });
    const days = await t.api.get(`/api/admin/registers/${ids.register}/event-days`, t.adminToken);
    expect(days.body).toEqual({ days: ['2026-01-15'] });
  });
});
