// Dispatch of flexibility transactions to the VEN resource bound to their grid resource, as
// OpenADR events in the provider's VTN (docs/flexibility-loop.md).
//
// The queue is `flexibility_dispatches` (migration 007): its triggers mark a transaction's row
// pending in the statement that creates, changes or deletes the transaction, and a binding
// change marks the resource's transactions not ended yet (`queueResource`). The job step claims
// pending rows with FOR UPDATE SKIP LOCKED, reads each transaction as committed, and has the VTN
// write, replace or delete its event in this same database transaction (`write`, passed in by the
// wiring file: products does not know the VTN). Claim, event and state commit together: every
// committed state of a transaction is dispatched exactly once, whichever instance runs the step,
// and after a crash the rows are pending again. A change committed while a step holds the row
// waits for that step, then makes the row pending again.
import type { Logger } from 'pino';
import { withTransaction, type Pool, type PoolClient, type Queryable } from '../store/database.ts';
import { decimal, divideTo } from './decimal.ts';
import { isUpward } from './rules.ts';
import type { DispatchItem, DispatchOutcome, EventPlan } from '../shared/dispatchContract.ts';

export type { DispatchItem, DispatchOutcome, EventPlan };

/** Writes the events of the items in the given transaction (the VTN's writeDispatchEvents). */
export type DispatchWriter = (tx: PoolClient, items: readonly DispatchItem[]) => Promise<{ outcomes: DispatchOutcome[]; afterCommit: () => void }>;

export const NOT_BOUND = 'the grid resource is not bound to a VEN resource';
/** Setpoints carry this many fraction digits of kW. */
const SETPOINT_DIGITS = 6;
const BACKOFF = { baseMs: 1000, capMs: 5 * 60_000 };

/** The mean power of `quantityKwh` over [start, end), signed as a change of consumption. */
export function setpointKw(quantityKwh: string, productType: number, start: number, end: number): number {
  const kw = divideTo(decimal(quantityKwh).times(3_600_000), end - start, SETPOINT_DIGITS);
  return Number(isUpward(productType) ? kw.neg() : kw);
}

interface Claimed {
  transactionId: number;
  vtnOrganizationId: number | null;
  eventId: string | null;
  exists: boolean;
  correlationId: string | null;
  quantity: string | null;
  start: Date | null;
  end: Date | null;
  productType: number | null;
  boundOrganizationId: number | null;
  venId: string | null;
  venResourceId: string | null;
  zoneName: string | null;
}

const claimSql = (which: string) => `SELECT d.transaction_id AS "transactionId", d.vtn_organization_id AS "vtnOrganizationId", d.event_id AS "eventId", t.id IS NOT NULL AS exists,
    t.transaction_correlation_id AS "correlationId", t.quantity::text AS quantity, t.start, t."end", t.product_type AS "productType",
    b.organization_id AS "boundOrganizationId", b.ven_id AS "venId", b.ven_resource_id AS "venResourceId", z.name AS "zoneName"
  FROM flexibility_dispatches d
  LEFT JOIN flexibility_transactions t ON t.id = d.transaction_id
  LEFT JOIN grid_resource_bindings b ON b.resource_id = t.resource_id
  LEFT JOIN market_zones z ON z.id = t.market_zone_id
  WHERE d.state = 'pending' AND ${which}
  ORDER BY d.next_attempt_at, d.transaction_id LIMIT $1 FOR UPDATE OF d SKIP LOCKED`;
const CLAIM_DUE = claimSql('d.next_attempt_at <= now()');
const CLAIM_ONE = claimSql('d.transaction_id = $2');

/** The VTN writes one claimed row needs: the old event deleted where it moves to another VTN. */
function itemsOf(row: Claimed): DispatchItem[] {
  const bound = row.exists && row.boundOrganizationId !== null;
  if (!bound) return row.eventId && row.vtnOrganizationId !== null ? [{ organizationId: row.vtnOrganizationId, eventId: row.eventId, plan: null }] : [];
  const plan: EventPlan = {
    venId: row.venId!,
    venResourceId: row.venResourceId!,
    zoneName: row.zoneName!,
    correlationId: row.correlationId!,
    start: row.start!.getTime(),
    end: row.end!.getTime(),
    setpointKw: setpointKw(row.quantity!, row.productType!, row.start!.getTime(), row.end!.getTime()),
  };
  const moved = row.eventId !== null && row.vtnOrganizationId !== row.boundOrganizationId;
  return [...(moved ? [{ organizationId: row.vtnOrganizationId!, eventId: row.eventId, plan: null }] : []), { organizationId: row.boundOrganizationId!, eventId: moved ? null : row.eventId, plan }];
}

async function dispatchRows(tx: PoolClient, rows: readonly Claimed[], write: DispatchWriter): Promise<() => void> {
  const perRow = rows.map(itemsOf);
  const { outcomes, afterCommit } = await write(tx, perRow.flat());
  let k = 0;
  const gone: number[] = [];
  const ids: number[] = [];
  const states: string[] = [];
  const orgs: (number | null)[] = [];
  const events: (string | null)[] = [];
  const reasons: (string | null)[] = [];
  const notes: (string | null)[] = [];
  rows.forEach((row, i) => {
    const outcome = perRow[i]!.length > 0 ? outcomes[(k += perRow[i]!.length) - 1]! : { eventId: null, reason: null };
    if (!row.exists) {
      gone.push(row.transactionId);
      return;
    }
    ids.push(row.transactionId);
    if (outcome.eventId !== null) {
      states.push('sent');
      orgs.push(row.boundOrganizationId);
      events.push(outcome.eventId);
      reasons.push(null);
      notes.push('note' in outcome ? outcome.note : null);
    } else {
      states.push('none');
      orgs.push(null);
      events.push(null);
      reasons.push(row.boundOrganizationId === null ? NOT_BOUND : 'reason' in outcome ? outcome.reason : null);
      notes.push(null);
    }
  });
  // A cancelled transaction's row goes once its event is deleted.
  if (gone.length > 0) await tx.query('DELETE FROM flexibility_dispatches WHERE transaction_id = ANY($1::int[])', [gone]);
  await tx.query(
    `UPDATE flexibility_dispatches d SET state = u.state, vtn_organization_id = u.org, event_id = u.event, reason = u.reason, note = u.note,
       attempts = d.attempts + 1, last_error = NULL, dispatched_at = now()
     FROM unnest($1::int[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[]) AS u(id, state, org, event, reason, note) WHERE d.transaction_id = u.id`,
    [ids, states, orgs, events, reasons, notes],
  );
  return afterCommit;
}

/** A row that failed on its own: tried again after a capped exponential backoff (1 s, 2 s, …
 * 5 min), the error kept for operators (shown as the dispatch's reason while pending). */
async function postpone(pool: Pool, row: Claimed, err: unknown): Promise<void> {
  await pool.query(
    `UPDATE flexibility_dispatches SET attempts = attempts + 1, last_error = $2,
       next_attempt_at = now() + least($4::float8, $3::float8 * power(2, least(attempts, 20))) * interval '1 millisecond'
     WHERE transaction_id = $1 AND state = 'pending'`,
    [row.transactionId, (err as Error).message.slice(0, 500), BACKOFF.baseMs, BACKOFF.capMs],
  );
}

/**
 * One step: claims up to `batch` pending rows and dispatches them in one transaction (500: with
 * 5,000 transactions of 100 VENs, batches of 200 took 6.1–7.4 s to write them all, of 500 4.8 s,
 * of 1,000 4.4–5.3 s, load average 7–9; larger batches hold more rows locked longer). When that
 * fails, each row is tried in a transaction of its own, so that one bad row (retried later with
 * a backoff) does not hold back the others. Returns how many rows were handled.
 */
export async function dispatchDue(pool: Pool, write: DispatchWriter, log: Logger, batch = 500): Promise<number> {
  let claimed: Claimed[] = [];
  try {
    let afterCommit = () => {};
    await withTransaction(pool, async (tx) => {
      claimed = (await tx.query<Claimed>(CLAIM_DUE, [batch])).rows;
      if (claimed.length > 0) afterCommit = await dispatchRows(tx, claimed, write);
    });
    afterCommit();
    return claimed.length;
  } catch (err) {
    if (claimed.length <= 1) {
      if (claimed[0]) await postpone(pool, claimed[0], err);
      throw err;
    }
    log.warn({ err: (err as Error).message, rows: claimed.length }, 'dispatch batch failed; dispatching its rows one by one');
  }
  for (const row of claimed) {
    try {
      let afterCommit = () => {};
      await withTransaction(pool, async (tx) => {
        const again = (await tx.query<Claimed>(CLAIM_ONE, [1, row.transactionId])).rows;
        if (again.length > 0) afterCommit = await dispatchRows(tx, again, write);
      });
      afterCommit();
    } catch (err) {
      log.warn({ err: (err as Error).message, transactionId: row.transactionId }, 'dispatch failed; retrying later');
      await postpone(pool, row, err);
    }
  }
  return claimed.length;
}

/** A binding of the resource changed: its transactions not ended yet are dispatched again
 * (events created, moved to the new VEN resource, or deleted). Runs in the binding's transaction. */
export async function queueResource(tx: Queryable, resourceId: number): Promise<void> {
  await tx.query(
    `UPDATE flexibility_dispatches d SET state = 'pending', reason = NULL, note = NULL, attempts = 0, next_attempt_at = now(), last_error = NULL, queued_at = now()
     FROM flexibility_transactions t WHERE t.id = d.transaction_id AND t.resource_id = $1 AND t."end" > now()`,
    [resourceId],
  );
}

/** SQL of the `dispatch` member of a transaction (alias `t`): {eventID, state, reason}. A failed
 * write's error stays with the operators (last_error); the parties see that it is retried. */
export const DISPATCH_COLUMN = `(SELECT json_build_object('eventID', d.event_id, 'state', d.state,
    'reason', coalesce(d.reason, d.note, CASE WHEN d.state = 'pending' AND d.last_error IS NOT NULL THEN 'writing the event into the VTN failed; it is retried' END))
  FROM flexibility_dispatches d WHERE d.transaction_id = t.id) AS dispatch`;
