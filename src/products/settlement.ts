// Settlement specification: GET /api/product/settlement/specification (docs/products.md,
// "Settlement specification").
//
// Which transactions: those of the organization (as seller or buyer) that START in
// [start, end), so consecutive periods never count one twice. Each appears once, on the
// organization's side: sold (it is the seller; counterpart = the buyer) or bought.
// Money (exact numeric in PostgreSQL, never binary floating point):
//   flexibility line  = round(quantity kWh × unitPrice × remunerationPercentage / 100, 2)
//   availability line = round(quantity kW × availabilityPrice × remunerationPercentage / 100, 2)
// rounded half away from zero per line; every total is the sum of its rounded lines. A
// transaction not validated yet is listed with its status and null percentages and contributes
// 0 until it is validated.
// The whole document is built by one SQL statement (PostgreSQL writes the JSON), so 100,000
// lines cost one round trip and no per-row work in the event loop.
import { arrayOf, int32Id, nullable, objectSchema } from '../http/schemas.ts';
import type { ApiRequest, RouteDef } from '../http/types.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import type { Queryable } from '../store/database.ts';
import { badRequest } from '../http/errors.ts';
import { periodQuery } from './schemas.ts';

const VALIDATED = 2;
const EMPTY = `json_build_object('totalRemunerationSum', 0, 'transactions', '[]'::json)`;

/** Both sides of one kind of transaction, with the money of each line. */
const sides = (table: string) => `
  SELECT true AS sold, t.buyer_organization_id AS cp, t.* FROM ${table} t WHERE t.seller_organization_id = $1 AND t.start >= $2 AND t.start < $3
  UNION ALL
  SELECT false AS sold, t.seller_organization_id AS cp, t.* FROM ${table} t WHERE t.buyer_organization_id = $1 AND t.start >= $2 AND t.start < $3`;

const SETTLEMENT_SQL = `
WITH f AS (
  SELECT s.*, CASE WHEN s.delivery_validation_status = ${VALIDATED} THEN round(s.quantity * s.unit_price * s.remuneration_percentage * 0.01, 2) ELSE 0 END AS money
  FROM (${sides('flexibility_transactions')}) s
), a AS (
  SELECT s.*, CASE WHEN s.delivery_validation_status = ${VALIDATED} THEN round(s.quantity * s.availability_price * s.remuneration_percentage * 0.01, 2) ELSE 0 END AS money
  FROM (${sides('availability_transactions')}) s
), fs AS (
  SELECT cp, sold, json_build_object('totalRemunerationSum', sum(money), 'transactions', json_agg(json_build_object(
    'flexibilityTransactionId', id, 'resourceId', resource_id, 'deliveryPercentage', delivery_percentage, 'remunerationPercentage', remuneration_percentage,
    'unitPrice', unit_price, 'totalRemuneration', money, 'totalQuantity', quantity, 'productType', product_type, 'deliveryValidationStatus', delivery_validation_status)
    ORDER BY start, id)) AS summary
  FROM f GROUP BY cp, sold
), avs AS (
  SELECT cp, sold, json_build_object('totalRemunerationSum', sum(money), 'transactions', json_agg(json_build_object(
    'availabilityTransactionId', id, 'resourceId', resource_id, 'substationId', substation_id, 'deliveryPercentage', delivery_percentage,
    'remunerationPercentage', remuneration_percentage, 'availabilityPrice', availability_price, 'totalRemuneration', money, 'totalQuantity', quantity,
    'productType', product_type, 'deliveryValidationStatus', delivery_validation_status)
    ORDER BY start, id)) AS summary
  FROM a GROUP BY cp, sold
), counterparts AS (
  SELECT json_agg(json_build_object('organizationId', c.cp,
    'flexibilitySoldSummary', coalesce((SELECT summary FROM fs WHERE fs.cp = c.cp AND fs.sold), ${EMPTY}),
    'flexibilityBoughtSummary', coalesce((SELECT summary FROM fs WHERE fs.cp = c.cp AND NOT fs.sold), ${EMPTY}),
    'availabilitySoldSummary', coalesce((SELECT summary FROM avs WHERE avs.cp = c.cp AND avs.sold), ${EMPTY}),
    'availabilityBoughtSummary', coalesce((SELECT summary FROM avs WHERE avs.cp = c.cp AND NOT avs.sold), ${EMPTY})) ORDER BY c.cp) AS list
  FROM (SELECT cp FROM fs UNION SELECT cp FROM avs) c
), per_resource AS (
  SELECT json_agg(json_build_object('resourceId', resource_id,
    'bought', json_build_object('totalAvailabilityRemunerationSum', ab, 'totalFlexibilityRemunerationSum', fb),
    'sold', json_build_object('totalAvailabilityRemunerationSum', asold, 'totalFlexibilityRemunerationSum', fsold)) ORDER BY resource_id) AS list
  FROM (
    SELECT resource_id,
      coalesce(sum(money) FILTER (WHERE kind = 'a' AND NOT sold), 0) AS ab, coalesce(sum(money) FILTER (WHERE kind = 'f' AND NOT sold), 0) AS fb,
      coalesce(sum(money) FILTER (WHERE kind = 'a' AND sold), 0) AS asold, coalesce(sum(money) FILTER (WHERE kind = 'f' AND sold), 0) AS fsold
    FROM (SELECT resource_id, 'f' AS kind, sold, money FROM f UNION ALL SELECT resource_id, 'a', sold, money FROM a) x
    GROUP BY resource_id
  ) sums
)
SELECT json_build_object('organizationId', $1::int, 'counterParts', coalesce(counterparts.list, '[]'::json),
  'remunerationPerResource', coalesce((SELECT list FROM per_resource), '[]'::json))::text AS json
FROM counterparts`;

/** The settlement specification of an organization for [start, end), as JSON text. */
export async function settlementSpecification(db: Queryable, q: { organizationId: number; start: number; end: number }): Promise<string> {
  const { rows } = await db.query<{ json: string }>(SETTLEMENT_SQL, [q.organizationId, new Date(q.start), new Date(q.end)]);
  return rows[0]!.json;
}

// Schemas (documentation and OpenAPI; the body is built by PostgreSQL).
const num = { type: 'number' };
const nNum = { type: ['number', 'null'] };
const int = { type: 'integer' };
const money = { type: 'number', description: 'Platform currency, 2 decimals (rounded half away from zero).' };

const flexibilityLine = objectSchema(
  {
    flexibilityTransactionId: int,
    resourceId: int,
    deliveryPercentage: nNum,
    remunerationPercentage: nNum,
    unitPrice: { ...num, description: 'Per kWh.' },
    totalRemuneration: { ...money, description: 'round(totalQuantity × unitPrice × remunerationPercentage / 100, 2); 0 until validated.' },
    totalQuantity: { ...num, description: 'The transaction’s quantity, kWh.' },
    productType: int,
    deliveryValidationStatus: int,
  },
  ['flexibilityTransactionId', 'resourceId', 'deliveryPercentage', 'remunerationPercentage', 'unitPrice', 'totalRemuneration', 'totalQuantity', 'productType', 'deliveryValidationStatus'],
  { title: 'FlexibilitySettlementLine' },
);

const availabilityLine = objectSchema(
  {
    availabilityTransactionId: int,
    resourceId: int,
    substationId: nullable(int),
    deliveryPercentage: nNum,
    remunerationPercentage: nNum,
    availabilityPrice: { ...num, description: 'Per kW for the period.' },
    totalRemuneration: { ...money, description: 'round(totalQuantity × availabilityPrice × remunerationPercentage / 100, 2); 0 until validated.' },
    totalQuantity: { ...num, description: 'The reserved capacity, kW.' },
    productType: int,
    deliveryValidationStatus: int,
  },
  ['availabilityTransactionId', 'resourceId', 'substationId', 'deliveryPercentage', 'remunerationPercentage', 'availabilityPrice', 'totalRemuneration', 'totalQuantity', 'productType', 'deliveryValidationStatus'],
  { title: 'AvailabilitySettlementLine' },
);

const summary = (line: unknown, title: string) =>
  objectSchema({ totalRemunerationSum: { ...money, description: 'The sum of the lines’ totalRemuneration.' }, transactions: arrayOf(line) }, ['totalRemunerationSum', 'transactions'], { title });
const flexibilitySummary = summary(flexibilityLine, 'FlexibilitySettlementSummary');
const availabilitySummary = summary(availabilityLine, 'AvailabilitySettlementSummary');
const sums = objectSchema({ totalAvailabilityRemunerationSum: money, totalFlexibilityRemunerationSum: money }, ['totalAvailabilityRemunerationSum', 'totalFlexibilityRemunerationSum'], { title: 'RemunerationSums' });

export const settlementSpecificationSchema = objectSchema(
  {
    organizationId: int,
    counterParts: arrayOf(
      objectSchema(
        {
          organizationId: int,
          flexibilitySoldSummary: flexibilitySummary,
          flexibilityBoughtSummary: flexibilitySummary,
          availabilitySoldSummary: availabilitySummary,
          availabilityBoughtSummary: availabilitySummary,
        },
        ['organizationId', 'flexibilitySoldSummary', 'flexibilityBoughtSummary', 'availabilitySoldSummary', 'availabilityBoughtSummary'],
        { title: 'SettlementCounterPart' },
      ),
    ),
    remunerationPerResource: arrayOf(objectSchema({ resourceId: int, bought: sums, sold: sums }, ['resourceId', 'bought', 'sold'], { title: 'ResourceRemuneration' })),
  },
  ['organizationId', 'counterParts', 'remunerationPerResource'],
  { title: 'SettlementSpecification' },
);

type Query = { organizationId: number; start: string; end: string };

export function settlementRoutes(db: Queryable): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/product/settlement/specification',
      summary: 'Settlement specification of an organization for a period',
      description:
        'Per counterpart, the flexibility and availability transactions the organization sold and bought that start in [start, end), with their remuneration; ' +
        'and the sums per grid resource. Lines are rounded to 2 decimals (half away from zero); totals are sums of lines; unvalidated transactions count 0 (docs/products.md).',
      tags: ['Products: settlement'],
      auth: { permission: 'Order.Organization.Read', feature: 'Settlements', organization: { in: 'query', name: 'organizationId' } },
      query: periodQuery(),
      responses: { 200: { description: 'The settlement specification', schema: settlementSpecificationSchema } },
      async handler(req: ApiRequest<unknown, Query>) {
        const start = parseUtcTimestamp(req.query.start)!;
        const end = parseUtcTimestamp(req.query.end)!;
        if (start >= end) throw badRequest('start must be before end', [{ path: 'query.end', message: 'must be after start' }]);
        return { status: 200, raw: await settlementSpecification(db, { organizationId: req.query.organizationId, start, end }), contentType: 'application/json' };
      },
    },
  ];
}
