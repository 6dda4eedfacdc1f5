// The transactional outbox: called inside the transaction that changes an object, it finds the
// subscriptions to notify and writes one notification row per callback, so a committed change
// is never lost (the dispatcher delivers it, even after a crash) and a rolled-back one never
// sends anything.
//
// A subscription is notified when one of its objectOperations entries names the object kind and
// the operation; its programID equals the object's program (PROGRAM: the program itself; EVENT,
// REPORT, SUBSCRIPTION: their programID; VEN and RESOURCE belong to no program and skip this
// test); and its targets, if any, share a target with the object or the object is untargeted.
// A subscription created by a VEN client only hears about what that client may read.
import type { Queryable } from '../store/database.ts';
import type { ObjectKind, Operation } from './schemas.ts';
import { overlaps, venReachSql, type ValuesMap } from './targets.ts';

export interface Change {
  organizationId: number;
  kind: ObjectKind;
  operation: Operation;
  objectId: string;
  /** The object as served (JSON text). */
  doc: string;
  targets: readonly ValuesMap[] | null | undefined;
  targetKeys: readonly string[];
  /** The program the object belongs to; null for VEN and RESOURCE. */
  programId: string | null;
  /** The credential owning the object (report/subscription creator, a VEN's or a resource's
   * VEN's client); null when unbound. Decides what VEN clients' subscriptions hear about. */
  ownerClientId: string | null;
}

interface Candidate {
  id: string;
  target_keys: string[];
  owner_client_id: string;
  owner_is_ven: boolean;
  operations: { objects: string[]; operations: string[]; callbackUrl: string; bearerToken?: string | null }[] | null;
  reach: string[] | null;
}

const TARGETED_KINDS: ReadonlySet<ObjectKind> = new Set(['PROGRAM', 'EVENT']);

function visibleToVenOwner(change: Change, sub: Candidate): boolean {
  if (TARGETED_KINDS.has(change.kind)) return change.targetKeys.length === 0 || overlaps(change.targetKeys, sub.reach ?? []);
  return change.ownerClientId !== null && change.ownerClientId === sub.owner_client_id;
}

/** Writes the notifications of a change; returns how many (0: nothing to deliver). */
export async function enqueueNotifications(tx: Queryable, change: Change): Promise<number> {
  const needsReach = TARGETED_KINDS.has(change.kind);
  const { rows } = await tx.query<Candidate>(
    `SELECT s.id, s.target_keys, s.owner_client_id, s.owner_is_ven, s.doc->'objectOperations' AS operations,
       CASE WHEN s.owner_is_ven AND $4 THEN ${venReachSql('s.organization_id', 's.owner_client_id')} END AS reach
     FROM vtn_subscriptions s
     WHERE s.organization_id = $1 AND s.object_operations @> ARRAY[$2::text] AND ($3::text IS NULL OR s.program_id = $3)
     ORDER BY s.seq`,
    [change.organizationId, `${change.kind}:${change.operation}`, change.programId, needsReach],
  );
  const subscriptionIds: string[] = [];
  const urls: string[] = [];
  const tokens: (string | null)[] = [];
  for (const sub of rows) {
    if (sub.target_keys.length > 0 && change.targetKeys.length > 0 && !overlaps(sub.target_keys, change.targetKeys)) continue;
    if (sub.owner_is_ven && !visibleToVenOwner(change, sub)) continue;
    const seen = new Set<string>();
    for (const entry of sub.operations ?? []) {
      if (!entry.objects.includes(change.kind) || !entry.operations.includes(change.operation)) continue;
      const token = entry.bearerToken ?? null;
      const key = `${entry.callbackUrl}\u0000${token ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      subscriptionIds.push(sub.id);
      urls.push(entry.callbackUrl);
      tokens.push(token);
    }
  }
  if (subscriptionIds.length === 0) return 0;
  await tx.query(
    `WITH c AS (
       INSERT INTO vtn_changes (organization_id, object_type, operation, object_id, object, targets)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id
     )
     INSERT INTO vtn_notifications (change_id, organization_id, subscription_id, callback_url, bearer_token)
     SELECT c.id, $1, u.subscription_id, u.url, u.token FROM c, unnest($7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS u(subscription_id, url, token, n)
     ORDER BY u.n`,
    [change.organizationId, change.kind, change.operation, change.objectId, change.doc, change.targets ? JSON.stringify(change.targets) : null, subscriptionIds, urls, tokens],
  );
  return subscriptionIds.length;
}
