// A small market for the delivery-validation, settlement and scenario tests: a zone with a
// grid operator and providers, measured grid resources, readings, and (for periods in the
// past, which the HTTP API rightly refuses to create) transactions written straight into the
// test database.
import pg from 'pg';
import { createOrgClient, type OrgClient } from './fixtures.ts';
import { createMeter, createRegister, uniqueId } from './meterFixtures.ts';
import type { Api, TestApp } from './testApp.ts';

export const MARKET_PERMISSIONS = ['Order.Organization.ReadWrite', 'Organization.Organization.Read', 'Meter.Organization.ReadWrite', 'Resource.Organization.Read', 'Planning.Organization.ReadWrite'];
export const MARKET_FEATURES = ['Grid', 'ResourceManagement', 'DecisionSupport', 'Settlements'];

export interface Market {
  operator: OrgClient;
  providers: OrgClient[];
  zoneId: number;
  marketId: number;
}

export async function createMarket(t: TestApp, providers = 2, options: { timeResolution?: number; quantityStep?: number } = {}): Promise<Market> {
  const operator = await createOrgClient(t.api, t.adminToken, { features: MARKET_FEATURES, permissions: MARKET_PERMISSIONS });
  const list: OrgClient[] = [];
  for (let i = 0; i < providers; i += 1) list.push(await createOrgClient(t.api, t.adminToken, { features: MARKET_FEATURES, permissions: MARKET_PERMISSIONS }));
  const zone = await t.api.post(
    '/api/admin/zones',
    { name: uniqueId('zone'), timeResolution: options.timeResolution ?? 1, orderQuantityResolution: options.quantityStep ?? 0.5, organizationIds: [operator.organizationId, ...list.map((p) => p.organizationId)] },
    t.adminToken,
  );
  if (zone.status !== 201) throw new Error(`create zone: ${zone.status} ${zone.text}`);
  return { operator, providers: list, zoneId: zone.body.id, marketId: zone.body.markets[0].marketId };
}

export interface RegisterRef {
  id: number;
  externalId: string;
}

export interface MeasuredResource {
  id: number;
  meterExternalId: string;
  actual: RegisterRef | null;
  reference: RegisterRef | null;
}

export interface ResourceOptions {
  regulationType?: number;
  /** stored: a register for posted reference readings; baseline: a virtual baseline of the actual register; none. */
  reference?: 'stored' | 'none' | { baselineAlgorithmType: number };
  useZeroReference?: boolean;
  withActual?: boolean;
  /** Actual register kind: 1 = active energy (kWh), 3 = active power (kW). */
  actualMeasurementType?: number;
}

/** A grid resource of `organizationId` in the zone, with a meter shared with the organization. */
export async function createMeasuredResource(t: TestApp, organizationId: number, zoneId: number, options: ResourceOptions = {}): Promise<MeasuredResource> {
  const meter = await createMeter(t.api, t.adminToken, [organizationId]);
  const actual = options.withActual === false ? null : await createRegister(t.api, t.adminToken, meter.id, { measurementType: options.actualMeasurementType ?? 1 });
  const kind = options.reference ?? 'stored';
  let reference: RegisterRef | null = null;
  if (kind === 'stored') reference = await createRegister(t.api, t.adminToken, meter.id);
  else if (kind !== 'none') {
    reference = await createRegister(t.api, t.adminToken, meter.id, {
      isVirtual: true,
      virtualDefinition: { calculationType: 3, baselineAlgorithmType: kind.baselineAlgorithmType, sourceRegisters: [actual!.id], sumPreviousValues: false },
    });
  }
  const res = await t.api.post(
    '/api/admin/resources',
    {
      organizationId,
      name: uniqueId('resource'),
      type: 1,
      regulationType: options.regulationType ?? 3,
      maxQuantity: 100,
      marketZoneId: zoneId,
      actualRegisterId: actual?.id ?? null,
      referenceRegisterId: reference?.id ?? null,
      useZeroReference: options.useZeroReference ?? false,
    },
    t.adminToken,
  );
  if (res.status !== 201) throw new Error(`create resource: ${res.status} ${res.text}`);
  return { id: res.body.id, meterExternalId: meter.externalId, actual, reference };
}

/** Values every 15 minutes from `start`. */
export function quarterHours(start: string | number, values: number[], resolution = 900): { timestamp: string; value: number; resolution: number }[] {
  const t0 = typeof start === 'number' ? start : Date.parse(start);
  return values.map((value, i) => ({ timestamp: new Date(t0 + i * resolution * 1000).toISOString(), value, resolution }));
}

/** Posts readings of one register through POST /api/readings. */
export async function postReadings(api: Api, token: string, meterExternalId: string, registerExternalId: string, values: { timestamp: string; value: number; resolution: number }[]): Promise<void> {
  const res = await api.post('/api/readings', { meters: [{ id: meterExternalId, registers: [{ id: registerExternalId, values }] }] }, token);
  if (res.status !== 204) throw new Error(`post readings: ${res.status} ${res.text}`);
}

/** Posts reference readings through POST /api/grid/resource/{id}/readings/reference. */
export async function postReference(api: Api, token: string, organizationId: number, resourceId: number, readings: { timestamp: string; value: number; resolution: number }[]): Promise<void> {
  const res = await api.post(`/api/grid/resource/${resourceId}/readings/reference`, { organizationId, readings }, token);
  if (res.status !== 204) throw new Error(`post reference: ${res.status} ${res.text}`);
}

export async function connect(t: TestApp): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: t.databaseUrl });
  await client.connect();
  return client;
}

/** What a transaction written directly (in the past) has, whatever its product. */
interface PastTransaction {
  market: Market;
  seller: number;
  resourceId: number;
  productType: number;
  start: string;
  end: string;
  quantity: string | number;
  status?: number;
}

export interface PastFlexibility extends PastTransaction {
  unitPrice?: string | number;
  availabilityTransactionId?: number | null;
}

/** A flexibility order and its transaction, written directly (periods in the past). */
export async function insertFlexibilityTransaction(db: pg.Client, p: PastFlexibility): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `WITH o AS (
       INSERT INTO flexibility_orders (organization_id, market_zone_id, market_id, product_type, start, "end", expires_at, unit_price, min_quantity, max_quantity,
         remaining_quantity, availability_transaction_id, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $5::timestamptz - interval '1 hour', $7, $8, $8, 0, $10, 'test') RETURNING *)
     INSERT INTO flexibility_transactions (flexibility_order_id, seller_organization_id, buyer_organization_id, seller_created_by, buyer_created_by, resource_id,
       market_id, market_zone_id, product_type, start, "end", quantity, unit_price, availability_transaction_id, delivery_validation_status)
     SELECT o.id, $9, o.organization_id, 'seller', 'buyer', $11, o.market_id, o.market_zone_id, o.product_type, o.start, o."end", $8, o.unit_price, o.availability_transaction_id, $12
     FROM o RETURNING id`,
    [p.market.operator.organizationId, p.market.zoneId, p.market.marketId, p.productType, p.start, p.end, String(p.unitPrice ?? 1), String(p.quantity), p.seller, p.availabilityTransactionId ?? null, p.resourceId, p.status ?? 1],
  );
  return rows[0]!.id;
}

export interface PastAvailability extends PastTransaction {
  availabilityPrice?: string | number;
}

export async function insertAvailabilityTransaction(db: pg.Client, p: PastAvailability): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `WITH o AS (
       INSERT INTO availability_orders (organization_id, market_zone_id, market_id, product_type, start, "end", expires_at, quantity, availability_price, clearing_status, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $5::timestamptz - interval '1 day', $7, $8, 2, 'test') RETURNING *)
     INSERT INTO availability_transactions (availability_order_id, seller_organization_id, buyer_organization_id, seller_created_by, buyer_created_by, resource_id,
       market_id, product_type, start, "end", quantity, availability_price, activation_price, delivery_validation_status)
     SELECT o.id, $9, o.organization_id, 'seller', 'buyer', $10, o.market_id, o.product_type, o.start, o."end", o.quantity, o.availability_price, 1, $11 FROM o RETURNING id`,
    [p.market.operator.organizationId, p.market.zoneId, p.market.marketId, p.productType, p.start, p.end, String(p.quantity), String(p.availabilityPrice ?? 1), p.seller, p.resourceId, p.status ?? 1],
  );
  return rows[0]!.id;
}

/** Polls `check` until it returns a value (not undefined) or the deadline passes. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
