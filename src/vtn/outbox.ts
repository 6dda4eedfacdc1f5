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
//
// Matching and writing are one statement (the callbacks are rows of vtn_subscription_callbacks):
// with 100 subscriptions it replaced a query returning them to the application plus an insert.
import type { Queryable } from '../store/database.ts';
import type { ObjectKind, Operation } from './schemas.ts';
import type { ValuesMap } from './targets.ts';
import { clientsReachedSql } from './visibility.ts';

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
  /** OpenADR 3.1-only fields kept beside the document (programs and events; docs/openadr-3.1.md). */
  ext?: Record<string, unknown> | null;
}

/** Programs and events reach VEN clients by targets; the other kinds by ownership. */
const TARGETED_KINDS: ReadonlySet<ObjectKind> = new Set(['PROGRAM', 'EVENT']);

// $1 organization, $2 'KIND:OPERATION', $3 program, $4 the object's target keys,
// $5 targeted kind, $6 owner client, $7 kind, $8 operation, $9 object id, $10 doc, $11 targets,
// $12 the 3.1-only fields.
const ENQUEUE = `
WITH candidates AS MATERIALIZED (
  SELECT s.id, s.seq, cb.callback_url, cb.bearer_token, s.openadr_version, s.owner_is_ven, s.owner_client_id
  FROM vtn_subscription_callbacks cb
  JOIN vtn_subscriptions s ON s.organization_id = cb.organization_id AND s.id = cb.subscription_id
  WHERE cb.organization_id = $1 AND cb.object_operation = $2
    AND ($3::text IS NULL OR s.program_id = $3)
    AND (cardinality(s.target_keys) = 0 OR cardinality($4::text[]) = 0 OR s.target_keys && $4::text[])
),
reached AS (
  ${clientsReachedSql(`SELECT DISTINCT $1::int, c.owner_client_id FROM candidates c WHERE c.owner_is_ven AND $5::boolean AND cardinality($4::text[]) > 0`, '$4::text[]')}
),
matched AS (
  SELECT DISTINCT ON (c.seq, c.callback_url, c.bearer_token) c.id, c.seq, c.callback_url, c.bearer_token, c.openadr_version
  FROM candidates c
  WHERE NOT c.owner_is_ven OR CASE WHEN $5::boolean
    THEN cardinality($4::text[]) = 0 OR c.owner_client_id IN (SELECT r.client_id FROM reached r)
    ELSE c.owner_client_id = $6 END
  ORDER BY c.seq, c.callback_url, c.bearer_token
),
change AS (
  INSERT INTO vtn_changes (organization_id, object_type, operation, object_id, object, targets, ext, client_id)
  SELECT $1, $7, $8, $9, $10, $11, $12, $6 WHERE EXISTS (SELECT 1 FROM matched)
  RETURNING id
)
INSERT INTO vtn_notifications (change_id, organization_id, subscription_id, callback_url, bearer_token, openadr_version)
SELECT change.id, $1, m.id, m.callback_url, m.bearer_token, m.openadr_version FROM change, matched m ORDER BY m.seq
RETURNING 1`;

/** Writes the notifications of a change; returns how many (0: nothing to deliver). */
export async function enqueueNotifications(tx: Queryable, change: Change): Promise<number> {
  // Not a named (prepared once per connection) statement: its generic plan, built on a
  // connection's sixth change, kept the row estimates of the tables as they were then (an empty
  // vtn_subscriptions: every callback read again for each subscription) until the
  // next ANALYZE; planned on each call (~0.3 ms) it follows the tables as they are. Measured: an
  // event for 2,000 subscriptions, 720–820 ms with the cached plan, 43–73 ms planned each time.
  const result = await tx.query({
    text: ENQUEUE,
    values: [
      change.organizationId,
      `${change.kind}:${change.operation}`,
      change.programId,
      change.targetKeys,
      TARGETED_KINDS.has(change.kind),
      change.ownerClientId,
      change.kind,
      change.operation,
      change.objectId,
      change.doc,
      change.targets ? JSON.stringify(change.targets) : null,
      change.ext ? JSON.stringify(change.ext) : null,
    ],
  });
  return result.rowCount ?? 0;
}

/** Changes as a JSON array for json_to_recordset (documents inserted as they are, not re-encoded). */
export function changesJson(changes: readonly Change[], extra: (change: Change) => Record<string, unknown> = () => ({})): string {
  const str = JSON.stringify;
  return `[${changes
    .map((c, i) => {
      const more = Object.entries(extra(c))
        .map(([k, v]) => `,${str(k)}:${str(v)}`)
        .join('');
      return `{"i":${i},"org":${c.organizationId},"kind":${str(c.kind)},"op":${str(c.operation)},"oid":${str(c.objectId)},"program":${str(c.programId)},"keys":${str(c.targetKeys)},"owner":${str(c.ownerClientId)},"targeted":${TARGETED_KINDS.has(c.kind)},"doc":${c.doc},"targets":${c.targets ? str(c.targets) : 'null'},"ext":${c.ext ? str(c.ext) : 'null'}${more}}`;
    })
    .join(',')}]`;
}

export const CHANGE_COLUMNS = 'i int, org int, kind text, op text, oid text, program text, keys text[], owner text, targeted boolean, doc json, targets json, ext jsonb';

// The same matching as ENQUEUE for many changes at once (a batch written on behalf of another
// domain: one statement instead of one per change, docs/flexibility-loop.md), each candidate
// owning VEN client's reach computed once for the batch rather than once per change. Changes are
// numbered (i) and their notifications written in that order, so each subscription's queue keeps
// the order of the changes. At most one change per (organization, kind, operation, object).
const ENQUEUE_MANY = `
WITH c AS (SELECT * FROM json_to_recordset($1::json) AS c(${CHANGE_COLUMNS})),
subs AS MATERIALIZED (
  SELECT cb.organization_id, cb.object_operation, cb.callback_url, cb.bearer_token, s.id, s.seq, s.program_id, s.target_keys, s.owner_is_ven, s.owner_client_id,
    s.openadr_version
  FROM vtn_subscription_callbacks cb JOIN vtn_subscriptions s ON s.organization_id = cb.organization_id AND s.id = cb.subscription_id
  WHERE (cb.organization_id, cb.object_operation) IN (SELECT DISTINCT c.org, c.kind || ':' || c.op FROM c)
),
owner_vens AS MATERIALIZED (
  SELECT rv.organization_id, rv.client_id, rv.reach_keys FROM vtn_vens rv
  WHERE (rv.organization_id, rv.client_id) IN (SELECT DISTINCT s.organization_id, s.owner_client_id FROM subs s WHERE s.owner_is_ven)
),
-- Each targeted change with the VEN-owning clients it reaches (a VEN of theirs shares a key with
-- it), computed per change: a join of changes × subscriptions with a table of (change, client)
-- rows was planned as a nested loop over all of them (25M rows for 500 changes).
-- Each change's id is taken here, in change order, so that its notifications carry it: joining
-- the inserted changes back to their notifications was planned as a nested loop too (changes ×
-- notifications).
reaching AS MATERIALIZED (
  SELECT c.*, nextval(pg_get_serial_sequence('vtn_changes', 'id')) AS change_id, CASE WHEN c.targeted AND cardinality(c.keys) > 0
    THEN ARRAY(SELECT DISTINCT v.client_id FROM owner_vens v WHERE v.organization_id = c.org AND v.reach_keys && c.keys) END AS reached
  FROM (SELECT * FROM c ORDER BY c.i) c
),
matched AS (
  SELECT DISTINCT ON (c.i, s.seq, s.callback_url, s.bearer_token) c.i, c.change_id, c.org, s.id, s.seq, s.callback_url, s.bearer_token, s.openadr_version
  FROM reaching c JOIN subs s ON s.organization_id = c.org AND s.object_operation = c.kind || ':' || c.op
  WHERE (c.program IS NULL OR s.program_id = c.program)
    AND (cardinality(s.target_keys) = 0 OR cardinality(c.keys) = 0 OR s.target_keys && c.keys)
    AND (NOT s.owner_is_ven OR CASE WHEN c.targeted THEN cardinality(c.keys) = 0 OR s.owner_client_id = ANY(c.reached) ELSE s.owner_client_id = c.owner END)
  ORDER BY c.i, s.seq, s.callback_url, s.bearer_token
),
change AS (
  INSERT INTO vtn_changes (id, organization_id, object_type, operation, object_id, object, targets, ext, client_id) OVERRIDING SYSTEM VALUE
  SELECT c.change_id, c.org, c.kind, c.op, c.oid, c.doc, c.targets, c.ext, c.owner FROM reaching c WHERE c.i IN (SELECT m.i FROM matched m) ORDER BY c.i
)
INSERT INTO vtn_notifications (change_id, organization_id, subscription_id, callback_url, bearer_token, openadr_version)
SELECT m.change_id, m.org, m.id, m.callback_url, m.bearer_token, m.openadr_version FROM matched m ORDER BY m.i, m.seq
RETURNING 1`;

/** enqueueNotifications for many changes in one statement; returns how many notifications. */
export async function enqueueNotificationsMany(tx: Queryable, changes: readonly Change[]): Promise<number> {
  if (changes.length === 0) return 0;
  // Planned on each call, as ENQUEUE (enqueueNotifications) and for the same reason.
  const result = await tx.query({ text: ENQUEUE_MANY, values: [changesJson(changes)] });
  return result.rowCount ?? 0;
}

