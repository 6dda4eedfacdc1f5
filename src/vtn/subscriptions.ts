// Subscriptions: SQL and rules. programID must name an existing program the caller may see
// (400); every callbackUrl must pass callbackUrl.ts (400). A subscription belongs to the
// credential that created it (VEN clients see and change only their own) and remembers whether
// that was a VEN client, whose notifications are limited to what it may read. Deleting a
// subscription drops its pending notifications: nothing more is sent for it.
//
// The webhook bearer tokens are the subscriber's secrets: only the subscription's writer reads
// them back (OpenADR serves them in the subscription it wrote). Every other reader, the
// notifications of subscription changes, the MQTT messages and the admin views get
// `public_doc`, the document without them.
import { badRequest, type FieldError } from '../http/errors.ts';
import type { Queryable } from '../store/database.ts';
import type { VtnCaller } from './access.ts';
import { callbackUrlProblem } from './callbackUrl.ts';
import { mutate, UnknownReference, type PageParams, type TargetParams, type VtnDeps } from './context.ts';
import { deleteRow, findObject, insertRow, listWhere, restrictTo, updateRow } from './objects.ts';
import type { Change } from './outbox.ts';
import { programVisible } from './programs.ts';
import type { ObjectKind } from './schemas.ts';
import { documentOf, listDocuments, newStamp, query, replacedStamp, type Where } from './sql.ts';
import { targetKeys, type ValuesMap } from './targets.ts';

const TABLE = 'vtn_subscriptions';

export interface ObjectOperation {
  objects: ObjectKind[];
  operations: string[];
  callbackUrl: string;
  bearerToken?: string | null;
}

export interface SubscriptionBody {
  clientName: string;
  programID: string;
  objectOperations?: ObjectOperation[] | null;
  targets?: ValuesMap[] | null;
  [field: string]: unknown;
}

export type SubscriptionQuery = PageParams & TargetParams & { programID?: string; clientName?: string; objects?: ObjectKind[] };

/** The document without the bearer tokens. */
export function publicSubscriptionDoc(doc: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(doc.objectOperations)) return doc;
  return { ...doc, objectOperations: doc.objectOperations.map((o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== 'bearerToken'))) };
}

/** The served document: the writer's with its tokens, anyone else's without. */
const servedDoc = (caller: VtnCaller) => (w: Where) => `CASE WHEN t.owner_client_id = ${w.param(caller.clientId)} THEN t.doc::text ELSE t.public_doc::text END`;

export function listSubscriptions(db: Queryable, caller: VtnCaller, q: SubscriptionQuery): Promise<string> {
  const w = listWhere(caller, q);
  const docExpression = servedDoc(caller)(w);
  if (q.programID !== undefined) w.add(`t.program_id = ${w.param(q.programID)}`);
  if (q.clientName !== undefined) w.add(`t.client_name = ${w.param(q.clientName)}`);
  if (q.objects) w.add(`t.object_kinds && ${w.param(q.objects)}::text[]`);
  return listDocuments(db, TABLE, restrictTo(w, caller, 'owned'), ['seq'], q, docExpression);
}

export async function getSubscription(db: Queryable, caller: VtnCaller, id: string): Promise<string | undefined> {
  return (await findObject(db, TABLE, caller, id, { visibility: 'owned', docExpression: servedDoc(caller) }))?.doc;
}

function change(caller: VtnCaller, operation: Change['operation'], id: string, doc: string, body: { programID: string; targets?: ValuesMap[] | null }, owner: string): Change {
  const targets = body.targets;
  return { organizationId: caller.organizationId, kind: 'SUBSCRIPTION', operation, objectId: id, doc, targets, targetKeys: targetKeys(targets), programId: body.programID, ownerClientId: owner };
}

async function check(deps: VtnDeps, db: Queryable, caller: VtnCaller, body: SubscriptionBody): Promise<void> {
  const errors: FieldError[] = [];
  body.objectOperations?.forEach((entry, i) => {
    const problem = callbackUrlProblem(entry.callbackUrl, deps.allowPrivateCallbacks);
    if (problem) errors.push({ path: `objectOperations[${i}].callbackUrl`, message: problem });
  });
  if (errors.length > 0) throw badRequest('Invalid callbackUrl', errors);
  if (!(await programVisible(db, caller, body.programID))) {
    throw new UnknownReference(`Program ${body.programID} does not exist`, 'programID', 'must name an existing program');
  }
}

/** The OpenADR version of the surface writing a subscription: its webhooks' body format. */
export type OpenAdrVersion = '3.0.1' | '3.1.0';

function columns(body: SubscriptionBody, doc: Documents, version: OpenAdrVersion) {
  const kinds = new Set(body.objectOperations?.flatMap((entry) => entry.objects));
  return { program_id: body.programID, client_name: body.clientName, object_kinds: [...kinds], target_keys: targetKeys(body.targets), doc: doc.full, public_doc: doc.public, openadr_version: version };
}

interface Documents {
  /** As its writer reads it. */
  full: string;
  /** Without the bearer tokens: what everyone else, notifications and MQTT get. */
  public: string;
}

function documents(stamp: Parameters<typeof documentOf>[1], body: SubscriptionBody): Documents {
  const doc = documentOf('SUBSCRIPTION', stamp, body);
  return { full: JSON.stringify(doc), public: JSON.stringify(publicSubscriptionDoc(doc)) };
}

/** One row per (kind, operation) an entry names, with its callback: what the outbox matches on
 * (outbox.ts). GET is never notified, so it gets no row. */
async function writeCallbacks(tx: Queryable, caller: VtnCaller, id: string, body: SubscriptionBody, replace: boolean): Promise<void> {
  if (replace) await query(tx, 'DELETE FROM vtn_subscription_callbacks WHERE organization_id = $1 AND subscription_id = $2', [caller.organizationId, id]);
  const pairs: string[] = [];
  const urls: string[] = [];
  const tokens: (string | null)[] = [];
  for (const entry of body.objectOperations ?? []) {
    for (const kind of new Set(entry.objects)) {
      for (const operation of new Set(entry.operations)) {
        if (operation === 'GET') continue;
        pairs.push(`${kind}:${operation}`);
        urls.push(entry.callbackUrl);
        tokens.push(entry.bearerToken ?? null);
      }
    }
  }
  if (pairs.length === 0) return;
  await query(
    tx,
    `INSERT INTO vtn_subscription_callbacks (organization_id, subscription_id, object_operation, callback_url, bearer_token)
     SELECT $1, $2, u.pair, u.url, u.token FROM unnest($3::text[], $4::text[], $5::text[]) AS u(pair, url, token)`,
    [caller.organizationId, id, pairs, urls, tokens],
  );
}

export async function createSubscription(deps: VtnDeps, caller: VtnCaller, body: SubscriptionBody, version: OpenAdrVersion = '3.0.1'): Promise<string> {
  const stamp = newStamp();
  const doc = documents(stamp, body);
  return mutate(deps, async (tx) => {
    await check(deps, tx, caller, body);
    await insertRow(tx, TABLE, caller, stamp, {
      owner_client_id: caller.clientId,
      owner_is_ven: caller.ven,
      ...columns(body, doc, version),
    });
    await writeCallbacks(tx, caller, stamp.id, body, false);
    return { result: doc.full, changes: [change(caller, 'POST', stamp.id, doc.public, body, caller.clientId)] };
  });
}

export async function updateSubscription(deps: VtnDeps, caller: VtnCaller, id: string, body: SubscriptionBody, version: OpenAdrVersion = '3.0.1'): Promise<string | undefined> {
  return mutate(deps, async (tx) => {
    const found = await findObject(tx, TABLE, caller, id, { visibility: 'owned', forUpdate: true, columns: 't.owner_client_id AS owner' });
    if (!found) return { result: undefined, changes: [] };
    await check(deps, tx, caller, body);
    const stamp = replacedStamp(id, found);
    const doc = documents(stamp, body);
    await updateRow(tx, TABLE, caller, stamp, columns(body, doc, version));
    await writeCallbacks(tx, caller, id, body, true);
    // Its writer gets it back as sent; the notification carries no token.
    return { result: doc.full, changes: [change(caller, 'PUT', id, doc.public, body, found.owner as string)] };
  });
}

export async function deleteSubscription(deps: VtnDeps, caller: VtnCaller, id: string): Promise<string | undefined> {
  return mutate(deps, async (tx) => {
    const found = await findObject(tx, TABLE, caller, id, {
      visibility: 'owned',
      forUpdate: true,
      docExpression: servedDoc(caller),
      columns: `t.owner_client_id AS owner, t.program_id AS "programID", t.doc->'targets' AS targets, t.public_doc::text AS "publicDoc"`,
    });
    if (!found) return { result: undefined, changes: [] };
    await deleteRow(tx, TABLE, caller.organizationId, id);
    await query(tx, "DELETE FROM vtn_notifications WHERE organization_id = $1 AND subscription_id = $2 AND state = 'pending'", [caller.organizationId, id]);
    const body = { programID: found.programID as string, targets: found.targets as ValuesMap[] | null };
    return { result: found.doc, changes: [change(caller, 'DELETE', id, found.publicDoc as string, body, found.owner as string)] };
  });
}
