// Reports: SQL and rules. programID and eventID must name an existing program and an event of
// that program, visible to the caller (an unknown reference: 400, 409 on 3.1.0); OpenADR 3.1.0
// leaves programID out, and then it is the event's. A report belongs to the credential that created
// it: VEN clients see and change only their own. Reports are records: deleting their event
// later leaves them in place.
import type { Queryable } from '../store/database.ts';
import type { VtnCaller } from './access.ts';
import { mutate, UnknownReference, type PageParams, type VtnDeps, type WindowParams } from './context.ts';
import { addWindow, findEventProgram } from './events.ts';
import { deleteRow, findObject, insertRow, listWhere, restrictTo, updateRow } from './objects.ts';
import type { Change } from './outbox.ts';
import { programVisible } from './programs.ts';
import { documentOf, listDocuments, newStamp, replacedStamp } from './sql.ts';
import { reportSpan, spanColumns, type Period } from './timeSpan.ts';

const TABLE = 'vtn_reports';

export interface ReportBody {
  /** Absent on 3.1.0: the event's program. */
  programID?: string;
  eventID: string;
  clientName: string;
  resources?: { intervalPeriod?: Period | null; intervals?: { intervalPeriod?: Period | null }[] | null }[] | null;
  [field: string]: unknown;
}

export type ReportQuery = PageParams & WindowParams & { programID?: string; eventID?: string; clientName?: string };

export function listReports(db: Queryable, caller: VtnCaller, q: ReportQuery): Promise<string> {
  const w = listWhere(caller);
  if (q.programID !== undefined) w.add(`t.program_id = ${w.param(q.programID)}`);
  if (q.eventID !== undefined) w.add(`t.event_id = ${w.param(q.eventID)}`);
  if (q.clientName !== undefined) w.add(`t.client_name = ${w.param(q.clientName)}`);
  addWindow(w, q);
  return listDocuments(db, TABLE, restrictTo(w, caller, 'owned'), ['seq'], q);
}

export async function getReport(db: Queryable, caller: VtnCaller, id: string): Promise<string | undefined> {
  return (await findObject(db, TABLE, caller, id, { visibility: 'owned' }))?.doc;
}

function change(caller: VtnCaller, operation: Change['operation'], id: string, doc: string, programId: string, owner: string): Change {
  return { organizationId: caller.organizationId, kind: 'REPORT', operation, objectId: id, doc, targets: null, targetKeys: [], programId, ownerClientId: owner };
}

/** Checks the references and returns the body with its programID (the event's when absent). */
async function checkReferences(db: Queryable, caller: VtnCaller, body: ReportBody): Promise<ReportBody & { programID: string }> {
  if (body.programID !== undefined && !(await programVisible(db, caller, body.programID))) {
    throw new UnknownReference(`Program ${body.programID} does not exist`, 'programID', 'must name an existing program');
  }
  const eventProgram = await findEventProgram(db, caller, body.eventID);
  if (eventProgram === undefined) throw new UnknownReference(`Event ${body.eventID} does not exist`, 'eventID', 'must name an existing event');
  if (body.programID === undefined) return { ...body, programID: eventProgram };
  if (eventProgram !== body.programID) {
    throw new UnknownReference(`Event ${body.eventID} belongs to program ${eventProgram}, not ${body.programID}`, 'eventID', 'must be an event of programID');
  }
  return body as ReportBody & { programID: string };
}

function columns(body: ReportBody & { programID: string }, doc: string) {
  const [spanStart, spanEnd] = spanColumns(reportSpan(body.resources));
  return { program_id: body.programID, event_id: body.eventID, client_name: body.clientName, span_start: spanStart, span_end: spanEnd, doc };
}

export async function createReport(deps: VtnDeps, caller: VtnCaller, sent: ReportBody): Promise<string> {
  const stamp = newStamp();
  return mutate(deps, async (tx) => {
    const body = await checkReferences(tx, caller, sent);
    const doc = JSON.stringify(documentOf('REPORT', stamp, body));
    await insertRow(tx, TABLE, caller, stamp, { owner_client_id: caller.clientId, ...columns(body, doc) });
    return { result: doc, changes: [change(caller, 'POST', stamp.id, doc, body.programID, caller.clientId)] };
  });
}

export async function updateReport(deps: VtnDeps, caller: VtnCaller, id: string, sent: ReportBody): Promise<string | undefined> {
  return mutate(deps, async (tx) => {
    const found = await findObject(tx, TABLE, caller, id, { visibility: 'owned', forUpdate: true, columns: 't.owner_client_id AS owner' });
    if (!found) return { result: undefined, changes: [] };
    const body = await checkReferences(tx, caller, sent);
    const stamp = replacedStamp(id, found);
    const doc = JSON.stringify(documentOf('REPORT', stamp, body));
    await updateRow(tx, TABLE, caller, stamp, columns(body, doc));
    return { result: doc, changes: [change(caller, 'PUT', id, doc, body.programID, found.owner as string)] };
  });
}

export async function deleteReport(deps: VtnDeps, caller: VtnCaller, id: string): Promise<string | undefined> {
  return mutate(deps, async (tx) => {
    const found = await findObject(tx, TABLE, caller, id, { visibility: 'owned', forUpdate: true, columns: 't.owner_client_id AS owner, t.program_id AS "programId"' });
    if (!found) return { result: undefined, changes: [] };
    await deleteRow(tx, TABLE, caller.organizationId, id);
    return { result: found.doc, changes: [change(caller, 'DELETE', id, found.doc, found.programId as string, found.owner as string)] };
  });
}
