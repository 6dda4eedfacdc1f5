// Settlement routes: the specification (GET /api/product/settlement/specification) and the
// changes between two instants (GET /api/product/settlement/changes), with their response
// schemas (documentation and OpenAPI); the documents themselves are built in SQL by settlement.ts.
// The settlement responses (/api/product/settlement/responses, /disputes, /disputes/{id}/resolution,
// /disputes/{id}/withdrawal) are in settlementResponseRoutes.ts.
import { arrayOf, nullable, objectSchema, utcDateTime } from '../http/schemas.ts';
import type { ApiRequest, RouteDef } from '../http/types.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import type { Pool } from '../store/database.ts';
import { badRequest } from '../http/errors.ts';
import { periodQuery } from './schemas.ts';
import { settlementChanges, settlementSpecification } from './settlement.ts';
import { settlementResponseRoutes } from './settlementResponseRoutes.ts';

// Schemas (documentation and OpenAPI; the body is built by PostgreSQL).
const num = { type: 'number' };
const nNum = { type: ['number', 'null'] };
const int = { type: 'integer' };
const money = { type: 'number', description: 'Platform currency, 2 decimals (rounded half away from zero).' };

/** What a line shows of its agreement (settlement responses, docs/products.md "Settlement agreed"). */
const agreement = {
  agreementState: {
    type: 'string',
    enum: ['unanswered', 'accepted', 'disputed', 'resolved'],
    description: 'unanswered: no response yet (or a dispute was withdrawn); accepted by the seller; disputed: a dispute is open; resolved: the dispute was resolved. accepted and resolved lines are final.',
  },
  agreedRemuneration: nullable(money, { description: 'The amount agreed on: the line’s totalRemuneration when accepted, the settled amount when resolved; null otherwise.' }),
  disputeId: nullable(int, { description: 'The open or resolved dispute deciding the state.' }),
};
const agreementKeys = ['agreementState', 'agreedRemuneration', 'disputeId'];

export const flexibilityLineSchema = objectSchema(
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
    ...agreement,
  },
  ['flexibilityTransactionId', 'resourceId', 'deliveryPercentage', 'remunerationPercentage', 'unitPrice', 'totalRemuneration', 'totalQuantity', 'productType', 'deliveryValidationStatus', ...agreementKeys],
  { title: 'FlexibilitySettlementLine' },
);

export const availabilityLineSchema = objectSchema(
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
    ...agreement,
  },
  [
    'availabilityTransactionId',
    'resourceId',
    'substationId',
    'deliveryPercentage',
    'remunerationPercentage',
    'availabilityPrice',
    'totalRemuneration',
    'totalQuantity',
    'productType',
    'deliveryValidationStatus',
    ...agreementKeys,
  ],
  { title: 'AvailabilitySettlementLine' },
);

const summary = (line: unknown, title: string) =>
  objectSchema(
    {
      totalRemunerationSum: { ...money, description: 'The sum of the lines’ totalRemuneration.' },
      agreedRemunerationSum: { ...money, description: 'The sum of the agreed lines’ agreedRemuneration (accepted, or resolved at the settled amount).' },
      transactions: arrayOf(line),
    },
    ['totalRemunerationSum', 'agreedRemunerationSum', 'transactions'],
    { title },
  );
const flexibilitySummary = summary(flexibilityLineSchema, 'FlexibilitySettlementSummary');
const availabilitySummary = summary(availabilityLineSchema, 'AvailabilitySettlementSummary');
const sums = objectSchema({ totalAvailabilityRemunerationSum: money, totalFlexibilityRemunerationSum: money }, ['totalAvailabilityRemunerationSum', 'totalFlexibilityRemunerationSum'], { title: 'RemunerationSums' });
const asOfAnswered = { ...utcDateTime, description: 'The instant this answer is for: asking again with this asOf gives the same document, byte for byte.' };

export const settlementSpecificationSchema = objectSchema(
  {
    organizationId: int,
    asOf: asOfAnswered,
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
  ['organizationId', 'asOf', 'counterParts', 'remunerationPerResource'],
  { title: 'SettlementSpecification' },
);

const lineVersion = (line: unknown) => nullable(objectSchema({ recordedAt: utcDateTime, line }, ['recordedAt', 'line']));

export const settlementChangesSchema = objectSchema(
  {
    organizationId: int,
    since: utcDateTime,
    until: { ...utcDateTime, description: 'The instant compared with since (now when not asked for).' },
    changes: arrayOf(
      objectSchema(
        {
          counterpartOrganizationId: int,
          side: { type: 'string', enum: ['sold', 'bought'] },
          kind: { type: 'string', enum: ['flexibility', 'availability'] },
          transactionId: int,
          before: { ...lineVersion({ oneOf: [flexibilityLineSchema, availabilityLineSchema] }), description: 'The line as of since and when that version was recorded; null when it was not in the specification then.' },
          after: { ...lineVersion({ oneOf: [flexibilityLineSchema, availabilityLineSchema] }), description: 'The line as of until; null when it is no longer in the specification.' },
        },
        ['counterpartOrganizationId', 'side', 'kind', 'transactionId', 'before', 'after'],
        { title: 'SettlementLineChange' },
      ),
    ),
  },
  ['organizationId', 'since', 'until', 'changes'],
  { title: 'SettlementChanges' },
);

type Query = { organizationId: number; start: string; end: string; asOf?: string };
type ChangesQuery = { organizationId: number; start: string; end: string; since: string; until?: string };

const AUTH = { permission: 'Order.Organization.Read', feature: 'Settlements', organization: { in: 'query', name: 'organizationId' } } as const;

function period(q: { start: string; end: string }): { start: number; end: number } {
  const start = parseUtcTimestamp(q.start)!;
  const end = parseUtcTimestamp(q.end)!;
  if (start >= end) throw badRequest('start must be before end', [{ path: 'query.end', message: 'must be after start' }]);
  return { start, end };
}

const instant = (s: string | undefined) => (s === undefined ? undefined : parseUtcTimestamp(s)!);

/** `retryMs`: VALIDATION_RETRY_MS (settlementResponseRoutes.ts). */
export function settlementRoutes(pool: Pool, retryMs: number): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/product/settlement/specification',
      summary: 'Settlement specification of an organization for a period',
      description:
        'Per counterpart, the flexibility and availability transactions the organization sold and bought that start in [start, end), with their remuneration and agreement; ' +
        'and the sums per grid resource. Lines are rounded to 2 decimals (half away from zero); totals are sums of lines; unvalidated transactions count 0. ' +
        '`asOf` (default now) answers exactly what was answered at that instant; the answer states the instant it is for (docs/products.md).',
      tags: ['Products: settlement'],
      auth: AUTH,
      query: periodQuery({ asOf: { ...utcDateTime, description: 'Answer as at this instant (default: now); not later than now nor earlier than when settlement versions began.' } }),
      responses: { 200: { description: 'The settlement specification', schema: settlementSpecificationSchema } },
      async handler(req: ApiRequest<unknown, Query>) {
        const { start, end } = period(req.query);
        const json = await settlementSpecification(pool, { organizationId: req.query.organizationId, start, end, asOf: instant(req.query.asOf) });
        return { status: 200, raw: json, contentType: 'application/json' };
      },
    },
    {
      method: 'GET',
      path: '/api/product/settlement/changes',
      summary: 'Settlement lines that changed between two instants',
      description:
        'Every line of the organization’s specification for [start, end) whose figures, status or agreement differ between `since` and `until` (default now), with both versions ' +
        '(before: as of since, after: as of until; null where the line was not, or is no longer, in the specification). Same order as the specification (docs/products.md).',
      tags: ['Products: settlement'],
      auth: AUTH,
      query: periodQuery({ since: utcDateTime, until: { ...utcDateTime, description: 'Default: now.' } }, ['since']),
      responses: { 200: { description: 'The changed lines', schema: settlementChangesSchema } },
      async handler(req: ApiRequest<unknown, ChangesQuery>) {
        const { start, end } = period(req.query);
        const json = await settlementChanges(pool, { organizationId: req.query.organizationId, start, end, since: instant(req.query.since)!, until: instant(req.query.until) });
        return { status: 200, raw: json, contentType: 'application/json' };
      },
    },
    ...settlementResponseRoutes(pool, retryMs),
  ];
}
