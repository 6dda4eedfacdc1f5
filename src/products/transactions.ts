// Reading transactions. A transaction has a seller (the provider delivering) and a buyer (the
// order's organization); responses show it from the asking organization's side:
// `organizationId`/`createdBy` are the asker's, `counterpart…` the other party's. Transactions
// the asker is not a party to (otherFlexibilityTransactionsWithImpact) are shown from the
// seller's side.
//
// Substation impact: a resource's regulation reaches a substation in proportion to the impact
// factor configured for the pair (substation_impacts.factor, −1…1). For a transaction of that
// resource: impact = factor, quantityAfterImpact = quantity × factor (exact decimal in SQL).
import type { Queryable } from '../store/database.ts';
import { DISPATCH_COLUMN } from './dispatch.ts';

/** Columns of a flexibility transaction seen by organization `me` (an SQL expression); its
 * dispatch only for its parties (`party`). */
export function flexColumns(me: string, party = true): string {
  return `t.id, t.transaction_correlation_id AS "transactionCorrelationId", t.availability_transaction_id AS "availabilityTransactionId",
    t.flexibility_schedule_id AS "flexibilityScheduleId", t.availability_schedule_transaction_id AS "availabilityScheduleTransactionId",
    CASE WHEN t.seller_organization_id = ${me} THEN t.seller_created_by ELSE t.buyer_created_by END AS "createdBy",
    t.created_at AS "createdAt",
    CASE WHEN t.seller_organization_id = ${me} THEN t.seller_organization_id ELSE t.buyer_organization_id END AS "organizationId",
    t.quantity::float8 AS quantity, t.market_id AS "marketId", t.flexibility_order_id AS "flexibilityOrderId", t.start, t."end", t.resource_id AS "resourceId",
    t.unit_price::float8 AS "unitPrice",
    CASE WHEN t.seller_organization_id = ${me} THEN t.buyer_organization_id ELSE t.seller_organization_id END AS "counterpartOrganizationId",
    CASE WHEN t.seller_organization_id = ${me} THEN t.buyer_created_by ELSE t.seller_created_by END AS "counterpartCreatedBy",
    t.product_type AS "productType", t.delivery_validation_status AS "deliveryValidationStatus", t.validated_at AS "validatedAt",
    t.delivery_percentage::float8 AS "deliveryPercentage", t.delivered_quantity::float8 AS "deliveredQuantity",
    t.reference_adjustment_quantity::float8 AS "referenceAdjustmentQuantity", t.reference_reading_value::float8 AS "referenceReadingValue",
    t.validation_reading_value::float8 AS "validationReadingValue", t.remuneration_percentage::float8 AS "remunerationPercentage",
    t.validation_inputs AS "validationInputs", ${party ? DISPATCH_COLUMN : 'NULL AS dispatch'}`;
}

/** Columns of an availability transaction seen by organization `me` (an SQL expression). */
export function availabilityColumns(me: string): string {
  return `t.id, t.created_at AS "createdAt",
  CASE WHEN t.seller_organization_id = ${me} THEN t.seller_created_by ELSE t.buyer_created_by END AS "createdBy",
  CASE WHEN t.seller_organization_id = ${me} THEN t.seller_organization_id ELSE t.buyer_organization_id END AS "organizationId",
  t.resource_id AS "resourceId", t.activation_price::float8 AS "activationPrice", t.availability_price::float8 AS "availabilityPrice",
  t.quantity::float8 AS quantity, t.impact_value::float8 AS "impactValue", t.availability_order_id AS "availabilityOrderId", t.market_id AS "marketId",
  t.substation_id AS "substationId",
  CASE WHEN t.seller_organization_id = ${me} THEN t.buyer_organization_id ELSE t.seller_organization_id END AS "counterpartOrganizationId",
  CASE WHEN t.seller_organization_id = ${me} THEN t.buyer_created_by ELSE t.seller_created_by END AS "counterpartCreatedBy",
  t.start, t."end", t.product_type AS "productType", t.delivery_validation_status AS "deliveryValidationStatus", t.validated_at AS "validatedAt",
  t.delivery_percentage::float8 AS "deliveryPercentage", t.delivered_quantity::float8 AS "deliveredQuantity",
  t.expected_delivered_quantity::float8 AS "expectedDeliveredQuantity", t.remuneration_percentage::float8 AS "remunerationPercentage"`;
}

const AVAILABILITY_COLUMNS = availabilityColumns('$1');

export interface PeriodQuery {
  organizationId: number;
  marketZoneId?: number;
  start: number;
  end: number;
}

export async function flexibilityTransactions(db: Queryable, q: PeriodQuery): Promise<{ flexibilityTransactions: unknown[]; otherFlexibilityTransactionsWithImpact: unknown[] }> {
  const params = [q.organizationId, new Date(q.start), new Date(q.end), q.marketZoneId ?? null];
  const period = `t.start < $3 AND t."end" > $2 AND ($4::int IS NULL OR t.market_zone_id = $4)`;
  const [own, other] = await Promise.all([
    db.query(`SELECT ${flexColumns('$1')} FROM flexibility_transactions t WHERE (t.seller_organization_id = $1 OR t.buyer_organization_id = $1) AND ${period} ORDER BY t.start, t.id`, params),
    db.query(
      `SELECT ${flexColumns('t.seller_organization_id', false)} FROM flexibility_transactions t
       WHERE t.seller_organization_id <> $1 AND t.buyer_organization_id <> $1 AND ${period}
         AND EXISTS (SELECT 1 FROM substation_impacts i JOIN substations s ON s.id = i.substation_id WHERE i.resource_id = t.resource_id AND s.organization_id = $1 AND i.factor <> 0)
       ORDER BY t.start, t.id`,
      params,
    ),
  ]);
  return { flexibilityTransactions: own.rows, otherFlexibilityTransactionsWithImpact: other.rows };
}

export async function availabilityTransactions(db: Queryable, q: PeriodQuery): Promise<unknown[]> {
  const { rows } = await db.query(
    `SELECT ${AVAILABILITY_COLUMNS} FROM availability_transactions t JOIN availability_orders o ON o.id = t.availability_order_id
     WHERE (t.seller_organization_id = $1 OR t.buyer_organization_id = $1) AND t.start < $3 AND t."end" > $2 AND ($4::int IS NULL OR o.market_zone_id = $4)
     ORDER BY t.start, t.id`,
    [q.organizationId, new Date(q.start), new Date(q.end), q.marketZoneId ?? null],
  );
  return rows;
}

export async function transactionsAffectingSubstation(db: Queryable, substationId: number, q: { start: number; end: number }): Promise<unknown[]> {
  const { rows } = await db.query(
    `SELECT t.id AS "flexibilityTransactionId", t.start, t."end", t.quantity::float8 AS quantity, (t.quantity * i.factor)::float8 AS "quantityAfterImpact",
       i.factor::float8 AS impact, t.delivery_validation_status AS "deliveryValidationStatus", t.delivery_percentage::float8 AS "deliveryPercentage",
       t.delivered_quantity::float8 AS "deliveredQuantity", t.reference_adjustment_quantity::float8 AS "referenceAdjustmentQuantity",
       t.reference_reading_value::float8 AS "referenceReadingValue", t.validation_reading_value::float8 AS "validationReadingValue"
     FROM flexibility_transactions t JOIN substation_impacts i ON i.resource_id = t.resource_id AND i.substation_id = $1
     WHERE t.start < $3 AND t."end" > $2 AND i.factor <> 0 ORDER BY t.start, t.id`,
    [substationId, new Date(q.start), new Date(q.end)],
  );
  return rows;
}

export async function flexibilityTransaction(db: Queryable, id: number, me: number): Promise<unknown | undefined> {
  const { rows } = await db.query(`SELECT ${flexColumns('$2')} FROM flexibility_transactions t WHERE t.id = $1`, [id, me]);
  return rows[0];
}
