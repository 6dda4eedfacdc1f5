// VENs: SQL and rules. venName is unique within the VTN (409). A VEN is served with its
// resources nested. `clientID` (OpenADR 3.1's field, an extension here) binds a VEN to the VTN
// credential acting as it: a VEN client's VENs are bound to it, business-logic clients may bind
// or unbind (null) any VEN; an absent clientID on update keeps the binding. A VEN client cannot
// set or change its VENs' targets (403): targets decide which events it receives. It may rename
// its VEN (OpenADR 3.1.0 restricts only targets), but a name counts as a VEN_NAME target only
// when a business-logic client gave or confirmed it (visibility.ts). Deleting a VEN deletes its
// resources (they are part of it) and notifies their deletion too.
import { conflict, forbidden } from '../http/errors.ts';
import type { PoolClient, Queryable } from '../store/database.ts';
import type { VtnCaller } from './access.ts';
import { mutate, type PageParams, type TargetParams, type VtnDeps } from './context.ts';
import { deleteRow, findObject, insertRow, listWhere, restrictTo, updateRow } from './objects.ts';
import type { Change } from './outbox.ts';
import { resourceChange } from './resources.ts';
import { documentOf, listDocuments, newStamp, query, replacedStamp, violatedUnique } from './sql.ts';
import { sameKeys, targetKeys, VEN_NAME_TARGET, type ValuesMap } from './targets.ts';
import { refreshReach } from './visibility.ts';

const TABLE = 'vtn_vens';

/** The VEN as served: the stored document with its resources spliced in (creation order). */
export const VEN_WITH_RESOURCES = `left(t.doc::text, -1) || ',"resources":[' || coalesce((SELECT string_agg(r.doc::text, ',' ORDER BY r.seq)
  FROM vtn_resources r WHERE r.organization_id = t.organization_id AND r.ven_id = t.id), '') || ']}'`;

export interface VenBody {
  venName: string;
  targets?: ValuesMap[] | null;
  clientID?: string | null;
  [field: string]: unknown;
}

export type VenQuery = PageParams & TargetParams & { venName?: string };

export function listVens(db: Queryable, caller: VtnCaller, q: VenQuery): Promise<string> {
  const w = listWhere(caller, q, [VEN_NAME_TARGET, 't.ven_name']);
  if (q.venName !== undefined) w.add(`t.ven_name = ${w.param(q.venName)}`);
  return listDocuments(db, TABLE, restrictTo(w, caller, 'ven'), ['seq'], q, VEN_WITH_RESOURCES);
}

export async function getVen(db: Queryable, caller: VtnCaller, id: string): Promise<string | undefined> {
  return (await findObject(db, TABLE, caller, id, { visibility: 'ven', docExpression: VEN_WITH_RESOURCES }))?.doc;
}

function change(caller: VtnCaller, operation: Change['operation'], id: string, doc: string, targets: ValuesMap[] | null | undefined, client: string | null): Change {
  return { organizationId: caller.organizationId, kind: 'VEN', operation, objectId: id, doc, targets, targetKeys: targetKeys(targets), programId: null, ownerClientId: client };
}

function nameTaken(err: unknown, name: string): unknown {
  return violatedUnique(err) === 'vtn_vens_name_key' ? conflict(`venName ${JSON.stringify(name)} is already used in this VTN`) : err;
}

/** The binding a write ends with, and the rules for VEN clients. */
function binding(caller: VtnCaller, requested: string | null | undefined, current: string | null): string | null {
  if (!caller.ven) return requested === undefined ? current : requested;
  if (requested !== undefined && requested !== caller.clientId) throw forbidden('A VEN client can only bind a VEN to itself (clientID)');
  return caller.clientId;
}

async function served(tx: PoolClient, caller: VtnCaller, id: string): Promise<string> {
  return (await findObject(tx, TABLE, caller, id, { visibility: 'ven', docExpression: VEN_WITH_RESOURCES }))!.doc;
}

export async function createVen(deps: VtnDeps, caller: VtnCaller, body: VenBody): Promise<string> {
  if (caller.ven && targetKeys(body.targets).length > 0) throw forbidden('A VEN client cannot set its VEN’s targets');
  const client = binding(caller, body.clientID, null);
  const stamp = newStamp();
  // A VEN client's VEN starts with the targets business logic gave it: none ([]).
  const base = JSON.stringify(documentOf('VEN', stamp, body, caller.ven ? { targets: [], clientID: client } : { clientID: client }, ['resources']));
  try {
    return await mutate(deps, async (tx) => {
      await insertRow(tx, TABLE, caller, stamp, {
        ven_name: body.venName,
        client_id: client,
        target_keys: targetKeys(body.targets),
        // A name the VEN client picked itself reaches nothing until a business-logic client confirms it.
        name_granted: !caller.ven,
        doc: base,
      });
      await refreshReach(tx, caller.organizationId, stamp.id);
      const doc = `${base.slice(0, -1)},"resources":[]}`;
      return { result: doc, changes: [change(caller, 'POST', stamp.id, doc, body.targets, client)] };
    });
  } catch (err) {
    throw nameTaken(err, body.venName);
  }
}

export async function updateVen(deps: VtnDeps, caller: VtnCaller, id: string, body: VenBody): Promise<string | undefined> {
  try {
    return await mutate(deps, async (tx) => {
      const found = await findObject(tx, TABLE, caller, id, { visibility: 'ven', forUpdate: true, columns: `t.client_id AS "clientId", t.ven_name AS "venName", t.name_granted AS "nameGranted", t.target_keys AS keys, t.doc->'targets' AS targets` });
      if (!found) return { result: undefined, changes: [] };
      let targets = body.targets;
      if (caller.ven) {
        // Omitted (or null) targets keep the stored ones; sending them back unchanged is fine.
        if (targets === undefined || targets === null) targets = found.targets as ValuesMap[] | null;
        else if (!sameKeys(targetKeys(targets), found.keys as string[])) throw forbidden('A VEN client cannot change its VEN’s targets');
      }
      // A business-logic client's write grants the name as a VEN_NAME target; a VEN client keeps
      // the grant only while it keeps the name.
      const nameGranted = caller.ven ? (found.nameGranted as boolean) && body.venName === found.venName : true;
      const client = binding(caller, body.clientID, found.clientId as string | null);
      const stamp = replacedStamp(id, found);
      const extra: Record<string, unknown> = { clientID: client };
      if (targets !== undefined) extra.targets = targets;
      const base = JSON.stringify(documentOf('VEN', stamp, body, extra, ['resources']));
      await updateRow(tx, TABLE, caller, stamp, { ven_name: body.venName, client_id: client, target_keys: targetKeys(targets), name_granted: nameGranted, doc: base });
      await refreshReach(tx, caller.organizationId, id);
      const doc = await served(tx, caller, id);
      return { result: doc, changes: [change(caller, 'PUT', id, doc, targets, client)] };
    });
  } catch (err) {
    throw nameTaken(err, body.venName);
  }
}

export async function deleteVen(deps: VtnDeps, caller: VtnCaller, id: string): Promise<string | undefined> {
  return mutate(deps, async (tx) => {
    const found = await findObject(tx, TABLE, caller, id, {
      visibility: 'ven',
      forUpdate: true,
      docExpression: VEN_WITH_RESOURCES,
      columns: `t.client_id AS "clientId", t.doc->'targets' AS targets`,
    });
    if (!found) return { result: undefined, changes: [] };
    const client = found.clientId as string | null;
    const resources = await query<{ id: string; doc: string; targets: ValuesMap[] | null }>(
      tx,
      `SELECT id, doc::text AS doc, doc->'targets' AS targets FROM vtn_resources WHERE organization_id = $1 AND ven_id = $2 ORDER BY seq`,
      [caller.organizationId, id],
    );
    await deleteRow(tx, TABLE, caller.organizationId, id);
    const changes = [change(caller, 'DELETE', id, found.doc, found.targets as ValuesMap[] | null, client)];
    for (const r of resources) changes.push(resourceChange(caller, 'DELETE', r.id, r.doc, r.targets, client));
    return { result: found.doc, changes };
  });
}
