// Flexibility and availability orders: creation (with the market zone's rules), listing for
// the organizations that may see them, and acceptance of flexibility orders into transactions.
import { ClearingStatus, ProductType, type TimeResolution } from '../codes.ts';
import { HttpError, badRequest, conflict, notFound, type FieldError } from '../http/errors.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import { withTransaction, type Pool, type Queryable } from '../store/database.ts';
import { addEventDays } from '../meter/meterStore.ts';
import { localDayKey } from '../shared/virtual/time.ts';
import { AVAILABILITY_PRODUCTS, FLEXIBILITY_PRODUCTS, activationOf, quantityErrors, timeGridErrors, visibleOrderSql } from './rules.ts';

export const FLEX_ORDER_COLUMNS = `o.id, o.created_by AS "createdBy", o.created_at AS "createdAt", o.expires_at AS "expiresAt", o.start, o."end",
  o.unit_price::float8 AS "unitPrice", o.min_quantity::float8 AS "minQuantity", o.max_quantity::float8 AS "maxQuantity",
  o.remaining_quantity::float8 AS "remainingQuantity", o.product_type AS "productType", o.organization_id AS "organizationId",
  o.resource_id AS "resourceId", o.flexibility_order_group_id AS "flexibilityOrderGroupId", o.availability_transaction_id AS "availabilityTransactionId",
  o.flexibility_schedule_id AS "flexibilityScheduleId", o.availability_schedule_transaction_id AS "availabilityScheduleTransactionId",
  o.target_organization_ids AS "targetOrganizationIds", o.market_zone_id AS "marketZoneId", o.market_id AS "marketId"`;

export const AVAILABILITY_ORDER_COLUMNS = `o.id, o.created_at AS "createdAt", o.expires_at AS "expiresAt", o.flexibility_orders_expire_at AS "flexibilityOrdersExpireAt",
  o.start, o."end", o.product_type AS "productType", o.clearing_status AS "clearingStatus", o.market_id AS "marketId", o.organization_id AS "organizationId",
  o.substation_id AS "substationId", o.resource_id AS "resourceId", o.quantity::float8 AS quantity, o.availability_price::float8 AS "availabilityPrice",
  o.impact::float8 AS impact, o.market_zone_id AS "marketZoneId", o.target_organization_ids AS "targetOrganizationIds"`;

interface Zone {
  id: number;
  time_resolution: TimeResolution;
  step: number;
  members: number[];
  markets: number[];
}

async function zoneOf(db: Queryable, id: number): Promise<Zone | undefined> {
  const { rows } = await db.query<Zone>(
    `SELECT z.id, z.time_resolution, z.order_quantity_resolution::float8 AS step,
       coalesce((SELECT array_agg(organization_id) FROM market_zone_organizations WHERE market_zone_id = z.id), '{}') AS members,
       coalesce((SELECT array_agg(id ORDER BY id) FROM markets WHERE market_zone_id = z.id), '{}') AS markets
     FROM market_zones z WHERE z.id = $1`,
    [id],
  );
  return rows[0];
}

interface CommonOrderInput {
  organizationId: number;
  marketZoneId: number;
  marketId: number | null;
  resourceId: number | null;
  productType: number;
  start: string;
  end: string;
  expiresAt: string;
  targetOrganizationIds: number[];
}

/** The checks every order passes: zone membership, market, products, time grid, targets. */
async function checkCommon(db: Queryable, input: CommonOrderInput, family: readonly ProductType[], quantities: Record<string, number>): Promise<{ zone: Zone; marketId: number; times: { start: number; end: number; expiresAt: number } }> {
  const errors: FieldError[] = [];
  const zone = await zoneOf(db, input.marketZoneId);
  if (!zone) throw badRequest('Unknown market zone', [{ path: 'marketZoneId', message: `market zone ${input.marketZoneId} does not exist` }]);
  if (!zone.members.includes(input.organizationId)) errors.push({ path: 'organizationId', message: 'must be a member of the market zone' });
  const marketId = input.marketId ?? zone.markets[0];
  if (marketId === undefined || !zone.markets.includes(marketId)) errors.push({ path: 'marketId', message: 'must be a market of the zone' });
  if (!family.includes(input.productType as ProductType)) errors.push({ path: 'productType', message: `must be one of ${family.join(', ')} for this kind of order` });
  const start = parseUtcTimestamp(input.start)!;
  const end = parseUtcTimestamp(input.end)!;
  const expiresAt = parseUtcTimestamp(input.expiresAt)!;
  if (start >= end) errors.push({ path: 'end', message: 'must be after start' });
  if (expiresAt >= start) errors.push({ path: 'expiresAt', message: 'must be before start' });
  if (expiresAt <= Date.now()) errors.push({ path: 'expiresAt', message: 'must be in the future' });
  errors.push(...timeGridErrors({ start, end }, zone.time_resolution));
  errors.push(...quantityErrors(quantities, zone.step));
  input.targetOrganizationIds.forEach((id, i) => {
    if (!zone.members.includes(id)) errors.push({ path: `targetOrganizationIds[${i}]`, message: `organization ${id} is not a member of the market zone` });
  });
  if (input.resourceId !== null) {
    const { rows } = await db.query<{ market_zone_id: number | null }>('SELECT market_zone_id FROM grid_resources WHERE id = $1', [input.resourceId]);
    if (!rows[0]) errors.push({ path: 'resourceId', message: `grid resource ${input.resourceId} does not exist` });
    else if (rows[0].market_zone_id !== input.marketZoneId) errors.push({ path: 'resourceId', message: 'must be a grid resource of the market zone' });
  }
  if (errors.length > 0) throw badRequest('Invalid order', errors);
  return { zone, marketId: marketId!, times: { start, end, expiresAt } };
}

// Flexibility orders -----------------------------------------------------------------------

export interface FlexibilityOrderInput extends CommonOrderInput {
  unitPrice: number;
  minQuantity: number;
  maxQuantity: number;
  flexibilityOrderGroupId: number | null;
  availabilityTransactionId: number | null;
  flexibilityScheduleId: number | null;
  availabilityScheduleTransactionId: number | null;
}

export async function createFlexibilityOrder(pool: Pool, input: FlexibilityOrderInput, createdBy: string): Promise<unknown> {
  const { marketId, times } = await checkCommon(pool, input, FLEXIBILITY_PRODUCTS, { minQuantity: input.minQuantity, maxQuantity: input.maxQuantity });
  const errors: FieldError[] = [];
  if (input.minQuantity > input.maxQuantity) errors.push({ path: 'minQuantity', message: 'must not exceed maxQuantity' });
  let resourceId = input.resourceId;
  let targets = input.targetOrganizationIds;
  if (input.availabilityTransactionId !== null) {
    // Activating reserved capacity: the availability transaction's seller and resource deliver.
    const { rows } = await pool.query<{ buyer: number; seller: number; resource_id: number; product_type: ProductType; start: Date; end: Date; expire: Date | null }>(
      `SELECT t.buyer_organization_id AS buyer, t.seller_organization_id AS seller, t.resource_id, t.product_type, t.start, t."end", o.flexibility_orders_expire_at AS expire
       FROM availability_transactions t JOIN availability_orders o ON o.id = t.availability_order_id WHERE t.id = $1`,
      [input.availabilityTransactionId],
    );
    const at = rows[0];
    if (!at || at.buyer !== input.organizationId) errors.push({ path: 'availabilityTransactionId', message: 'must be an availability transaction the organization bought' });
    else {
      if (activationOf(at.product_type) !== input.productType) errors.push({ path: 'productType', message: `must be ${activationOf(at.product_type)} to activate this availability` });
      if (times.start < at.start.getTime() || times.end > at.end.getTime()) errors.push({ path: 'start', message: 'must lie within the availability transaction’s period' });
      if (at.expire && Date.now() > at.expire.getTime()) errors.push({ path: 'availabilityTransactionId', message: 'its flexibility orders deadline has passed' });
      resourceId = at.resource_id;
      targets = [at.seller];
    }
  }
  if (errors.length > 0) throw badRequest('Invalid order', errors);
  const { rows } = await pool.query(
    `WITH o AS (
       INSERT INTO flexibility_orders (organization_id, market_zone_id, market_id, resource_id, product_type, start, "end", expires_at, unit_price, min_quantity,
         max_quantity, remaining_quantity, target_organization_ids, flexibility_order_group_id, availability_transaction_id, flexibility_schedule_id,
         availability_schedule_transaction_id, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $13, $14, $15, $16, $17) RETURNING *)
     SELECT ${FLEX_ORDER_COLUMNS} FROM o`,
    [
      input.organizationId,
      input.marketZoneId,
      marketId,
      resourceId,
      input.productType,
      new Date(times.start),
      new Date(times.end),
      new Date(times.expiresAt),
      String(input.unitPrice),
      String(input.minQuantity),
      String(input.maxQuantity),
      targets,
      input.flexibilityOrderGroupId,
      input.availabilityTransactionId,
      input.flexibilityScheduleId,
      input.availabilityScheduleTransactionId,
      createdBy,
    ],
  );
  return rows[0];
}

export async function listFlexibilityOrders(db: Queryable, q: { organizationId: number | null; marketZoneId?: number; start: number; end: number }): Promise<unknown[]> {
  const { rows } = await db.query(
    `SELECT ${FLEX_ORDER_COLUMNS} FROM flexibility_orders o
     WHERE o.start < $3 AND o."end" > $2 AND ($4::int IS NULL OR o.market_zone_id = $4) AND ($1::int IS NULL OR ${visibleOrderSql('o', '$1')})
     ORDER BY o.start, o.id`,
    [q.organizationId, new Date(q.start), new Date(q.end), q.marketZoneId ?? null],
  );
  return rows;
}

export interface Acceptance {
  organizationId: number;
  resourceId: number;
  quantity: number;
}

/** Accepts part of a flexibility order. The remaining quantity is decremented by one conditional
 * UPDATE, so concurrent acceptances can never drive it below zero: the late ones get 409. */
export async function acceptFlexibilityOrder(pool: Pool, orderId: number, acceptance: Acceptance, createdBy: string): Promise<number> {
  return withTransaction(pool, async (tx) => {
    const { rows: orders } = await tx.query<{
      id: number;
      organization_id: number;
      market_zone_id: number;
      resource_id: number | null;
      product_type: number;
      min_quantity: number;
      step: number;
      expires_at: Date;
      visible: boolean;
      start: Date;
      end: Date;
    }>(
      `SELECT o.id, o.organization_id, o.market_zone_id, o.resource_id, o.product_type, o.min_quantity::float8 AS min_quantity, o.expires_at, o.start, o."end",
         z.order_quantity_resolution::float8 AS step, ${visibleOrderSql('o', '$2')} AS visible
       FROM flexibility_orders o JOIN market_zones z ON z.id = o.market_zone_id WHERE o.id = $1`,
      [orderId, acceptance.organizationId],
    );
    const order = orders[0];
    if (!order || !order.visible) throw notFound(`Flexibility order ${orderId}`);
    if (order.organization_id === acceptance.organizationId) throw conflict('An organization cannot accept its own order');
    if (order.expires_at.getTime() <= Date.now()) throw conflict(`Flexibility order ${orderId} expired at ${order.expires_at.toISOString()}`);
    const { rows: resources } = await tx.query<{ organization_id: number; market_zone_id: number | null; allowed_products: number[]; actual_register_id: number | null; time_zone: string | null }>(
      `SELECT r.organization_id, r.market_zone_id, r.allowed_products, r.actual_register_id, g.time_zone
       FROM grid_resources r LEFT JOIN registers g ON g.id = r.actual_register_id WHERE r.id = $1`,
      [acceptance.resourceId],
    );
    const resource = resources[0];
    const errors: FieldError[] = [];
    if (!resource || resource.organization_id !== acceptance.organizationId) errors.push({ path: 'resourceId', message: 'must be a grid resource of the accepting organization' });
    else {
      if (resource.market_zone_id !== order.market_zone_id) errors.push({ path: 'resourceId', message: 'must be in the order’s market zone' });
      if (resource.allowed_products.length > 0 && !resource.allowed_products.includes(order.product_type)) errors.push({ path: 'resourceId', message: `is not allowed to deliver product ${order.product_type}` });
      if (order.resource_id !== null && order.resource_id !== acceptance.resourceId) errors.push({ path: 'resourceId', message: `the order is for grid resource ${order.resource_id}` });
    }
    if (acceptance.quantity < order.min_quantity) errors.push({ path: 'quantity', message: `must be at least the order’s minQuantity ${order.min_quantity}` });
    errors.push(...quantityErrors({ quantity: acceptance.quantity }, order.step));
    if (errors.length > 0) throw badRequest('Invalid acceptance', errors);

    const { rows: taken } = await tx.query(
      'UPDATE flexibility_orders SET remaining_quantity = remaining_quantity - $2 WHERE id = $1 AND remaining_quantity >= $2::numeric AND expires_at > now() RETURNING id',
      [orderId, String(acceptance.quantity)],
    );
    if (taken.length === 0) throw new HttpError('conflict', `Flexibility order ${orderId} has less than ${acceptance.quantity} left`);
    const { rows } = await tx.query<{ id: number }>(
      `INSERT INTO flexibility_transactions (flexibility_order_id, seller_organization_id, buyer_organization_id, seller_created_by, buyer_created_by, resource_id,
         market_id, market_zone_id, product_type, start, "end", quantity, unit_price, availability_transaction_id, flexibility_schedule_id, availability_schedule_transaction_id)
       SELECT o.id, $2, o.organization_id, $3, o.created_by, $4, o.market_id, o.market_zone_id, o.product_type, o.start, o."end", $5, o.unit_price,
         o.availability_transaction_id, o.flexibility_schedule_id, o.availability_schedule_transaction_id
       FROM flexibility_orders o WHERE o.id = $1 RETURNING id`,
      [orderId, acceptance.organizationId, createdBy, acceptance.resourceId, String(acceptance.quantity)],
    );
    // The delivery days are event days for baselines of the resource's meter, and the delivery
    // period their event hours.
    if (resource!.actual_register_id !== null) {
      await addEventDays(tx, resource!.actual_register_id, eventDays(order.start.getTime(), order.end.getTime(), resource!.time_zone ?? 'UTC'), { start: order.start, end: order.end });
    }
    return rows[0]!.id;
  });
}

/** Local days (of the register's zone) touched by [start, end). */
export function eventDays(start: number, end: number, timeZone: string): string[] {
  const days = new Set<string>();
  for (let t = start; t < end; t += 3_600_000) days.add(localDayKey(t, timeZone));
  days.add(localDayKey(end - 1, timeZone));
  return [...days];
}

// Availability orders ----------------------------------------------------------------------

export interface AvailabilityOrderInput extends CommonOrderInput {
  substationId: number | null;
  flexibilityOrdersExpireAt: string | null;
  quantity: number;
  availabilityPrice: number;
  impact: number | null;
}

export async function createAvailabilityOrder(pool: Pool, input: AvailabilityOrderInput, createdBy: string): Promise<unknown> {
  const { marketId, times } = await checkCommon(pool, input, AVAILABILITY_PRODUCTS, { quantity: input.quantity });
  const errors: FieldError[] = [];
  const flexDeadline = input.flexibilityOrdersExpireAt === null ? null : parseUtcTimestamp(input.flexibilityOrdersExpireAt)!;
  if (flexDeadline !== null && flexDeadline > times.end) errors.push({ path: 'flexibilityOrdersExpireAt', message: 'must not be after end' });
  if (input.substationId !== null) {
    const { rows } = await pool.query<{ market_zone_id: number }>('SELECT market_zone_id FROM substations WHERE id = $1', [input.substationId]);
    if (!rows[0] || rows[0].market_zone_id !== input.marketZoneId) errors.push({ path: 'substationId', message: 'must be a substation of the market zone' });
  }
  if (input.impact !== null && input.substationId === null) errors.push({ path: 'impact', message: 'needs a substationId' });
  if (errors.length > 0) throw badRequest('Invalid order', errors);
  const { rows } = await pool.query(
    `WITH o AS (
       INSERT INTO availability_orders (organization_id, market_zone_id, market_id, substation_id, resource_id, product_type, start, "end", expires_at,
         flexibility_orders_expire_at, quantity, availability_price, impact, target_organization_ids, created_by, clearing_status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, ${ClearingStatus.Open}) RETURNING *)
     SELECT ${AVAILABILITY_ORDER_COLUMNS} FROM o`,
    [
      input.organizationId,
      input.marketZoneId,
      marketId,
      input.substationId,
      input.resourceId,
      input.productType,
      new Date(times.start),
      new Date(times.end),
      new Date(times.expiresAt),
      flexDeadline === null ? null : new Date(flexDeadline),
      String(input.quantity),
      String(input.availabilityPrice),
      input.impact === null ? null : String(input.impact),
      input.targetOrganizationIds,
      createdBy,
    ],
  );
  return rows[0];
}

/** Availability orders a resource may offer on (its zone, open to or targeting its organization,
 * for it or any resource, a product it may deliver), overlapping the period. */
export async function availabilityOrdersForResource(db: Queryable, resourceId: number, q: { organizationId: number; start: number; end: number }): Promise<unknown[]> {
  const { rows } = await db.query(
    `SELECT ${AVAILABILITY_ORDER_COLUMNS} FROM availability_orders o JOIN grid_resources r ON r.id = $1
     WHERE o.market_zone_id = r.market_zone_id AND (o.resource_id IS NULL OR o.resource_id = r.id)
       AND (cardinality(r.allowed_products) = 0 OR o.product_type = ANY(r.allowed_products))
       AND o.start < $4 AND o."end" > $3 AND ${visibleOrderSql('o', '$2')}
     ORDER BY o.start, o.id`,
    [resourceId, q.organizationId, new Date(q.start), new Date(q.end)],
  );
  return rows;
}

export async function listAvailabilityOrders(db: Queryable, q: { marketZoneId?: number; start: number; end: number }): Promise<unknown[]> {
  const { rows } = await db.query(
    `SELECT ${AVAILABILITY_ORDER_COLUMNS} FROM availability_orders o WHERE o.start < $2 AND o."end" > $1 AND ($3::int IS NULL OR o.market_zone_id = $3) ORDER BY o.start, o.id`,
    [new Date(q.start), new Date(q.end), q.marketZoneId ?? null],
  );
  return rows;
}
