// MQTT notification topics (OpenADR 3.1.0 MQTT notifier) and the MQTT side of the outbox.
//
// Every topic starts with `openadr3/<organization id>/`: each organization is its own VTN, and
// its clients only ever see their own organization's topics. Under it:
//   programs/{create,update,delete}          programs/<id>/{update,delete}
//   events/{…}   programs/<id>/events/{…}    reports/{…}   subscriptions/{…}
//   vens/{…}     vens/<venID>/{update,delete} resources/{…}
//   vens/<venID>/programs/{…}  vens/<venID>/events/{…}  vens/<venID>/resources/{…}
// The per-VEN topics carry what that VEN may read (programs and events untargeted or targeting
// it, its resources), so a VEN client subscribes under its own `vens/<venID>/` only; the broker
// refuses it anything else (mqttBroker.ts). The others are for business-logic clients.
//
// A change is written to vtn_mqtt_messages in the transaction that made it, with the list of
// topics computed there (one statement; the VENs an event reaches are found by the same target
// keys as the REST privacy rules).
import type { Queryable } from '../store/database.ts';
import { CHANGE_COLUMNS, changesJson, type Change } from './outbox.ts';
import { TO_31_OPERATION } from './v31/representation.ts';
import { reachesVenSql } from './visibility.ts';

export const TOPIC_ROOT = 'openadr3';

export function topicPrefix(organizationId: number): string {
  return `${TOPIC_ROOT}/${organizationId}/`;
}

export interface OperationTopics {
  CREATE?: string;
  UPDATE: string;
  DELETE: string;
  ALL: string;
}

/** The topics of one collection path (`events`, `vens/<id>/events`, `programs/<id>`). */
export function operationTopics(organizationId: number, path: string, withCreate = true): OperationTopics {
  const base = `${topicPrefix(organizationId)}${path}`;
  const topics: OperationTopics = { UPDATE: `${base}/update`, DELETE: `${base}/delete`, ALL: `${base}/+` };
  return withCreate ? { CREATE: `${base}/create`, ...topics } : topics;
}

const COLLECTION: Record<Change['kind'], string> = {
  PROGRAM: 'programs',
  EVENT: 'events',
  REPORT: 'reports',
  SUBSCRIPTION: 'subscriptions',
  VEN: 'vens',
  RESOURCE: 'resources',
};

/** The topics of a change that do not depend on which VENs it reaches. */
export function fixedTopics(change: Change, venId: string | undefined): string[] {
  const p = topicPrefix(change.organizationId);
  const op = TO_31_OPERATION[change.operation]!.toLowerCase();
  const topics = [`${p}${COLLECTION[change.kind]}/${op}`];
  const own = op !== 'create';
  switch (change.kind) {
    case 'PROGRAM':
      if (own) topics.push(`${p}programs/${change.objectId}/${op}`);
      break;
    case 'EVENT':
      topics.push(`${p}programs/${change.programId}/events/${op}`);
      break;
    case 'VEN':
      if (own) topics.push(`${p}vens/${change.objectId}/${op}`);
      break;
    case 'RESOURCE':
      if (venId) topics.push(`${p}vens/${venId}/resources/${op}`);
      break;
  }
  return topics;
}

// $1 org, $2 fixed topics, $3 per-VEN suffix ('' = none: not a targeted kind), $4 the object's
// target keys, $5 kind, $6 operation, $7 object id, $8 doc, $9 ext, $10 client id.
// Untargeted programs and events reach every VEN; targeted ones the VENs whose reach shares a
// key with them (visibility.ts).
const ENQUEUE = `
INSERT INTO vtn_mqtt_messages (organization_id, object_type, operation, object_id, object, ext, client_id, topics)
SELECT $1::int, $5, $6, $7, $8, $9, $10, $2::text[] || CASE WHEN $3::text = '' THEN '{}'::text[] ELSE coalesce((
  SELECT array_agg('${TOPIC_ROOT}/' || $1::int || '/vens/' || v.id || $3::text ORDER BY v.seq) FROM vtn_vens v
  WHERE v.organization_id = $1::int
    AND ${reachesVenSql('$4::text[]')}
), '{}') END`;

/** Writes the MQTT message of a change (inside the change's transaction). */
export async function enqueueMqtt(tx: Queryable, change: Change): Promise<void> {
  const op = TO_31_OPERATION[change.operation]!;
  let venId: string | undefined;
  if (change.kind === 'RESOURCE') venId = (JSON.parse(change.doc) as { venID?: string }).venID;
  const perVen = change.kind === 'PROGRAM' || change.kind === 'EVENT' ? `/${COLLECTION[change.kind]}/${op.toLowerCase()}` : '';
  await tx.query({
    name: 'vtn_enqueue_mqtt',
    text: ENQUEUE,
    values: [
      change.organizationId,
      fixedTopics(change, venId),
      perVen,
      change.targetKeys,
      change.kind,
      op,
      change.objectId,
      change.doc,
      change.ext ? JSON.stringify(change.ext) : null,
      change.ownerClientId,
    ],
  });
}

const ENQUEUE_MANY = `
INSERT INTO vtn_mqtt_messages (organization_id, object_type, operation, object_id, object, ext, client_id, topics)
SELECT c.org, c.mop, c.mop2, c.oid, c.doc, c.ext, c.owner, c.fixed || CASE WHEN c.perven = '' THEN '{}'::text[] ELSE coalesce((
  SELECT array_agg('${TOPIC_ROOT}/' || c.org || '/vens/' || v.id || c.perven ORDER BY v.seq) FROM vtn_vens v
  WHERE v.organization_id = c.org AND ${reachesVenSql('c.keys')}
), '{}') END
FROM json_to_recordset($1::json) AS c(${CHANGE_COLUMNS}, mop text, mop2 text, fixed text[], perven text)
ORDER BY c.i`;

/** enqueueMqtt for many changes in one statement, their messages in the order of the changes. */
export async function enqueueMqttMany(tx: Queryable, changes: readonly Change[]): Promise<void> {
  if (changes.length === 0) return;
  const json = changesJson(changes, (change) => {
    const op = TO_31_OPERATION[change.operation]!;
    const venId = change.kind === 'RESOURCE' ? (JSON.parse(change.doc) as { venID?: string }).venID : undefined;
    const perven = change.kind === 'PROGRAM' || change.kind === 'EVENT' ? `/${COLLECTION[change.kind]}/${op.toLowerCase()}` : '';
    return { mop: change.kind, mop2: op, fixed: fixedTopics(change, venId), perven };
  });
  await tx.query({ name: 'vtn_enqueue_mqtt_many', text: ENQUEUE_MANY, values: [json] });
}

/** The VEN id a topic filter names (`<prefix>vens/<venID>/…`), if any (not a wildcard). */
export function venOfFilter(filter: string, organizationId: number): string | undefined {
  const prefix = topicPrefix(organizationId);
  if (!filter.startsWith(prefix)) return undefined;
  const [collection, venId] = filter.slice(prefix.length).split('/');
  return collection === 'vens' && venId !== undefined && venId !== '+' && venId !== '#' && venId !== '' ? venId : undefined;
}

/** What an MQTT client may subscribe to: a business-logic client anything of its organization;
 * a VEN client only topics under `vens/<venID>/` of its own VENs (no wildcard in place of the
 * VEN). Returns whether the filter is allowed. */
export function subscriptionAllowed(filter: string, organizationId: number, ven: boolean, ownVens: ReadonlySet<string>): boolean {
  const prefix = topicPrefix(organizationId);
  if (!filter.startsWith(prefix)) return false;
  const rest = filter.slice(prefix.length).split('/');
  if (!ven) return true;
  return rest[0] === 'vens' && rest.length >= 2 && ownVens.has(rest[1]!);
}
