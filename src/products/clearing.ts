// Clearing of availability orders. An order clears at its expiresAt (the scheduler) or when an
// administrator asks. Merit order: offers by activation price (cheapest first), then by impact
// on the order's substation (highest first), then by when they were made (earliest first), then
// by id. Offers are taken in that order up to the ordered quantity: each gets min(its maximum,
// what is still needed), and an offer whose minimum no longer fits is skipped (rejected) while
// later, smaller offers may still fit. The ordered quantity is never exceeded.
//
// Every cleared offer becomes an availability transaction. The order ends Cleared (quantity
// covered), PartiallyCleared or NotCleared; offers end Accepted or Rejected.
// The order row is locked (FOR UPDATE SKIP LOCKED by the scheduler), so with several app
// instances each order clears exactly once, and a restart resumes whatever is due.
import type { Logger } from 'pino';
import { ClearingStatus } from '../codes.ts';
import { HttpError, notFound } from '../http/errors.ts';
import { withTransaction, type Pool, type PoolClient } from '../store/database.ts';
import { decimal, decimalText } from './decimal.ts';

interface Offer {
  id: number;
  resource_id: number;
  organization_id: number;
  min_quantity: string;
  max_quantity: string;
  created_by: string;
}

/** Clears one order inside the caller's transaction; the order row must be locked. */
export async function clearOrder(tx: PoolClient, orderId: number): Promise<ClearingStatus> {
  const { rows: orders } = await tx.query<{ clearing_status: number; quantity: string }>('SELECT clearing_status, quantity::text FROM availability_orders WHERE id = $1 FOR UPDATE', [orderId]);
  const order = orders[0];
  if (!order) throw notFound(`Availability order ${orderId}`);
  if (order.clearing_status !== ClearingStatus.Open) return order.clearing_status as ClearingStatus;
  const { rows: offers } = await tx.query<Offer>(
    `SELECT id, resource_id, organization_id, min_quantity::text, max_quantity::text, created_by FROM availability_offers
     WHERE availability_order_id = $1 AND clearing_status = ${ClearingStatus.Open}
     ORDER BY activation_price ASC, impact_value DESC NULLS LAST, created_at ASC, id ASC FOR UPDATE`,
    [orderId],
  );
  let needed = decimal(order.quantity);
  let accepted = 0;
  for (const offer of offers) {
    const max = decimal(offer.max_quantity);
    const take = max.lt(needed) ? max : needed;
    if (take.lte(0) || take.lt(decimal(offer.min_quantity))) {
      await tx.query(`UPDATE availability_offers SET clearing_status = ${ClearingStatus.Rejected}, updated_at = now() WHERE id = $1`, [offer.id]);
      continue;
    }
    const { rows } = await tx.query<{ id: number }>(
      `INSERT INTO availability_transactions (availability_order_id, seller_organization_id, buyer_organization_id, seller_created_by, buyer_created_by, resource_id,
         market_id, substation_id, product_type, start, "end", quantity, availability_price, activation_price, impact_value)
       SELECT o.id, f.organization_id, o.organization_id, f.created_by, o.created_by, f.resource_id, o.market_id, o.substation_id, o.product_type, o.start, o."end",
         $2::numeric, o.availability_price, f.activation_price, f.impact_value
       FROM availability_orders o JOIN availability_offers f ON f.id = $1 WHERE o.id = f.availability_order_id RETURNING id`,
      [offer.id, decimalText(take)],
    );
    await tx.query(`UPDATE availability_offers SET clearing_status = ${ClearingStatus.Accepted}, availability_transaction_id = $2, updated_at = now() WHERE id = $1`, [offer.id, rows[0]!.id]);
    needed = needed.minus(take);
    accepted += 1;
  }
  const status = accepted === 0 ? ClearingStatus.NotCleared : needed.eq(0) ? ClearingStatus.Cleared : ClearingStatus.PartiallyCleared;
  await tx.query('UPDATE availability_orders SET clearing_status = $2, cleared_at = now() WHERE id = $1', [orderId, status]);
  return status;
}

/** Administrator: clear now, before expiresAt. */
export async function clearNow(pool: Pool, orderId: number): Promise<ClearingStatus> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ clearing_status: number }>('SELECT clearing_status FROM availability_orders WHERE id = $1 FOR UPDATE', [orderId]);
    if (!rows[0]) throw notFound(`Availability order ${orderId}`);
    if (rows[0].clearing_status !== ClearingStatus.Open) throw new HttpError('conflict', `Availability order ${orderId} is not open (clearingStatus ${rows[0].clearing_status})`);
    return clearOrder(tx, orderId);
  });
}

/** Clears every due order (expiresAt passed), a batch at a time; returns how many. */
export async function clearDueOrders(pool: Pool, batch = 50): Promise<number> {
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<{ id: number }>(
      `SELECT id FROM availability_orders WHERE clearing_status = ${ClearingStatus.Open} AND expires_at <= now() ORDER BY expires_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [batch],
    );
    for (const { id } of rows) await clearOrder(tx, id);
    return rows.length;
  });
}

/** Runs `work` every `intervalMs` (and again at once while it reports work done), until stopped. */
export class PeriodicJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly work: () => Promise<number>,
    private readonly intervalMs: number,
    private readonly log: Logger,
    /** Runs, durations and items of each step (flex_job_* in src/domainMetrics.ts). */
    private readonly metrics?: { observeJob(job: string, seconds: number, items: number, failed: boolean): void },
  ) {}

  start(): void {
    this.schedule(0);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick();
    }, delay);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    let done = 0;
    let failed = false;
    const started = performance.now();
    try {
      done = await this.work();
      if (done > 0) this.log.info({ job: this.name, done }, 'job step');
    } catch (err) {
      failed = true;
      this.log.warn({ job: this.name, err }, 'job step failed; retrying later');
    }
    this.metrics?.observeJob(this.name, (performance.now() - started) / 1000, done, failed);
    this.schedule(done > 0 ? 0 : this.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
