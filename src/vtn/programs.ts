// Programs: SQL and rules. programName is unique within the VTN (409); a program that still
// has events cannot be deleted (409, no cascade).
import { conflict } from '../http/errors.ts';
import type { Queryable } from '../store/database.ts';
import type { VtnCaller } from './access.ts';
import { mutate, type PageParams, type TargetParams, type VtnDeps } from './context.ts';
import { deleteRow, findObject, insertRow, listWhere, restrictTo, updateRow } from './objects.ts';
import type { Change } from './outbox.ts';
import { documentOf, listDocuments, newStamp, query, replacedStamp, violatedUnique } from './sql.ts';
import type { Ext } from './events.ts';
import { targetKeys, type ValuesMap } from './targets.ts';

const TABLE = 'vtn_programs';

export interface ProgramBody {
  programName: string;
  targets?: ValuesMap[] | null;
  [field: string]: unknown;
}

export type ProgramQuery = PageParams & TargetParams;

export function listPrograms(db: Queryable, caller: VtnCaller, q: ProgramQuery): Promise<string> {
  return listDocuments(db, TABLE, restrictTo(listWhere(caller, q, ['PROGRAM_NAME', 't.program_name']), caller, 'targeted'), ['seq'], q);
}

export async function getProgram(db: Queryable, caller: VtnCaller, id: string): Promise<string | undefined> {
  return (await findObject(db, TABLE, caller, id, { visibility: 'targeted' }))?.doc;
}

/** Whether the program exists and the caller may see it (reference checks). */
export async function programVisible(db: Queryable, caller: VtnCaller, id: string): Promise<boolean> {
  return (await findObject(db, TABLE, caller, id, { visibility: 'targeted' })) !== undefined;
}

function change(caller: VtnCaller, operation: Change['operation'], id: string, doc: string, targets: ValuesMap[] | null | undefined, ext: Ext): Change {
  return { organizationId: caller.organizationId, kind: 'PROGRAM', operation, objectId: id, doc, targets, targetKeys: targetKeys(targets), programId: id, ownerClientId: null, ext };
}

/** The ext column of a write: absent (kept) when undefined (see events.ts, Ext). */
const extColumn = (ext: Ext) => (ext === undefined ? {} : { ext: ext === null ? null : JSON.stringify(ext) });

function nameTaken(err: unknown, name: string): unknown {
  return violatedUnique(err) === 'vtn_programs_name_key' ? conflict(`programName ${JSON.stringify(name)} is already used in this VTN`) : err;
}

export async function createProgram(deps: VtnDeps, caller: VtnCaller, body: ProgramBody, ext?: Ext): Promise<string> {
  const stamp = newStamp();
  const doc = JSON.stringify(documentOf('PROGRAM', stamp, body));
  try {
    return await mutate(deps, async (tx) => {
      await insertRow(tx, TABLE, caller, stamp, {
        program_name: body.programName,
        target_keys: targetKeys(body.targets),
        doc,
        ...extColumn(ext),
      });
      return { result: doc, changes: [change(caller, 'POST', stamp.id, doc, body.targets, ext)] };
    });
  } catch (err) {
    throw nameTaken(err, body.programName);
  }
}

export async function updateProgram(deps: VtnDeps, caller: VtnCaller, id: string, body: ProgramBody, ext?: Ext): Promise<string | undefined> {
  try {
    return await mutate(deps, async (tx) => {
      const found = await findObject(tx, TABLE, caller, id, { visibility: 'targeted', forUpdate: true, columns: 't.ext' });
      if (!found) return { result: undefined, changes: [] };
      const stamp = replacedStamp(id, found);
      const doc = JSON.stringify(documentOf('PROGRAM', stamp, body));
      await updateRow(tx, TABLE, caller, stamp, {
        program_name: body.programName,
        target_keys: targetKeys(body.targets),
        doc,
        ...extColumn(ext),
      });
      return { result: doc, changes: [change(caller, 'PUT', id, doc, body.targets, ext === undefined ? (found.ext as Ext) : ext)] };
    });
  } catch (err) {
    throw nameTaken(err, body.programName);
  }
}

export async function deleteProgram(deps: VtnDeps, caller: VtnCaller, id: string): Promise<string | undefined> {
  return mutate(deps, async (tx) => {
    const found = await findObject(tx, TABLE, caller, id, { visibility: 'targeted', forUpdate: true, columns: 't.doc->\'targets\' AS targets, t.ext' });
    if (!found) return { result: undefined, changes: [] };
    // The foreign key from events refuses too; this check gives the reason in words.
    const events = await query<{ n: number }>(tx, 'SELECT count(*) AS n FROM vtn_events WHERE organization_id = $1 AND program_id = $2', [caller.organizationId, id]);
    const count = events[0]!.n;
    if (count > 0) throw conflict(`Program ${id} still has ${count} event${count === 1 ? '' : 's'}; delete them first (programs are not deleted with their events)`);
    await deleteRow(tx, TABLE, caller.organizationId, id);
    return { result: found.doc, changes: [change(caller, 'DELETE', id, found.doc, found.targets as ValuesMap[] | null, found.ext as Ext)] };
  });
}
