// Resources of a VEN: SQL and rules. The VEN in the path must exist and be visible to the caller
// (404); resourceName is unique within the VEN (409); venID is taken from the path. A resource's
// targets reach its VEN (visibility.ts), so, as for its VEN's, a VEN client cannot set or change
// them (403; omitted on update: kept).
import { conflict, forbidden, notFound } from '../http/errors.ts';
import type { Queryable } from '../store/database.ts';
import type { VtnCaller } from './access.ts';
import { mutate, type PageParams, type TargetParams, type VtnDeps } from './context.ts';
import { deleteRow, findObject, insertRow, listWhere, restrictTo, updateRow } from './objects.ts';
import type { Change } from './outbox.ts';
import { documentOf, listDocuments, newStamp, replacedStamp, violatedUnique, Where } from './sql.ts';
import { sameKeys, targetKeys, type ValuesMap } from './targets.ts';
import { refreshReach } from './visibility.ts';

const TABLE = 'vtn_resources';

export interface ResourceBody {
  resourceName: string;
  targets?: ValuesMap[] | null;
  [field: string]: unknown;
}

export type ResourceQuery = PageParams & TargetParams & { resourceName?: string };

/** The VEN's credential binding (null = unbound) if the caller may see the VEN; else 404. */
async function requireVen(db: Queryable, caller: VtnCaller, venId: string): Promise<string | null> {
  const found = await findObject(db, 'vtn_vens', caller, venId, { visibility: 'ven', columns: 't.client_id AS "clientId"' });
  if (!found) throw notFound(`Ven ${venId}`);
  return found.clientId as string | null;
}

const inVen = (venId: string) => (w: Where) => void w.add(`t.ven_id = ${w.param(venId)}`);

export async function listResources(db: Queryable, caller: VtnCaller, venId: string, q: ResourceQuery): Promise<string> {
  const w = listWhere(caller, q, ['RESOURCE_NAME', 't.resource_name']);
  await requireVen(db, caller, venId);
  w.add(`t.ven_id = ${w.param(venId)}`);
  if (q.resourceName !== undefined) w.add(`t.resource_name = ${w.param(q.resourceName)}`);
  return listDocuments(db, TABLE, w, ['seq'], q);
}

/** Resources of every VEN the caller may see (OpenADR 3.1 lists them first-level). */
export function listAllResources(db: Queryable, caller: VtnCaller, q: ResourceQuery & { venID?: string }): Promise<string> {
  const w = listWhere(caller, q, ['RESOURCE_NAME', 't.resource_name']);
  if (q.venID !== undefined) w.add(`t.ven_id = ${w.param(q.venID)}`);
  if (q.resourceName !== undefined) w.add(`t.resource_name = ${w.param(q.resourceName)}`);
  return listDocuments(db, TABLE, restrictTo(w, caller, 'resource'), ['seq'], q);
}

export async function getResource(db: Queryable, caller: VtnCaller, venId: string, id: string): Promise<string | undefined> {
  return (await findObject(db, TABLE, caller, id, { visibility: 'resource', where: inVen(venId) }))?.doc;
}

export function resourceChange(caller: VtnCaller, operation: Change['operation'], id: string, doc: string, targets: ValuesMap[] | null | undefined, venClient: string | null): Change {
  return { organizationId: caller.organizationId, kind: 'RESOURCE', operation, objectId: id, doc, targets, targetKeys: targetKeys(targets), programId: null, ownerClientId: venClient };
}

function nameTaken(err: unknown, name: string): unknown {
  return violatedUnique(err) === 'vtn_resources_name_key' ? conflict(`resourceName ${JSON.stringify(name)} is already used in this VEN`) : err;
}

export async function createResource(deps: VtnDeps, caller: VtnCaller, venId: string, body: ResourceBody): Promise<string> {
  if (caller.ven && targetKeys(body.targets).length > 0) throw forbidden('A VEN client cannot set its resources’ targets');
  const stamp = newStamp();
  const doc = JSON.stringify(documentOf('RESOURCE', stamp, body, { venID: venId }, ['venID']));
  try {
    return await mutate(deps, async (tx) => {
      const venClient = await requireVen(tx, caller, venId);
      await insertRow(tx, TABLE, caller, stamp, {
        ven_id: venId,
        resource_name: body.resourceName,
        target_keys: targetKeys(body.targets),
        doc,
      });
      await refreshReach(tx, caller.organizationId, venId);
      return { result: doc, changes: [resourceChange(caller, 'POST', stamp.id, doc, body.targets, venClient)] };
    });
  } catch (err) {
    throw nameTaken(err, body.resourceName);
  }
}

export async function updateResource(deps: VtnDeps, caller: VtnCaller, venId: string, id: string, body: ResourceBody): Promise<string | undefined> {
  try {
    return await mutate(deps, async (tx) => {
      const found = await findObject(tx, TABLE, caller, id, { visibility: 'resource', where: inVen(venId), forUpdate: true, columns: `t.target_keys AS keys, t.doc->'targets' AS targets` });
      if (!found) return { result: undefined, changes: [] };
      const venClient = await requireVen(tx, caller, venId);
      let targets = body.targets;
      if (caller.ven) {
        if (targets === undefined || targets === null) targets = found.targets as ValuesMap[] | null;
        else if (!sameKeys(targetKeys(targets), found.keys as string[])) throw forbidden('A VEN client cannot change its resources’ targets');
      }
      const stamp = replacedStamp(id, found);
      const extra: Record<string, unknown> = { venID: venId };
      if (targets !== undefined) extra.targets = targets;
      const doc = JSON.stringify(documentOf('RESOURCE', stamp, body, extra, ['venID']));
      await updateRow(tx, TABLE, caller, stamp, { resource_name: body.resourceName, target_keys: targetKeys(targets), doc });
      await refreshReach(tx, caller.organizationId, venId);
      return { result: doc, changes: [resourceChange(caller, 'PUT', id, doc, targets, venClient)] };
    });
  } catch (err) {
    throw nameTaken(err, body.resourceName);
  }
}

export async function deleteResource(deps: VtnDeps, caller: VtnCaller, venId: string, id: string): Promise<string | undefined> {
  return mutate(deps, async (tx) => {
    const found = await findObject(tx, TABLE, caller, id, { visibility: 'resource', where: inVen(venId), forUpdate: true, columns: `t.doc->'targets' AS targets` });
    if (!found) return { result: undefined, changes: [] };
    const venClient = await requireVen(tx, caller, venId);
    await deleteRow(tx, TABLE, caller.organizationId, id);
    await refreshReach(tx, caller.organizationId, venId);
    return { result: found.doc, changes: [resourceChange(caller, 'DELETE', id, found.doc, found.targets as ValuesMap[] | null, venClient)] };
  });
}
