// Data for the products benchmark (bench/settlement.ts): a market, 100,000 validated
// transactions in a month (bulk SQL, each with its settlement line versions), measured resources with a month of 15-minute readings
// (binary COPY through the time-series store) and pending transactions to validate.
import { performance } from 'node:perf_hooks';
import type { App } from '../../src/app.ts';
import type { Pool } from '../../src/store/database.ts';
import { call, clientToken } from './bootApp.ts';

export const DAY = 86_400_000;
const Q = 900_000;

export interface BenchMarket {
  buyer: { organizationId: number; token: string };
  providers: number[];
  zoneId: number;
  marketId: number;
}

export async function createBenchMarket(base: string, adminToken: string, providers: number): Promise<BenchMarket> {
  const buyer = await clientToken(base, adminToken, ['Grid', 'Settlements'], ['Order.Organization.Read']);
  const list: number[] = [];
  for (let i = 0; i < providers; i += 1) list.push((await call(base, 'POST', '/api/admin/organizations', adminToken, { name: `provider-${i}-${Date.now()}`, features: ['Grid', 'Settlements'] })).id);
  const zone = await call(base, 'POST', '/api/admin/zones', adminToken, { name: `bench-zone-${Date.now()}`, timeResolution: 1, orderQuantityResolution: 0.001, organizationIds: [buyer.organizationId, ...list] });
  return { buyer, providers: list, zoneId: zone.id, marketId: zone.markets[0].marketId };
}

/**
 * `transactions` transactions bought by the market's buyer in the month from `monthStart`
 * (31 days): 80 % flexibility (15 minutes), 20 % availability (1 hour), over `resources`
 * resources of the providers; three-decimal quantities and prices. Created pending, then
 * validated (delivery from 40 % to 129 %, remuneration by the documented rule): two settlement
 * line versions each, as the platform writes them.
 */
export async function seedSettlement(pool: Pool, m: BenchMarket, transactions: number, resources: number, monthStart: number): Promise<{ flexibility: number; availability: number; seconds: number }> {
  const t0 = performance.now();
  const { rows } = await pool.query<{ id: number; org: number }>(
    `INSERT INTO grid_resources (organization_id, market_zone_id, name, type, regulation_type, max_quantity, created_by)
     SELECT ($1::int[])[1 + g % $2], $3, 'bench ' || g, 1, 3, 100, 'bench' FROM generate_series(0, $4 - 1) g RETURNING id, organization_id AS org`,
    [m.providers, m.providers.length, m.zoneId, resources],
  );
  const resourceIds = rows.map((r) => r.id);
  const resourceOrgs = rows.map((r) => r.org);
  const flexibility = Math.round(transactions * 0.8);
  const availability = transactions - flexibility;
  // One order per day of each kind (the transactions need one to refer to).
  for (const [table, extra] of [
    ['flexibility_orders', `unit_price, min_quantity, max_quantity, remaining_quantity, created_by) SELECT $1::int, $2::int, $3::int, 1`],
    ['availability_orders', `quantity, availability_price, clearing_status, created_by) SELECT $1::int, $2::int, $3::int, 3`],
  ] as const) {
    await pool.query(
      `INSERT INTO ${table} (organization_id, market_zone_id, market_id, product_type, start, "end", expires_at, ${extra},
         $4::timestamptz + g * interval '1 day', $4::timestamptz + (g + 1) * interval '1 day', $4::timestamptz + g * interval '1 day' - interval '1 hour',
         ${table === 'flexibility_orders' ? "1, 1, 1000000, 0, 'bench'" : "1000000, 1, 2, 'bench'"} FROM generate_series(0, 30) g`,
      [m.buyer.organizationId, m.zoneId, m.marketId, new Date(monthStart)],
    );
  }
  const common = [m.buyer.organizationId, m.marketId, resourceIds, resources, resourceOrgs, new Date(monthStart)];
  await pool.query(
    `INSERT INTO flexibility_transactions (flexibility_order_id, seller_organization_id, buyer_organization_id, seller_created_by, buyer_created_by, resource_id, market_id,
       market_zone_id, product_type, start, "end", quantity, unit_price)
     SELECT o.id, x.seller, $1::int, 'bench', 'bench', x.resource, $2::int, o.market_zone_id, 1, x.start, x.start + interval '15 minutes', x.q, 0.5 + (x.g % 997) / 1000.0
     FROM (SELECT g, ($3::int[])[1 + g % $4] AS resource, ($5::int[])[1 + g % $4] AS seller, $6::timestamptz + (g % 2976) * interval '15 minutes' AS start,
             1 + (g % 9973) / 1000.0 AS q FROM generate_series(1, $7) g) x
     JOIN flexibility_orders o ON o.organization_id = $1 AND o.start = date_trunc('day', x.start, 'UTC')`,
    [...common, flexibility],
  );
  await pool.query(
    `INSERT INTO availability_transactions (availability_order_id, seller_organization_id, buyer_organization_id, seller_created_by, buyer_created_by, resource_id, market_id,
       product_type, start, "end", quantity, availability_price, activation_price)
     SELECT o.id, x.seller, $1::int, 'bench', 'bench', x.resource, $2::int, 3, x.start, x.start + interval '1 hour', x.q, 0.25 + (x.g % 991) / 1000.0, 1
     FROM (SELECT g, ($3::int[])[1 + g % $4] AS resource, ($5::int[])[1 + g % $4] AS seller, $6::timestamptz + (g % 744) * interval '1 hour' AS start,
             5 + (g % 451) / 10.0 AS q FROM generate_series(1, $7) g) x
     JOIN availability_orders o ON o.organization_id = $1 AND o.start = date_trunc('day', x.start, 'UTC')`,
    [...common, availability],
  );
  await validateSettlement(pool, m, 0, 1);
  await pool.query('VACUUM ANALYZE flexibility_transactions, availability_transactions, settlement_line_versions');
  return { flexibility, availability, seconds: (performance.now() - t0) / 1000 };
}

/**
 * Validates every `every`-th transaction of the buyer (by id), from `shift` percent points more
 * delivery than the seed's 40–129 %: shift 0 is the first validation, a shift on every tenth a
 * correction (one more line version each).
 */
export async function validateSettlement(pool: Pool, m: BenchMarket, shift: number, every: number): Promise<void> {
  const pct = `(40 + (t.id % 90) + (t.id % 7) / 4.0 + ${Number(shift)})`;
  const remuneration = `CASE WHEN ${pct} < 60 THEN 0 ELSE least(${pct}, 100) END`;
  await pool.query(
    `UPDATE flexibility_transactions t SET delivery_validation_status = 2, validated_at = now(), delivery_percentage = ${pct}, delivered_quantity = round(t.quantity * ${pct} / 100, 6),
       reference_adjustment_quantity = 0, reference_reading_value = 10, validation_reading_value = 10 - round(t.quantity * ${pct} / 100, 6), remuneration_percentage = ${remuneration}
     WHERE t.buyer_organization_id = $1 AND t.id % $2 = 0`,
    [m.buyer.organizationId, every],
  );
  await pool.query(
    `UPDATE availability_transactions t SET delivery_validation_status = 2, validated_at = now(), delivery_percentage = ${pct}, delivered_quantity = t.quantity * ${pct} / 100,
       expected_delivered_quantity = t.quantity, remuneration_percentage = ${remuneration}
     WHERE t.buyer_organization_id = $1 AND t.id % $2 = 0`,
    [m.buyer.organizationId, every],
  );
}

/** Resources with an actual register and a reference (stored, or a previous-day baseline), and
 * 15-minute readings over [from, to) written by binary COPY through the time-series store. */
export async function measuredResources(app: App, adminToken: string, m: BenchMarket, count: number, reference: 'stored' | 'baseline', from: number, to: number): Promise<number[]> {
  const base = app.baseUrl;
  const resources: number[] = [];
  const stored: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const org = m.providers[i % m.providers.length]!;
    const meter = await call(base, 'POST', '/api/admin/meters', adminToken, { externalId: `bench-${reference}-${i}-${Date.now()}`, name: 'bench', type: 1, organizationsIds: [org] });
    const register = (extra: Record<string, unknown>) =>
      call(base, 'POST', '/api/admin/registers', adminToken, { externalId: `r-${Math.random()}`, name: 'r', type: 1, measurementType: 1, measurementPrefix: 3, defaultResolution: 900, updateFrequency: 3600, meterId: meter.id, isVirtual: false, timeZone: 'UTC', virtualDefinition: null, ...extra });
    const actual = await register({});
    const ref =
      reference === 'stored'
        ? await register({})
        : await register({ isVirtual: true, virtualDefinition: { calculationType: 3, baselineAlgorithmType: 2, sourceRegisters: [actual.id] } });
    stored.push(actual.id);
    if (reference === 'stored') stored.push(ref.id);
    const resource = await call(base, 'POST', '/api/admin/resources', adminToken, { organizationId: org, name: `v${i}`, type: 1, regulationType: 3, maxQuantity: 100, marketZoneId: m.zoneId, actualRegisterId: actual.id, referenceRegisterId: ref.id });
    resources.push(resource.id);
  }
  const points = (to - from) / Q;
  const timestamps = new Float64Array(points * stored.length);
  const values = new Float64Array(points * stored.length);
  const resolutions = new Int32Array(points * stored.length).fill(900);
  const offsets = new Int32Array(stored.length + 1);
  for (let s = 0; s < stored.length; s += 1) {
    offsets[s] = s * points;
    for (let i = 0; i < points; i += 1) {
      timestamps[s * points + i] = from + i * Q;
      // Actual registers (even) around 2.5 kWh per quarter hour, references (odd) around 3.5; three decimals.
      values[s * points + i] = Math.round((s % 2 === 0 ? 2.5 : 3.5) * 1000 + ((i * 37 + s * 11) % 500)) / 1000;
    }
  }
  offsets[stored.length] = stored.length * points;
  const t = performance.now();
  await app.timeSeries.write({ rows: { registerIds: stored, offsets, timestamps, values, resolutions }, updatedAtMs: Date.now() - DAY });
  console.log(`validation: ${stored.length} registers × ${points} readings written by COPY in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return resources;
}

/** `count` one-hour transactions (upward and downward) on distinct hours of the resources in [from, to). */
export async function insertPending(pool: Pool, m: BenchMarket, resources: number[], count: number, from: number, to: number): Promise<number[]> {
  const hours = (to - from) / 3_600_000;
  const { rows } = await pool.query<{ id: number }>(
    `WITH o AS (INSERT INTO flexibility_orders (organization_id, market_zone_id, market_id, product_type, start, "end", expires_at, unit_price, min_quantity, max_quantity, remaining_quantity, created_by)
       VALUES ($1, $2, $3, 1, $4, $5, $4::timestamptz - interval '1 hour', 1, 1, 1000000, 0, 'bench') RETURNING id)
     INSERT INTO flexibility_transactions (flexibility_order_id, seller_organization_id, buyer_organization_id, seller_created_by, buyer_created_by, resource_id, market_id,
       market_zone_id, product_type, start, "end", quantity, unit_price)
     SELECT o.id, r.organization_id, $1::int, 'bench', 'bench', r.id, $3::int, $2::int, 1 + g % 2, x.start, x.start + interval '1 hour', 2 + (g % 50) / 10.0, 1
     FROM o, generate_series(0, $6 - 1) g
     JOIN grid_resources r ON r.id = ($7::int[])[1 + g % $8]
     CROSS JOIN LATERAL (SELECT $4::timestamptz + ((g / $8 * 7) % $9) * interval '1 hour' AS start) x
     RETURNING flexibility_transactions.id`,
    [m.buyer.organizationId, m.zoneId, m.marketId, new Date(from), new Date(to), count, resources, resources.length, hours],
  );
  await pool.query('ANALYZE flexibility_transactions');
  return rows.map((r) => r.id);
}

export async function resetToPending(pool: Pool, ids: number[]): Promise<void> {
  await pool.query(
    `UPDATE flexibility_transactions SET delivery_validation_status = 1, validated_at = NULL, delivery_percentage = NULL, delivered_quantity = NULL,
       reference_adjustment_quantity = NULL, reference_reading_value = NULL, validation_reading_value = NULL, remuneration_percentage = NULL,
       readings_updated_at = NULL, validation_attempted_at = NULL, validation_attempts = 0, next_validation_at = NULL WHERE id = ANY($1::int[])`,
    [ids],
  );
  await pool.query('VACUUM ANALYZE flexibility_transactions');
}
