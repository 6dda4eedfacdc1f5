// SQL of the notification queue the dispatcher works from. Each subscription is a FIFO queue.
// A claim takes, for each queue whose head (oldest pending notification) is due and not leased,
// the head and up to `perQueue - 1` notifications after it, and leases them to the claiming
// instance; the dispatcher sends them one after the other. So a subscription receives its
// notifications one at a time and in order, even with several instances dispatching:
// - claims are serialized by a transaction-scoped advisory lock, so each claim reads the leases
//   of the previous one (two instances never split one queue's batch between them);
// - the rows are locked with FOR UPDATE SKIP LOCKED, so a claim never waits for, nor takes, rows
//   that a concurrent statement (an admin retry, a subscription being deleted) holds;
// - a lease outlives any attempt; a crashed instance's lease runs out and its rows are claimed
//   again (delivery is at least once).
import type { Pool, Queryable } from '../store/database.ts';

export interface Claimed {
  id: number;
  organizationId: number;
  subscriptionId: string;
  notificationId: string;
  callbackUrl: string;
  bearerToken: string | null;
  attempts: number;
  objectType: string;
  operation: string;
  /** JSON text of the object and of its targets (null when untargeted). */
  object: string;
  targets: string | null;
  /** The version the subscription speaks ('3.0.1' or '3.1.0') and what 3.1 bodies need. */
  openadrVersion: string;
  ext: Record<string, unknown> | null;
  clientId: string | null;
}

/** Arbitrary but fixed (migrations use 727_274_001). */
const CLAIM_LOCK = 727_274_002;

// The queues with pending rows are found with a "loose index scan" (one probe of the partial
// queue index per subscription, the recursive CTE) rather than by testing every pending row for
// an older sibling, which costs a probe per pending row and slows down exactly when a backlog
// builds up. Measured with 100 subscriptions × 100 pending: ~1.5 ms for the 100 heads.
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
ready AS (
  SELECT q.organization_id, q.subscription_id, h.id AS head FROM queues q CROSS JOIN LATERAL (
    SELECT n.id, n.next_attempt_at, n.locked_until FROM vtn_notifications n
    WHERE n.state = 'pending' AND n.organization_id = q.organization_id AND n.subscription_id = q.subscription_id
    ORDER BY n.id LIMIT 1) h
  WHERE h.next_attempt_at <= now() AND (h.locked_until IS NULL OR h.locked_until < now())
  ORDER BY h.id LIMIT $1
),
batch AS (
  SELECT b.id FROM ready r CROSS JOIN LATERAL (
    SELECT n.id FROM vtn_notifications n
    WHERE n.state = 'pending' AND n.organization_id = r.organization_id AND n.subscription_id = r.subscription_id
    ORDER BY n.id LIMIT $2) b
),
claimable AS (
  SELECT n.id FROM vtn_notifications n WHERE n.id IN (SELECT id FROM batch) AND n.state = 'pending'
  FOR UPDATE OF n SKIP LOCKED
)
UPDATE vtn_notifications n SET locked_until = now() + $3 * interval '1 millisecond', locked_by = $4
FROM claimable c, vtn_changes ch
WHERE n.id = c.id AND ch.id = n.change_id
RETURNING n.id, n.organization_id AS "organizationId", n.subscription_id AS "subscriptionId", n.notification_id AS "notificationId",
  n.callback_url AS "callbackUrl", n.bearer_token AS "bearerToken", n.attempts,
  ch.object_type AS "objectType", ch.operation, ch.object::text AS object, ch.targets::text AS targets,
  n.openadr_version AS "openadrVersion", ch.ext, ch.client_id AS "clientId"`;

/** Claims up to `queues` subscription queues, up to `perQueue` notifications each; returns them
 * grouped by queue, in order. Undefined when another instance is claiming at this moment. */
export async function claimBatches(pool: Pool, queues: number, perQueue: number, leaseMs: number, leaseOwner: string): Promise<Claimed[][] | undefined> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    // The lock comes before the claim's snapshot (READ COMMITTED: one snapshot per statement).
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [CLAIM_LOCK]);
    if (!rows[0]!.locked) {
      await client.query('ROLLBACK');
      return undefined;
    }
    const claimed = await client.query<Claimed>({ name: 'vtn_claim_notifications', text: CLAIM, values: [queues, perQueue, leaseMs, leaseOwner] });
    await client.query('COMMIT');
    const byQueue = new Map<string, Claimed[]>();
    for (const row of claimed.rows.sort((a, b) => a.id - b.id)) {
      const key = `${row.organizationId}:${row.subscriptionId}`;
      const list = byQueue.get(key);
      if (list) list.push(row);
      else byQueue.set(key, [row]);
    }
    return [...byQueue.values()];
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

export interface Outcome {
  id: number;
  state: 'pending' | 'delivered' | 'dead';
  status: number | null;
  error: string | null;
  /** For a retry: delay before the next attempt. */
  delayMs: number | null;
}

/** Records attempts in one statement and releases their leases. Rows deleted meanwhile (their
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

/** Gives leased rows back unattempted (the rest of a batch behind a failure, or at shutdown). */
export async function releaseLeases(db: Queryable, ids: readonly number[], leaseOwner: string): Promise<void> {
  if (ids.length === 0) return;
  await db.query({
    name: 'vtn_release_leases',
    text: "UPDATE vtn_notifications SET locked_until = NULL, locked_by = NULL WHERE id = ANY($1::bigint[]) AND locked_by = $2 AND state = 'pending'",
    values: [ids, leaseOwner],
  });
}

/** Keeps the outbox small: delivered notifications go after `days`, then changes nothing refers
 * to any more; dead ones stay until retried (they are what an operator looks at). */
export async function purgeDelivered(db: Queryable, days: number): Promise<void> {
  await db.query("DELETE FROM vtn_notifications WHERE state = 'delivered' AND delivered_at < now() - $1 * interval '1 day'", [days]);
  await db.query(
    `DELETE FROM vtn_changes c WHERE c.created_at < now() - $1 * interval '1 day'
     AND NOT EXISTS (SELECT 1 FROM vtn_notifications n WHERE n.change_id = c.id)`,
    [days],
  );
}
