// Events: SQL and rules. An event's programID must name an existing program (400). Listing
// order: priority (lower first, none last), then creation. The time span kept beside the
// document (timeSpan.ts) serves the x-start/x-end filter.
import type { Queryable } from '../store/database.ts';
import type { VtnCaller } from './access.ts';
import { mutate, timeWindow, UnknownReference, type PageParams, type TargetParams, type VtnDeps, type WindowParams } from './context.ts';
import { deleteRow, findObject, insertRow, listWhere, restrictTo, updateRow } from './objects.ts';
import type { Change } from './outbox.ts';
import { documentOf, listDocuments, newStamp, replacedStamp, Where } from './sql.ts';
import { targetKeys, type ValuesMap } from './targets.ts';
import { spanColumns, spanOf, type Period } from './timeSpan.ts';

const TABLE = 'vtn_events';
/** Matches the index (organization_id, program_id, priority, seq): ASC puts NULLs last. */
const ORDER = ['priority', 'seq'];

export interface EventBody {
  programID: string;
  priority?: number | null;
  targets?: ValuesMap[] | null;
  intervalPeriod?: Period | null;
  intervals?: { intervalPeriod?: Period | null }[] | null;
  [field: string]: unknown;
}

export type EventQuery = PageParams & TargetParams & WindowParams & { programID?: string };

/** Adds the overlap test of a [start, end) window with the span columns (NULL = unbounded). */
export function addWindow(w: Where, q: WindowParams): void {
  const { start, end } = timeWindow(q);
  if (end !== undefined) w.add(`(t.span_start IS NULL OR t.span_start < ${w.param(end)}::timestamptz)`);
  if (start !== undefined) w.add(`(t.span_end IS NULL OR t.span_end > ${w.param(start)}::timestamptz)`);
}

export function listEvents(db: Queryable, caller: VtnCaller, q: EventQuery): Promise<string> {
  const w = listWhere(caller, q, ['EVENT_NAME', `(t.doc->>'eventName')`]);
  if (q.programID !== undefined) w.add(`t.program_id = ${w.param(q.programID)}`);
  addWindow(w, q);
  return listDocuments(db, TABLE, restrictTo(w, caller, 'targeted'), ORDER, q);
}

export async function getEvent(db: Queryable, caller: VtnCaller, id: string): Promise<string | undefined> {
  return (await findObject(db, TABLE, caller, id, { visibility: 'targeted' }))?.doc;
}

/** The event if it exists and the caller may see it, with its program (report references). */
export async function findEventProgram(db: Queryable, caller: VtnCaller, id: string): Promise<string | undefined> {
  const found = await findObject(db, TABLE, caller, id, { visibility: 'targeted', columns: 't.program_id AS "programId"' });
  return found?.programId as string | undefined;
}

/** OpenADR 3.1-only fields (an event's duration), kept in the `ext` column: undefined keeps what
 * is stored (a 3.0.1 update), null clears it (docs/openadr-3.1.md). */
export type Ext = Record<string, unknown> | null | undefined;

export function change(caller: VtnCaller, operation: Change['operation'], id: string, doc: string, body: { programID: string; targets?: ValuesMap[] | null }, ext?: Ext): Change {
  const targets = body.targets;
  return { organizationId: caller.organizationId, kind: 'EVENT', operation, objectId: id, doc, targets, targetKeys: targetKeys(targets), programId: body.programID, ownerClientId: null, ext };
}

/** Only business-logic clients write events and they see every program, so the foreign key is
 * the reference check (one round trip less than asking first); its violation becomes the
 * unknown reference (400, or 409 on 3.1.0). */
function unknownProgram(err: unknown, programID: string): unknown {
  const e = err as { code?: string; constraint?: string };
  return e.code === '23503' && e.constraint === 'vtn_events_program_fkey'
    ? new UnknownReference(`Program ${programID} does not exist`, 'programID', 'must name an existing program')
    : err;
}

export function columns(body: EventBody, doc: string, ext: Ext) {
  const [spanStart, spanEnd] = spanColumns(spanOf(body.intervalPeriod, body.intervals));
  const base = { program_id: body.programID, priority: body.priority ?? null, target_keys: targetKeys(body.targets), span_start: spanStart, span_end: spanEnd, doc };
  return ext === undefined ? base : { ...base, ext: ext === null ? null : JSON.stringify(ext) };
}

export async function createEvent(deps: VtnDeps, caller: VtnCaller, body: EventBody, ext?: Ext): Promise<string> {
  const stamp = newStamp();
  const doc = JSON.stringify(documentOf('EVENT', stamp, body));
  try {
    return await mutate(deps, async (tx) => {
      await insertRow(tx, TABLE, caller, stamp, columns(body, doc, ext));
      return { result: doc, changes: [change(caller, 'POST', stamp.id, doc, body, ext)] };
    });
  } catch (err) {
    throw unknownProgram(err, body.programID);
  }
}

export async function updateEvent(deps: VtnDeps, caller: VtnCaller, id: string, body: EventBody, ext?: Ext): Promise<string | undefined> {
  try {
    return await mutate(deps, async (tx) => {
      const found = await findObject(tx, TABLE, caller, id, { visibility: 'targeted', forUpdate: true, columns: 't.ext' });
      if (!found) return { result: undefined, changes: [] };
      const stamp = replacedStamp(id, found);
      const doc = JSON.stringify(documentOf('EVENT', stamp, body));
      await updateRow(tx, TABLE, caller, stamp, columns(body, doc, ext));
      return { result: doc, changes: [change(caller, 'PUT', id, doc, body, ext === undefined ? (found.ext as Ext) : ext)] };
    });
  } catch (err) {
    throw unknownProgram(err, body.programID);
  }
}

export async function deleteEvent(deps: VtnDeps, caller: VtnCaller, id: string): Promise<string | undefined> {
  return mutate(deps, async (tx) => {
    const found = await findObject(tx, TABLE, caller, id, { visibility: 'targeted', forUpdate: true, columns: `t.program_id AS "programID", t.doc->'targets' AS targets, t.ext` });
    if (!found) return { result: undefined, changes: [] };
    await deleteRow(tx, TABLE, caller.organizationId, id);
    const body = { programID: found.programID as string, targets: found.targets as ValuesMap[] | null };
    return { result: found.doc, changes: [change(caller, 'DELETE', id, found.doc, body, found.ext as Ext)] };
  });
}
