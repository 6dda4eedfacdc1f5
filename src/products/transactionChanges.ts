// Changes and cancellations of flexibility transactions (docs/flexibility-loop.md).
//
// The buyer (the organization whose order the transaction fills) may, until the period starts:
//   - change it: a smaller quantity (the provider accepted at most what it has; not below the
//     order's minQuantity, on the zone's step) and/or another period inside the order's period,
//     on the zone's grid, starting in the future;
//   - cancel it: the transaction is deleted; its settlement line ends, its event is deleted from
//     the VTN, and flexibility_transaction_amendments keeps what it was.
// The quantity given up goes back to no one (the order's remainingQuantity is not raised: the
// buyer changed its need). The seller cannot change or cancel: it committed to the trade. Each
// write queues the transaction's dispatch (migration 007's triggers), so the VEN's event follows.
import type { TimeResolution } from '../codes.ts';
import { HttpError, badRequest, conflict, notFound, type FieldError } from '../http/errors.ts';
import { idParams, int32Id, objectSchema } from '../http/schemas.ts';
import type { ApiRequest, AuthRequirement, RouteDef } from '../http/types.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import { addEventDays } from '../meter/meterStore.ts';
import { withTransaction, type Pool, type PoolClient } from '../store/database.ts';
import { decimal, decimalText } from './decimal.ts';
import { eventDays } from './orders.ts';
import { quantityErrors, timeGridErrors } from './rules.ts';
import { flexibilityTransactionSchema } from './schemas.ts';
import { flexibilityTransaction } from './transactions.ts';

export interface TransactionChange {
  organizationId: number;
  quantity?: number;
  start?: string;
  end?: string;
  reason?: string | null;
}

export interface Cancellation {
  organizationId: number;
  reason?: string | null;
}

interface Locked {
  id: number;
  correlation: string;
  seller: number;
  buyer: number;
  quantity: string;
  start: Date;
  end: Date;
  orderStart: Date;
  orderEnd: Date;
  minQuantity: string;
  step: string;
  timeResolution: TimeResolution;
  actualRegisterId: number | null;
  timeZone: string | null;
  row: unknown;
}

/** The transaction, locked, if the organization may amend it (its buyer, before the start). */
async function lockForBuyer(tx: PoolClient, id: number, organizationId: number): Promise<Locked> {
  const { rows } = await tx.query<Locked>(
    `SELECT t.id, t.transaction_correlation_id AS correlation, t.seller_organization_id AS seller, t.buyer_organization_id AS buyer, t.quantity::text AS quantity,
       t.start, t."end", o.start AS "orderStart", o."end" AS "orderEnd", o.min_quantity::text AS "minQuantity", z.order_quantity_resolution::text AS step,
       z.time_resolution AS "timeResolution", r.actual_register_id AS "actualRegisterId", g.time_zone AS "timeZone", row_to_json(t) AS row
     FROM flexibility_transactions t JOIN flexibility_orders o ON o.id = t.flexibility_order_id JOIN market_zones z ON z.id = t.market_zone_id
       JOIN grid_resources r ON r.id = t.resource_id LEFT JOIN registers g ON g.id = r.actual_register_id
     WHERE t.id = $1 FOR UPDATE OF t`,
    [id],
  );
  const t = rows[0];
  if (!t || (t.buyer !== organizationId && t.seller !== organizationId)) throw notFound(`Flexibility transaction ${id}`);
  if (t.buyer !== organizationId) throw new HttpError('forbidden', 'Only the buyer changes or cancels a transaction; the seller committed to it');
  if (t.start.getTime() <= Date.now()) throw conflict(`Flexibility transaction ${id} started at ${t.start.toISOString()}: it can no longer be changed or cancelled`);
  return t;
}

async function logAmendment(tx: PoolClient, t: Locked, kind: 'change' | 'cancellation', reason: string | null | undefined, by: string): Promise<void> {
  await tx.query(
    `INSERT INTO flexibility_transaction_amendments (transaction_id, transaction_correlation_id, seller_organization_id, buyer_organization_id, kind, reason, before, after, amended_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, ${kind === 'change' ? '(SELECT row_to_json(t) FROM flexibility_transactions t WHERE t.id = $1)' : 'NULL'}, $8)`,
    [t.id, t.correlation, t.seller, t.buyer, kind, reason ?? null, JSON.stringify(t.row), by],
  );
}

export async function changeFlexibilityTransaction(pool: Pool, id: number, change: TransactionChange, by: string): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const t = await lockForBuyer(tx, id, change.organizationId);
    const errors: FieldError[] = [];
    const quantity = change.quantity === undefined ? decimal(t.quantity) : decimal(change.quantity);
    const start = change.start === undefined ? t.start.getTime() : parseUtcTimestamp(change.start)!;
    const end = change.end === undefined ? t.end.getTime() : parseUtcTimestamp(change.end)!;
    if (quantity.gt(decimal(t.quantity))) errors.push({ path: 'quantity', message: `may only be reduced: the provider accepted ${t.quantity}` });
    if (quantity.lt(decimal(t.minQuantity))) errors.push({ path: 'quantity', message: `must be at least the order’s minQuantity ${t.minQuantity}` });
    if (change.quantity !== undefined) errors.push(...quantityErrors({ quantity: change.quantity }, Number(t.step)));
    if (start >= end) errors.push({ path: 'end', message: 'must be after start' });
    if (start < t.orderStart.getTime() || end > t.orderEnd.getTime()) errors.push({ path: 'start', message: `must lie within the order’s period ${t.orderStart.toISOString()} – ${t.orderEnd.toISOString()}` });
    if (start <= Date.now()) errors.push({ path: 'start', message: 'must be in the future' });
    errors.push(...timeGridErrors({ start, end }, t.timeResolution));
    if (errors.length > 0) throw badRequest('Invalid change', errors);
    if (quantity.eq(decimal(t.quantity)) && start === t.start.getTime() && end === t.end.getTime()) return;
    await tx.query('UPDATE flexibility_transactions SET quantity = $2::numeric, start = $3, "end" = $4 WHERE id = $1', [id, decimalText(quantity), new Date(start), new Date(end)]);
    await logAmendment(tx, t, 'change', change.reason, by);
    if (t.actualRegisterId !== null) await addEventDays(tx, t.actualRegisterId, eventDays(start, end, t.timeZone ?? 'UTC'));
  });
}

export async function cancelFlexibilityTransaction(pool: Pool, id: number, cancellation: Cancellation, by: string): Promise<{ transactionId: number; transactionCorrelationId: string; cancelledAt: Date; cancelledBy: string; reason: string | null }> {
  return withTransaction(pool, async (tx) => {
    const t = await lockForBuyer(tx, id, cancellation.organizationId);
    await logAmendment(tx, t, 'cancellation', cancellation.reason, by);
    await tx.query('DELETE FROM flexibility_transactions WHERE id = $1', [id]);
    return { transactionId: t.id, transactionCorrelationId: t.correlation, cancelledAt: new Date(), cancelledBy: by, reason: cancellation.reason ?? null };
  });
}

// Routes ------------------------------------------------------------------------------------

const reason = { type: ['string', 'null'], maxLength: 1000, default: null, description: 'Why (kept with the change; shown to neither the VEN nor the VTN).' };

const changeInput = objectSchema(
  {
    organizationId: { ...int32Id, description: 'The buyer.' },
    quantity: { type: 'number', exclusiveMinimum: 0, maximum: 1e12, description: 'kWh: at most the current quantity, at least the order’s minQuantity.' },
    start: { type: 'string', format: 'utc-date-time' },
    end: { type: 'string', format: 'utc-date-time' },
    reason,
  },
  ['organizationId'],
  { title: 'FlexibilityTransactionChange', minProperties: 2 },
);

const cancellationInput = objectSchema({ organizationId: { ...int32Id, description: 'The buyer.' }, reason }, ['organizationId'], { title: 'FlexibilityTransactionCancellation' });

const cancellationSchema = objectSchema(
  {
    transactionId: { type: 'integer' },
    transactionCorrelationId: { type: 'string', format: 'uuid' },
    cancelledAt: { type: 'string', format: 'date-time' },
    cancelledBy: { type: 'string' },
    reason: { type: ['string', 'null'] },
  },
  ['transactionId', 'transactionCorrelationId', 'cancelledAt', 'cancelledBy', 'reason'],
  { title: 'FlexibilityTransactionCancelled' },
);

/** The two routes, for organizations (`/api/product/…`) or administrators on their behalf. */
export function transactionChangeRoutes(pool: Pool, admin = false): RouteDef[] {
  const auth: AuthRequirement = admin ? { globalAdmin: true } : { permission: 'Order.Organization.ReadWrite', feature: 'Grid', organization: { in: 'body', name: 'organizationId' } };
  const base = admin ? '/api/admin/transactions/flexibility' : '/api/product/transaction/flexibility';
  const tags = admin ? ['Admin: products'] : ['Products: transactions'];
  const behalf = admin ? ' (on behalf of the buyer)' : '';
  return [
    {
      method: 'PATCH',
      path: `${base}/:transactionId`,
      summary: `Change a flexibility transaction before its period starts${behalf}`,
      description:
        'By the buyer only (403 for the seller). A smaller quantity and/or another period inside the order’s period, on the zone’s grid, starting in the future. ' +
        'The event dispatched to the resource’s VEN is replaced (docs/flexibility-loop.md). 409 once the period has started.',
      tags,
      auth,
      params: idParams('transactionId'),
      body: changeInput,
      bodyExample: { organizationId: 1, quantity: 20, reason: 'Congestion forecast lowered' },
      responses: { 200: { description: 'The transaction as changed (the buyer’s side)', schema: flexibilityTransactionSchema } },
      async handler(req: ApiRequest<{ transactionId: number }, unknown, TransactionChange>) {
        await changeFlexibilityTransaction(pool, req.params.transactionId, req.body, req.principal!.subject);
        return { status: 200, body: await flexibilityTransaction(pool, req.params.transactionId, req.body.organizationId) };
      },
    },
    {
      method: 'POST',
      path: `${base}/:transactionId/cancellation`,
      summary: `Cancel a flexibility transaction before its period starts${behalf}`,
      description: 'By the buyer only (403 for the seller); 409 once the period has started. The transaction is deleted and its event deleted from the VTN.',
      tags,
      auth,
      params: idParams('transactionId'),
      body: cancellationInput,
      bodyExample: { organizationId: 1, reason: 'Congestion resolved' },
      responses: { 200: { description: 'What was cancelled', schema: cancellationSchema } },
      handler: async (req: ApiRequest<{ transactionId: number }, unknown, Cancellation>) => ({
        status: 200,
        body: await cancelFlexibilityTransaction(pool, req.params.transactionId, req.body, req.principal!.subject),
      }),
    },
  ];
}
