// Settlement specification route: GET /api/product/settlement/specification and its response
// schema (documentation and OpenAPI); the document itself is built in SQL by settlement.ts.
import { arrayOf, nullable, objectSchema } from '../http/schemas.ts';
import type { ApiRequest, RouteDef } from '../http/types.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import type { Pool } from '../store/database.ts';
import { badRequest } from '../http/errors.ts';
import { periodQuery } from './schemas.ts';
import { settlementSpecification } from './settlement.ts';

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

export function settlementRoutes(pool: Pool): RouteDef[] {
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
        return { status: 200, raw: await settlementSpecification(pool, { organizationId: req.query.organizationId, start, end }), contentType: 'application/json' };
      },
    },
  ];
}
