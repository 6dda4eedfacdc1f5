// SQL of the notification queue the dispatcher works from. Each subscription is a FIFO queue:
// only its oldest pending notification (its head) may be claimed, and only when due and not
// leased, so a subscription receives its notifications one at a time, in order, even with
// several app instances dispatching (rows are claimed with FOR UPDATE SKIP LOCKED and leased
// for a while; a crashed instance's lease runs out and the row is claimed again).
import type { Queryable } from '../store/database.ts';

export interface Claimed {
  id: number;
  notificationId: string;
  callbackUrl: string;
  bearerToken: string | null;
  attempts: number;
  objectType: string;
  operation: string;
  /** JSON text of the object and of its targets (null when untargeted). */
  object: string;
  targets: string | null;
}

// The heads are found with a "loose index scan" (one index probe per subscription with pending
// rows, the recursive CTE) rather than by testing every pending row for an older sibling,
// which costs a probe per pending row and slows down exactly when a backlog builds up.
const CLAIM = `
WITH RECURSIVE queues AS (
  (SELECT organization_id, subscription_id FROM vtn_notifications
   WHERE state = 'pending' ORDER BY organization_id, subscription_id LIMIT 1)
  UNION ALL
  SELECT nxt.organization_id, nxt.subscription_id FROM queues q CROSS JOIN LATERAL (
    SELECT n.organization_id, n.subscription_id FROM vtn_notifications n
    WHERE n.state = 'pending' AND (n.organization_id, n.subscription_id) > (q.organization_id, q.subscription_id)
    ORDER BY n.organization_id, n.subscription_id LIMIT 1) nxt
),
heads AS (
  SELECT h.id FROM queues q CROSS JOIN LATERAL (
    SELECT n.id FROM vtn_notifications n
    WHERE n.state = 'pending' AND n.organization_id = q.organization_id AND n.subscription_id = q.subscription_id
    ORDER BY n.id LIMIT 1) h
),
claimable AS (
  SELECT n.id FROM vtn_notifications n
  WHERE n.id IN (SELECT id FROM heads) AND n.state = 'pending' AND n.next_attempt_at <= now()
    AND (n.locked_until IS NULL OR n.locked_until < now())
  ORDER BY n.id LIMIT $1
  FOR UPDATE OF n SKIP LOCKED
)
UPDATE vtn_notifications n SET locked_until = now() + $2 * interval '1 millisecond', locked_by = $3
FROM claimable c, vtn_changes ch
WHERE n.id = c.id AND ch.id = n.change_id
RETURNING n.id, n.notification_id AS "notificationId", n.callback_url AS "callbackUrl", n.bearer_token AS "bearerToken", n.attempts,
  ch.object_type AS "objectType", ch.operation, ch.object::text AS object, ch.targets::text AS targets`;

export async function claimNotifications(db: Queryable, limit: number, leaseMs: number, leaseOwner: string): Promise<Claimed[]> {
  const { rows } = await db.query<Claimed>({ name: 'vtn_claim_notifications', text: CLAIM, values: [limit, leaseMs, leaseOwner] });
  return rows.sort((a, b) => a.id - b.id);
}

export interface Outcome {
  id: number;
  state: 'pending' | 'delivered' | 'dead';
  status: number | null;
  error: string | null;
  /** For a retry: delay before the next attempt. */
  delayMs: number | null;
}

/** Records attempts in one statement; the lease is released. Rows deleted meanwhile (their
 * subscription was deleted) are simply not found. */
export async function recordOutcomes(db: Queryable, outcomes: readonly Outcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  await db.query({
    name: 'vtn_record_outcomes',
    text: `UPDATE vtn_notifications n SET
        state = u.state, attempts = n.attempts + 1, last_status = coalesce(u.status, n.last_status), last_error = coalesce(u.error, n.last_error),
        next_attempt_at = CASE WHEN u.delay_ms IS NULL THEN n.next_attempt_at ELSE now() + u.delay_ms * interval '1 millisecond' END,
        delivered_at = CASE WHEN u.state = 'delivered' THEN now() ELSE n.delivered_at END,
        locked_until = NULL, locked_by = NULL, updated_at = now()
      FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[], $5::int[]) AS u(id, state, status, error, delay_ms)
      WHERE n.id = u.id AND n.state = 'pending'`,
    values: [outcomes.map((o) => o.id), outcomes.map((o) => o.state), outcomes.map((o) => o.status), outcomes.map((o) => o.error), outcomes.map((o) => o.delayMs)],
  });
}

/** Gives leased rows back at shutdown, so another instance need not wait for the lease. */
export async function releaseLeases(db: Queryable, ids: readonly number[], leaseOwner: string): Promise<void> {
  if (ids.length === 0) return;
  await db.query("UPDATE vtn_notifications SET locked_until = NULL, locked_by = NULL WHERE id = ANY($1::bigint[]) AND locked_by = $2 AND state = 'pending'", [ids, leaseOwner]);
}

/** Keeps the outbox small: delivered notifications and their changes go after `days`; dead
 * ones stay until retried (they are what an operator looks at). */
export async function purgeDelivered(db: Queryable, days: number): Promise<void> {
  await db.query("DELETE FROM vtn_notifications WHERE state = 'delivered' AND delivered_at < now() - $1 * interval '1 day'", [days]);
  await db.query(
    `DELETE FROM vtn_changes c WHERE c.created_at < now() - $1 * interval '1 day'
     AND NOT EXISTS (SELECT 1 FROM vtn_notifications n WHERE n.change_id = c.id)`,
    [days],
  );
}
