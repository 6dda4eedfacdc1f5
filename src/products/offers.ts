// Availability offers: a provider offers a resource's capacity on open availability orders.
// Only for the caller's own resources, only on open orders (not expired, not cleared), the whole
// request atomic. The offer's impactValue is its resource's impact factor on the order's
// substation (1 when the order names none).
import { ClearingStatus } from '../codes.ts';
import { badRequest, notFound, type FieldError } from '../http/errors.ts';
import { withTransaction, type Pool, type PoolClient, type Queryable } from '../store/database.ts';
import { quantityErrors, visibleOrderSql } from './rules.ts';

export interface OfferInput {
  availabilityOrderId: number;
  activationPrice: number;
  maxQuantity: number;
  minQuantity: number;
}

export const OFFER_COLUMNS = `f.created_by AS "createdBy", f.created_at AS "createdAt", f.expires_at AS "expiresAt", f.impact_value::float8 AS "impactValue",
  f.activation_price::float8 AS "activationPrice", f.max_quantity::float8 AS "maxQuantity", f.min_quantity::float8 AS "minQuantity",
  f.organization_id AS "organizationId", f.resource_id AS "resourceId", f.availability_order_id AS "availabilityOrderId",
  f.availability_transaction_id AS "availabilityTransactionId", f.clearing_status AS "clearingStatus"`;

interface Resource {
  id: number;
  organization_id: number;
  market_zone_id: number | null;
  allowed_products: number[];
  max_quantity: number;
}

/** The resource must belong to the organization (404 otherwise: other organizations' resources are not shown). */
export async function ownResource(db: Queryable, resourceId: number, organizationId: number | null): Promise<Resource> {
  const { rows } = await db.query<Resource>('SELECT id, organization_id, market_zone_id, allowed_products, max_quantity::float8 AS max_quantity FROM grid_resources WHERE id = $1', [resourceId]);
  const resource = rows[0];
  if (!resource || (organizationId !== null && resource.organization_id !== organizationId)) throw notFound(`Grid resource ${resourceId}`);
  return resource;
}

async function checkOffers(tx: PoolClient, resource: Resource, organizationId: number, offers: OfferInput[], mode: 'create' | 'update'): Promise<Map<number, number | null>> {
  const errors: FieldError[] = [];
  const impacts = new Map<number, number | null>();
  const ids = offers.map((o) => o.availabilityOrderId);
  const { rows } = await tx.query<{ id: number; market_zone_id: number; resource_id: number | null; product_type: number; clearing_status: number; expires_at: Date; quantity: number; step: number; substation_id: number | null; impact: number | null; factor: number | null; visible: boolean; offered: boolean }>(
    `SELECT o.id, o.market_zone_id, o.resource_id, o.product_type, o.clearing_status, o.expires_at, o.quantity::float8 AS quantity,
       z.order_quantity_resolution::float8 AS step, o.substation_id, o.impact::float8 AS impact,
       (SELECT i.factor::float8 FROM substation_impacts i WHERE i.substation_id = o.substation_id AND i.resource_id = $2) AS factor,
       ${visibleOrderSql('o', '$3')} AS visible,
       EXISTS (SELECT 1 FROM availability_offers f WHERE f.availability_order_id = o.id AND f.resource_id = $2) AS offered
     FROM availability_orders o JOIN market_zones z ON z.id = o.market_zone_id WHERE o.id = ANY($1::int[]) FOR UPDATE OF o`,
    [ids, resource.id, organizationId],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  offers.forEach((offer, i) => {
    const at = (field: string) => `offers[${i}].${field}`;
    const order = byId.get(offer.availabilityOrderId);
    if (ids.indexOf(offer.availabilityOrderId) !== i) return errors.push({ path: at('availabilityOrderId'), message: 'is listed twice' });
    if (!order || !order.visible) return errors.push({ path: at('availabilityOrderId'), message: `availability order ${offer.availabilityOrderId} does not exist` });
    if (order.clearing_status !== ClearingStatus.Open || order.expires_at.getTime() <= Date.now()) return errors.push({ path: at('availabilityOrderId'), message: 'the order is no longer open for offers' });
    if (order.market_zone_id !== resource.market_zone_id) errors.push({ path: at('availabilityOrderId'), message: 'the order is in another market zone than the resource' });
    if (order.resource_id !== null && order.resource_id !== resource.id) errors.push({ path: at('availabilityOrderId'), message: `the order is for grid resource ${order.resource_id}` });
    if (resource.allowed_products.length > 0 && !resource.allowed_products.includes(order.product_type)) errors.push({ path: at('availabilityOrderId'), message: `the resource may not deliver product ${order.product_type}` });
    if (mode === 'create' && order.offered) errors.push({ path: at('availabilityOrderId'), message: 'the resource already has an offer on this order (use PUT to change it)' });
    if (mode === 'update' && !order.offered) errors.push({ path: at('availabilityOrderId'), message: 'the resource has no offer on this order (use POST)' });
    if (offer.minQuantity > offer.maxQuantity) errors.push({ path: at('minQuantity'), message: 'must not exceed maxQuantity' });
    if (offer.maxQuantity > resource.max_quantity) errors.push({ path: at('maxQuantity'), message: `must not exceed the resource's maxQuantity ${resource.max_quantity}` });
    if (offer.minQuantity > order.quantity) errors.push({ path: at('minQuantity'), message: `must not exceed the ordered quantity ${order.quantity}` });
    errors.push(...quantityErrors({ [at('minQuantity')]: offer.minQuantity, [at('maxQuantity')]: offer.maxQuantity }, order.step));
    const impact = order.substation_id === null ? 1 : order.factor;
    if (order.substation_id !== null && (impact === null || (order.impact !== null && impact < order.impact))) {
      errors.push({ path: at('availabilityOrderId'), message: `the resource's impact on substation ${order.substation_id} is ${impact ?? 'unknown'}, below what the order asks (${order.impact ?? 'any'})` });
    }
    impacts.set(offer.availabilityOrderId, impact);
  });
  if (errors.length > 0) throw badRequest('Invalid offers: none were stored', errors);
  return impacts;
}

export async function writeOffers(pool: Pool, resourceId: number, organizationId: number, offers: OfferInput[], createdBy: string, mode: 'create' | 'update'): Promise<unknown[]> {
  return withTransaction(pool, async (tx) => {
    const resource = await ownResource(tx, resourceId, organizationId);
    const impacts = await checkOffers(tx, resource, organizationId, offers, mode);
    for (const offer of offers) {
      const params = [offer.availabilityOrderId, resourceId, organizationId, String(offer.activationPrice), String(offer.minQuantity), String(offer.maxQuantity), impacts.get(offer.availabilityOrderId) ?? null, createdBy];
      if (mode === 'create') {
        await tx.query(
          `INSERT INTO availability_offers (availability_order_id, resource_id, organization_id, activation_price, min_quantity, max_quantity, impact_value, expires_at, created_by)
           SELECT $1, $2, $3, $4, $5, $6, $7, o.expires_at, $8 FROM availability_orders o WHERE o.id = $1`,
          params,
        );
      } else {
        await tx.query(
          `UPDATE availability_offers SET activation_price = $4, min_quantity = $5, max_quantity = $6, impact_value = $7, updated_at = now(), created_by = $8
           WHERE availability_order_id = $1 AND resource_id = $2 AND organization_id = $3`,
          params,
        );
      }
    }
    const { rows } = await tx.query(`SELECT ${OFFER_COLUMNS} FROM availability_offers f WHERE f.resource_id = $1 AND f.availability_order_id = ANY($2::int[]) ORDER BY f.availability_order_id`, [
      resourceId,
      offers.map((o) => o.availabilityOrderId),
    ]);
    return rows;
  });
}

export async function deleteOffers(pool: Pool, resourceId: number, organizationId: number, orderIds: number[]): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await ownResource(tx, resourceId, organizationId);
    const { rows } = await tx.query<{ availability_order_id: number; open: boolean }>(
      `SELECT f.availability_order_id, (o.clearing_status = ${ClearingStatus.Open} AND o.expires_at > now()) AS open
       FROM availability_offers f JOIN availability_orders o ON o.id = f.availability_order_id
       WHERE f.resource_id = $1 AND f.availability_order_id = ANY($2::int[]) FOR UPDATE OF f`,
      [resourceId, orderIds],
    );
    const found = new Map(rows.map((r) => [r.availability_order_id, r.open]));
    const errors: FieldError[] = orderIds.flatMap((id, i) =>
      !found.has(id) ? [{ path: `query.availabilityOrderIds[${i}]`, message: `the resource has no offer on availability order ${id}` }] : !found.get(id) ? [{ path: `query.availabilityOrderIds[${i}]`, message: 'the order is no longer open: the offer cannot be withdrawn' }] : [],
    );
    if (errors.length > 0) throw badRequest('Nothing was withdrawn', errors);
    await tx.query('DELETE FROM availability_offers WHERE resource_id = $1 AND availability_order_id = ANY($2::int[])', [resourceId, orderIds]);
  });
}

export async function offersOfResource(db: Queryable, resourceId: number, q: { start: number; end: number }): Promise<unknown[]> {
  const { rows } = await db.query(
    `SELECT ${OFFER_COLUMNS} FROM availability_offers f JOIN availability_orders o ON o.id = f.availability_order_id
     WHERE f.resource_id = $1 AND o.start < $3 AND o."end" > $2 ORDER BY o.start, f.availability_order_id`,
    [resourceId, new Date(q.start), new Date(q.end)],
  );
  return rows;
}
