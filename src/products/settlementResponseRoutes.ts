// Settlement agreed: the seller's responses to settlement lines and the disputes they open
// (settlementResponses.ts has the rules; docs/products.md, "Settlement agreed").
//   POST /api/product/settlement/responses                     the seller accepts or disputes a line
//   GET  /api/product/settlement/responses                     responses of a period (asOf)
//   GET  /api/product/settlement/disputes                      disputes of a period (asOf, state)
//   POST /api/product/settlement/disputes/{id}/resolution      the buyer records what was settled
//   POST /api/product/settlement/disputes/{id}/withdrawal      the seller withdraws its dispute
import { arrayOf, dateTime, idParams, int32Id, nullable, objectSchema, utcDateTime } from '../http/schemas.ts';
import type { ApiRequest, AuthRequirement, RouteDef } from '../http/types.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import { badRequest } from '../http/errors.ts';
import type { Pool } from '../store/database.ts';
import { periodQuery } from './schemas.ts';
import { MAX_SETTLED, listDisputes, listResponses, resolveDispute, respond, withdrawDispute, type HistoryQuery, type ResolutionInput, type ResponseInput, type WithdrawalInput } from './settlementResponses.ts';

const int = { type: 'integer' };
const nInt = nullable(int);
const money = { type: 'number', description: 'Platform currency.' };
const reason = (description: string) => nullable({ type: 'string', maxLength: 2000 }, { default: null, description });
const line = {
  flexibilityTransactionId: { ...nInt, description: 'The line’s transaction (one of the two ids is set).' },
  availabilityTransactionId: nInt,
  sellerOrganizationId: int,
  buyerOrganizationId: int,
};

export const settlementResponseSchema = objectSchema(
  {
    id: int,
    ...line,
    response: { type: 'string', enum: ['accepted', 'disputed'] },
    reason: nullable({ type: 'string' }),
    lineRemuneration: { ...money, description: 'The line’s totalRemuneration when it was answered.' },
    disputeId: { ...nInt, description: 'The dispute a disputed response opened.' },
    createdBy: { type: 'string' },
    recordedAt: dateTime,
  },
  ['id', 'flexibilityTransactionId', 'availabilityTransactionId', 'sellerOrganizationId', 'buyerOrganizationId', 'response', 'reason', 'lineRemuneration', 'disputeId', 'createdBy', 'recordedAt'],
  { title: 'SettlementResponse' },
);

export const disputeSchema = objectSchema(
  {
    id: int,
    ...line,
    state: { type: 'string', enum: ['open', 'resolved', 'withdrawn'] },
    reason: { type: 'string' },
    disputedRemuneration: { ...money, description: 'The line’s totalRemuneration when it was disputed.' },
    openedBy: { type: 'string' },
    openedAt: dateTime,
    closedBy: nullable({ type: 'string' }),
    closedAt: nullable(dateTime),
    closingReason: nullable({ type: 'string' }),
    settledRemuneration: { ...nullable(money), description: 'Resolved: the amount the parties settled on (the line’s agreedRemuneration).' },
    settledRemunerationPercentage: { ...nullable({ type: 'number' }), description: 'Resolved: the remuneration percentage, when they settled on one.' },
  },
  [
    'id',
    'flexibilityTransactionId',
    'availabilityTransactionId',
    'sellerOrganizationId',
    'buyerOrganizationId',
    'state',
    'reason',
    'disputedRemuneration',
    'openedBy',
    'openedAt',
    'closedBy',
    'closedAt',
    'closingReason',
    'settledRemuneration',
    'settledRemunerationPercentage',
  ],
  { title: 'SettlementDispute' },
);

const responseInput = objectSchema(
  {
    organizationId: { ...int32Id, description: 'The seller of the line’s transaction.' },
    flexibilityTransactionId: { ...int32Id, description: 'The line: give this or availabilityTransactionId.' },
    availabilityTransactionId: int32Id,
    response: { type: 'string', enum: ['accepted', 'disputed'] },
    reason: reason('Why; required when disputed.'),
    specificationAsOf: { ...utcDateTime, description: 'The asOf of the specification answered: refused (409) if the line changed after it.' },
  },
  ['organizationId', 'response'],
  { title: 'SettlementResponseInput' },
);

const resolutionInput = objectSchema(
  {
    organizationId: { ...int32Id, description: 'The buyer of the line’s transaction.' },
    totalRemuneration: { type: 'number', minimum: 0, maximum: MAX_SETTLED, description: 'The amount the parties settled on (at most 2 decimals): the line’s agreedRemuneration.' },
    remunerationPercentage: nullable({ type: 'number', minimum: 0, maximum: 100 }, { default: null, description: 'The remuneration percentage settled on, when the parties agreed on one (kept for the record).' }),
    reason: reason('What was agreed, for the record.'),
  },
  ['organizationId', 'totalRemuneration'],
  { title: 'SettlementDisputeResolution' },
);

const withdrawalInput = objectSchema({ organizationId: { ...int32Id, description: 'The seller who disputed.' }, reason: reason('Why, for the record.') }, ['organizationId'], { title: 'SettlementDisputeWithdrawal' });

const asOfQuery = { ...utcDateTime, description: 'As at this instant (default: now).' };
const TAGS = ['Products: settlement'];
const read: AuthRequirement = { permission: 'Order.Organization.Read', feature: 'Settlements', organization: { in: 'query', name: 'organizationId' } };
const write: AuthRequirement = { permission: 'Order.Organization.ReadWrite', feature: 'Settlements', organization: { in: 'body', name: 'organizationId' } };

type Query = { organizationId: number; start: string; end: string; asOf?: string; state?: HistoryQuery['state'] };

function historyQuery(q: Query): HistoryQuery {
  const start = parseUtcTimestamp(q.start)!;
  const end = parseUtcTimestamp(q.end)!;
  if (start >= end) throw badRequest('start must be before end', [{ path: 'query.end', message: 'must be after start' }]);
  return { organizationId: q.organizationId, start, end, asOf: q.asOf === undefined ? undefined : parseUtcTimestamp(q.asOf)!, state: q.state };
}

/** `retryMs`: VALIDATION_RETRY_MS (an availability transaction re-validated when a call is settled). */
export function settlementResponseRoutes(pool: Pool, retryMs: number): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/api/product/settlement/responses',
      summary: 'Accept or dispute a settlement line (the seller)',
      description:
        'The seller of a transaction answers its settlement line once it has a validation outcome: `accepted` agrees to its totalRemuneration (final); `disputed` opens a dispute. ' +
        '403 for the buyer; 409 while the line is pending, disputed or final, or (with specificationAsOf) when it changed after that specification (docs/products.md, "Settlement agreed").',
      tags: TAGS,
      auth: write,
      body: responseInput,
      bodyExample: { organizationId: 2, flexibilityTransactionId: 17, response: 'disputed', reason: 'Our meter shows 9.5 kWh delivered; corrected readings sent', specificationAsOf: '2024-07-02T08:00:00.000Z' },
      responses: { 201: { description: 'The response, and the dispute it opened', schema: objectSchema({ response: settlementResponseSchema, dispute: nullable(disputeSchema) }, ['response', 'dispute'], { title: 'SettlementResponseResult' }) } },
      handler: async (req: ApiRequest<unknown, unknown, ResponseInput>) => ({ status: 201, body: await respond(pool, req.body, req.principal!.subject, retryMs) }),
    },
    {
      method: 'GET',
      path: '/api/product/settlement/responses',
      summary: 'Responses to the settlement lines of a period',
      description: 'Every response to a line (of a transaction starting in [start, end)) the organization is a party to, as of `asOf` (default now), oldest first.',
      tags: TAGS,
      auth: read,
      query: periodQuery({ asOf: asOfQuery }),
      responses: { 200: { description: 'The responses', schema: objectSchema({ asOf: utcDateTime, responses: arrayOf(settlementResponseSchema) }, ['asOf', 'responses'], { title: 'SettlementResponses' }) } },
      handler: async (req: ApiRequest<unknown, Query>) => ({ status: 200, body: await listResponses(pool, historyQuery(req.query)) }),
    },
    {
      method: 'GET',
      path: '/api/product/settlement/disputes',
      summary: 'Disputes of the settlement lines of a period',
      description: 'Disputes of lines (of transactions starting in [start, end)) the organization is a party to, each in its state as of `asOf` (default now), by when they were opened. `state` narrows to one state.',
      tags: TAGS,
      auth: read,
      query: periodQuery({ asOf: asOfQuery, state: { type: 'string', enum: ['open', 'resolved', 'withdrawn'] } }),
      responses: { 200: { description: 'The disputes', schema: objectSchema({ asOf: utcDateTime, disputes: arrayOf(disputeSchema) }, ['asOf', 'disputes'], { title: 'SettlementDisputes' }) } },
      handler: async (req: ApiRequest<unknown, Query>) => ({ status: 200, body: await listDisputes(pool, historyQuery(req.query)) }),
    },
    {
      method: 'POST',
      path: '/api/product/settlement/disputes/:disputeId/resolution',
      summary: 'Resolve a dispute with the figures the parties settled on (the buyer)',
      description: 'The line becomes final at the settled amount (its agreedRemuneration). 403 for the seller; 409 when the dispute is no longer open.',
      tags: TAGS,
      auth: write,
      params: idParams('disputeId'),
      body: resolutionInput,
      bodyExample: { organizationId: 1, totalRemuneration: 8.08, remunerationPercentage: 95, reason: 'Agreed on 95 % after the corrected readings' },
      responses: { 200: { description: 'The dispute, resolved', schema: disputeSchema } },
      handler: async (req: ApiRequest<{ disputeId: number }, unknown, ResolutionInput>) => ({ status: 200, body: await resolveDispute(pool, req.params.disputeId, req.body, req.principal!.subject, retryMs) }),
    },
    {
      method: 'POST',
      path: '/api/product/settlement/disputes/:disputeId/withdrawal',
      summary: 'Withdraw a dispute (the seller)',
      description: 'The line is unanswered again: the seller may accept it or dispute it anew. 403 for the buyer; 409 when the dispute is no longer open.',
      tags: TAGS,
      auth: write,
      params: idParams('disputeId'),
      body: withdrawalInput,
      bodyExample: { organizationId: 2, reason: 'The re-validation after our corrected readings is right' },
      responses: { 200: { description: 'The dispute, withdrawn', schema: disputeSchema } },
      handler: async (req: ApiRequest<{ disputeId: number }, unknown, WithdrawalInput>) => ({ status: 200, body: await withdrawDispute(pool, req.params.disputeId, req.body, req.principal!.subject) }),
    },
  ];
}
