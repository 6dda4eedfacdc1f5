// Product endpoints: orders (create, list), acceptance of flexibility orders, transactions,
// transactions affecting a substation, and availability offers. A transaction's validation
// history (/api/product/transaction/{kind}/{id}/validations) is in validationHistoryRoutes.ts.
import type { Feature } from '../auth/catalogue.ts';
import { HttpError, notFound } from '../http/errors.ts';
import { arrayOf, idParams, int32Id } from '../http/schemas.ts';
import type { ApiRequest, AuthRequirement, RouteDef } from '../http/types.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import type { Pool } from '../store/database.ts';
import { deleteOffers, offersOfResource, ownResource, writeOffers, type OfferInput } from './offers.ts';
import * as orders from './orders.ts';
import {
  acceptanceInput,
  availabilityOfferSchema,
  availabilityOrderInput,
  availabilityOrderSchema,
  availabilityTransactionSchema,
  flexibilityOrderInput,
  flexibilityOrderSchema,
  flexibilityTransactionSchema,
  flexibilityTransactionsSchema,
  offersInput,
  periodQuery,
  substationImpactSchema,
} from './schemas.ts';
import * as transactions from './transactions.ts';
import { validationHistoryRoutes } from './validationHistoryRoutes.ts';

type Period = { organizationId: number; start: string; end: string; marketZoneId?: number };

const read = (feature: Feature, where: 'query' | 'body' = 'query'): AuthRequirement => ({ permission: 'Order.Organization.Read', feature, organization: { in: where, name: 'organizationId' } });
const write = (feature: Feature, where: 'query' | 'body' = 'body'): AuthRequirement => ({ permission: 'Order.Organization.ReadWrite', feature, organization: { in: where, name: 'organizationId' } });

function period(q: Period): { organizationId: number; marketZoneId?: number; start: number; end: number } {
  const start = parseUtcTimestamp(q.start)!;
  const end = parseUtcTimestamp(q.end)!;
  if (start >= end) throw new HttpError('validation_failed', 'start must be before end', { errors: [{ path: 'query.end', message: 'must be after start' }] });
  return { organizationId: q.organizationId, marketZoneId: q.marketZoneId, start, end };
}

export function productRoutes(pool: Pool): RouteDef[] {
  const ordersTag = ['Products: orders'];
  const transactionsTag = ['Products: transactions'];
  const offersTag = ['Products: offers'];
  return [
    {
      method: 'POST',
      path: '/api/product/order/flexibility',
      summary: 'Create a flexibility order (buy activated energy)',
      description: 'On the zone’s time grid; quantities multiples of the zone’s step; minQuantity ≤ maxQuantity; prices ≥ 0; expiresAt before start and in the future; targets members of the zone.',
      tags: ordersTag,
      auth: write('Grid'),
      body: flexibilityOrderInput,
      bodyExample: {
        organizationId: 1,
        marketZoneId: 1,
        productType: 1,
        start: '2024-06-01T16:00:00Z',
        end: '2024-06-01T17:00:00Z',
        expiresAt: '2024-06-01T15:00:00Z',
        unitPrice: 0.85,
        minQuantity: 10,
        maxQuantity: 100,
      },
      responses: { 201: { description: 'The order', schema: flexibilityOrderSchema } },
      handler: async (req: ApiRequest<unknown, unknown, orders.FlexibilityOrderInput>) => ({ status: 201, body: await orders.createFlexibilityOrder(pool, req.body, req.principal!.subject) }),
    },
    {
      method: 'GET',
      path: '/api/product/order/flexibility',
      summary: 'Flexibility orders overlapping a period',
      description: 'Orders of the organization’s market zones that target it or are open to all, and its own orders. `marketZoneId` narrows to one zone.',
      tags: ordersTag,
      auth: read('Grid'),
      query: periodQuery({ marketZoneId: int32Id }),
      responses: { 200: { description: 'The orders, by start', schema: arrayOf(flexibilityOrderSchema) } },
      handler: async (req: ApiRequest<unknown, Period>) => ({ status: 200, body: await orders.listFlexibilityOrders(pool, period(req.query)) }),
    },
    {
      method: 'POST',
      path: '/api/product/order/flexibility/:orderId/acceptance',
      summary: 'Accept (part of) a flexibility order with a grid resource',
      description:
        'Creates a flexibility transaction (with a transactionCorrelationId) for `quantity` (≥ minQuantity, ≤ remainingQuantity, a multiple of the zone step). ' +
        'Concurrent acceptances never take more than remains: the late ones get 409.',
      tags: ordersTag,
      auth: write('Grid'),
      params: idParams('orderId'),
      body: acceptanceInput,
      bodyExample: { organizationId: 2, resourceId: 7, quantity: 50 },
      responses: { 201: { description: 'The flexibility transaction', schema: flexibilityTransactionSchema } },
      async handler(req: ApiRequest<{ orderId: number }, unknown, orders.Acceptance>) {
        const id = await orders.acceptFlexibilityOrder(pool, req.params.orderId, req.body, req.principal!.subject);
        return { status: 201, body: await transactions.flexibilityTransaction(pool, id, req.body.organizationId) };
      },
    },
    {
      method: 'POST',
      path: '/api/product/order/availability',
      summary: 'Create an availability order (buy reserved capacity)',
      description: 'Clears at expiresAt (docs/products.md: merit order). Same grid, step and target rules as flexibility orders.',
      tags: ordersTag,
      auth: write('Grid'),
      body: availabilityOrderInput,
      bodyExample: {
        organizationId: 1,
        marketZoneId: 1,
        substationId: 3,
        productType: 3,
        start: '2024-07-01T00:00:00Z',
        end: '2024-08-01T00:00:00Z',
        expiresAt: '2024-06-20T12:00:00Z',
        flexibilityOrdersExpireAt: '2024-07-31T23:00:00Z',
        quantity: 200,
        availabilityPrice: 12.5,
        impact: 0.5,
      },
      responses: { 201: { description: 'The order', schema: availabilityOrderSchema } },
      handler: async (req: ApiRequest<unknown, unknown, orders.AvailabilityOrderInput>) => ({ status: 201, body: await orders.createAvailabilityOrder(pool, req.body, req.principal!.subject) }),
    },
    {
      method: 'GET',
      path: '/api/product/order/availability/resource/:resourceId',
      summary: 'Availability orders a resource may offer on',
      description: 'Orders of the resource’s zone open to (or targeting) the organization, for this or any resource, of a product the resource may deliver, overlapping the period.',
      tags: ordersTag,
      auth: read('ResourceManagement'),
      params: idParams('resourceId'),
      query: periodQuery(),
      responses: { 200: { description: 'The orders, by start', schema: arrayOf(availabilityOrderSchema) } },
      async handler(req: ApiRequest<{ resourceId: number }, Period>) {
        const q = period(req.query);
        await ownResource(pool, req.params.resourceId, req.principal!.globalAdmin ? null : q.organizationId);
        return { status: 200, body: await orders.availabilityOrdersForResource(pool, req.params.resourceId, q) };
      },
    },
    {
      method: 'GET',
      path: '/api/product/transaction/flexibility',
      summary: 'Flexibility transactions of an organization, and others’ affecting its substations',
      tags: transactionsTag,
      auth: read('Grid'),
      query: periodQuery({ marketZoneId: int32Id }),
      responses: { 200: { description: 'Own transactions and others’ with impact on the organization’s substations', schema: flexibilityTransactionsSchema } },
      handler: async (req: ApiRequest<unknown, Period>) => ({ status: 200, body: await transactions.flexibilityTransactions(pool, period(req.query)) }),
    },
    {
      method: 'GET',
      path: '/api/product/transaction/availability',
      summary: 'Availability transactions of an organization',
      tags: transactionsTag,
      auth: read('Grid'),
      query: periodQuery({ marketZoneId: int32Id }),
      responses: { 200: { description: 'The transactions, by start', schema: arrayOf(availabilityTransactionSchema) } },
      handler: async (req: ApiRequest<unknown, Period>) => ({ status: 200, body: await transactions.availabilityTransactions(pool, period(req.query)) }),
    },
    {
      method: 'GET',
      path: '/api/product/transaction/flexibility/affecting/substation/:substationId',
      summary: 'Flexibility transactions affecting a substation, with their impact',
      description: 'impact = the resource’s impact factor on the substation; quantityAfterImpact = quantity × impact. The organization must be a member of the substation’s zone.',
      tags: transactionsTag,
      auth: read('DecisionSupport'),
      params: idParams('substationId'),
      query: periodQuery(),
      responses: { 200: { description: 'Transactions with non-zero impact, by start', schema: arrayOf(substationImpactSchema) } },
      async handler(req: ApiRequest<{ substationId: number }, Period>) {
        const q = period(req.query);
        const { rows } = await pool.query<{ member: boolean }>(
          'SELECT EXISTS (SELECT 1 FROM market_zone_organizations m WHERE m.market_zone_id = s.market_zone_id AND m.organization_id = $2) AS member FROM substations s WHERE s.id = $1',
          [req.params.substationId, q.organizationId],
        );
        if (!rows[0] || (!rows[0].member && !req.principal!.globalAdmin)) throw notFound(`Substation ${req.params.substationId}`);
        return { status: 200, body: await transactions.transactionsAffectingSubstation(pool, req.params.substationId, q) };
      },
    },
    {
      method: 'GET',
      path: '/api/product/offer/availability/resource/:resourceId',
      summary: 'Availability offers of a resource',
      description: 'Offers on orders overlapping the period. Only the organization’s own resources.',
      tags: offersTag,
      auth: read('ResourceManagement'),
      params: idParams('resourceId'),
      query: periodQuery(),
      responses: { 200: { description: 'The offers', schema: arrayOf(availabilityOfferSchema) } },
      async handler(req: ApiRequest<{ resourceId: number }, Period>) {
        const q = period(req.query);
        await ownResource(pool, req.params.resourceId, req.principal!.globalAdmin ? null : q.organizationId);
        return { status: 200, body: await offersOfResource(pool, req.params.resourceId, q) };
      },
    },
    {
      method: 'POST',
      path: '/api/product/offer/availability/resource/:resourceId',
      summary: 'Offer a resource’s capacity on availability orders',
      description: 'Creates one offer per order (409-style 400 when the resource already has one: use PUT). Only open orders; the whole request is atomic.',
      tags: offersTag,
      auth: write('ResourceManagement'),
      params: idParams('resourceId'),
      body: offersInput,
      bodyExample: { organizationId: 2, offers: [{ availabilityOrderId: 4, activationPrice: 0.9, maxQuantity: 100, minQuantity: 10 }] },
      responses: { 201: { description: 'The offers created', schema: arrayOf(availabilityOfferSchema) } },
      async handler(req: ApiRequest<{ resourceId: number }, unknown, { organizationId: number; offers: OfferInput[] }>) {
        return { status: 201, body: await writeOffers(pool, req.params.resourceId, req.body.organizationId, req.body.offers, req.principal!.subject, 'create') };
      },
    },
    {
      method: 'PUT',
      path: '/api/product/offer/availability/resource/:resourceId',
      summary: 'Change a resource’s offers on availability orders',
      description: 'Replaces the price and quantities of existing offers. Only open orders; the whole request is atomic.',
      tags: offersTag,
      auth: write('ResourceManagement'),
      params: idParams('resourceId'),
      body: offersInput,
      bodyExample: { organizationId: 2, offers: [{ availabilityOrderId: 4, activationPrice: 0.9, maxQuantity: 100, minQuantity: 10 }] },
      responses: { 200: { description: 'The offers as changed', schema: arrayOf(availabilityOfferSchema) } },
      async handler(req: ApiRequest<{ resourceId: number }, unknown, { organizationId: number; offers: OfferInput[] }>) {
        return { status: 200, body: await writeOffers(pool, req.params.resourceId, req.body.organizationId, req.body.offers, req.principal!.subject, 'update') };
      },
    },
    {
      method: 'DELETE',
      path: '/api/product/offer/availability/resource/:resourceId',
      summary: 'Withdraw a resource’s offers',
      description: 'By availability order ids; only while the orders are open. All or nothing.',
      tags: offersTag,
      auth: write('ResourceManagement', 'query'),
      params: idParams('resourceId'),
      query: {
        type: 'object',
        properties: { organizationId: int32Id, availabilityOrderIds: arrayOf(int32Id, { minItems: 1, maxItems: 1000, description: 'Repeat the parameter or separate with commas.' }) },
        required: ['organizationId', 'availabilityOrderIds'],
        additionalProperties: false,
      },
      responses: { 204: { description: 'Withdrawn' } },
      async handler(req: ApiRequest<{ resourceId: number }, { organizationId: number; availabilityOrderIds: number[] }>) {
        await deleteOffers(pool, req.params.resourceId, req.query.organizationId, [...new Set(req.query.availabilityOrderIds)]);
        return { status: 204 };
      },
    },
    ...validationHistoryRoutes(pool),
  ];
}
