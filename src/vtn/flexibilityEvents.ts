// Flexibility transactions as OpenADR events (docs/flexibility-loop.md): the VTN side of
// dispatch. The products domain decides what an event must say (a plan: the VEN resource, the
// period, the signed power) and claims its work; this module writes the event into the
// provider's VTN inside that claiming transaction, with the same rows every VTN write has
// (webhook and MQTT outbox, cache notices), so that the VEN hears of it like of any event.
//
// The event, for a transaction of quantity Q kWh over [start, end):
//   - in the program named after the market zone (created on first use, untargeted);
//   - eventName: the transaction's correlation id (VENs and business logic find it with
//     targetType=EVENT_NAME);
//   - targets VEN_NAME (the bound VEN) and RESOURCE_NAME (its resource);
//   - one interval covering [start, end) with DISPATCH_SETPOINT_RELATIVE in KW: the mean change
//     of consumption asked for, Q / hours, negative for upward flexibility (consume less,
//     produce more), positive for downward;
//   - a report descriptor asking for USAGE in KWH of that resource (what usageReports.ts reads).
import type { PoolClient, Queryable } from '../store/database.ts';
import type { VtnCaller } from './access.ts';
import { recordChanges, type VtnDeps } from './context.ts';
import { change as eventChange, columns as eventColumns, type EventBody } from './events.ts';
import { deleteRow, findObject, insertRow, updateRow } from './objects.ts';
import type { Change } from './outbox.ts';
import { documentOf, newStamp, query, replacedStamp } from './sql.ts';

/** What the event of a transaction must say. */
export interface EventPlan {
  venId: string;
  venResourceId: string;
  /** Names the program (the market zone). */
  zoneName: string;
  correlationId: string;
  start: number;
  end: number;
  /** Mean change of consumption over the period, kW: negative = less consumption. */
  setpointKw: number;
}

export interface DispatchItem {
  /** The VTN (organization) of the event: the one it is written to, or was. */
  organizationId: number;
  /** The event written earlier for this transaction, if any. */
  eventId: string | null;
  /** The event wanted now; null: none (the event, if any, is deleted). */
  plan: EventPlan | null;
}

/** The event the transaction has now, or why it has none. */
export type DispatchOutcome = { eventId: string; note: string | null } | { eventId: null; reason: string | null };

export const SETPOINT_PAYLOAD = 'DISPATCH_SETPOINT_RELATIVE';
export const USAGE_PAYLOAD = 'USAGE';

/** The platform writes these events as a business-logic client of the provider's VTN. */
const callerIn = (organizationId: number): VtnCaller => ({ organizationId, clientId: 'flex-market', ven: false });

/** OpenADR programName is at most 128 characters; zone names may be longer. */
export const programNameOf = (zoneName: string): string => [...zoneName].slice(0, 128).join('');

/** ISO 8601 duration of whole seconds as hours, minutes and seconds (PT1H, PT15M, PT48H). */
export function durationText(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `PT${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s || (!h && !m) ? `${s}S` : ''}`;
}

export function eventBody(programId: string, plan: EventPlan, names: { venName: string; resourceName: string }): EventBody {
  const body: EventBody & { intervals: unknown[] } = {
    programID: programId,
    eventName: plan.correlationId,
    priority: null,
    targets: [
      { type: 'VEN_NAME', values: [names.venName] },
      { type: 'RESOURCE_NAME', values: [names.resourceName] },
    ],
    reportDescriptors: [
      {
        payloadType: USAGE_PAYLOAD,
        readingType: 'DIRECT_READ',
        units: 'KWH',
        targets: [{ type: 'RESOURCE_NAME', values: [names.resourceName] }],
        aggregate: false,
        startInterval: -1,
        numIntervals: -1,
        historical: true,
        frequency: -1,
        repeat: 1,
      },
    ],
    payloadDescriptors: [{ objectType: 'EVENT_PAYLOAD_DESCRIPTOR', payloadType: SETPOINT_PAYLOAD, units: 'KW', currency: null }],
    intervalPeriod: { start: new Date(plan.start).toISOString(), duration: durationText(Math.round((plan.end - plan.start) / 1000)) },
    intervals: [{ id: 0, payloads: [{ type: SETPOINT_PAYLOAD, values: [plan.setpointKw] }] }],
  };
  return body;
}

/** Whether the VEN resource exists in the organization's VTN (bindings name it). */
export async function findVenResource(db: Queryable, organizationId: number, venId: string, resourceId: string): Promise<{ path: 'venID' | 'resourceID'; message: string } | undefined> {
  const rows = await query<{ ven: boolean; resource: boolean }>(
    db,
    `SELECT EXISTS (SELECT 1 FROM vtn_vens WHERE organization_id = $1 AND id = $2) AS ven,
       EXISTS (SELECT 1 FROM vtn_resources WHERE organization_id = $1 AND id = $3 AND ven_id = $2) AS resource`,
    [organizationId, venId, resourceId],
  );
  if (!rows[0]!.ven) return { path: 'venID', message: `VEN ${venId} does not exist in the VTN of organization ${organizationId}` };
  if (!rows[0]!.resource) return { path: 'resourceID', message: `resource ${resourceId} is not a resource of VEN ${venId}` };
  return undefined;
}

/** The zone's program in the VTN (found by name, created on first use). A transaction-scoped
 * advisory lock per (VTN, name) keeps two instances from creating it twice. */
async function programFor(deps: VtnDeps, tx: PoolClient, organizationId: number, zoneName: string, changes: Change[]): Promise<string> {
  const name = programNameOf(zoneName);
  await tx.query('SELECT pg_advisory_xact_lock(727274200, hashtext($1))', [`${organizationId}:${name}`]);
  const found = await query<{ id: string }>(tx, 'SELECT id FROM vtn_programs WHERE organization_id = $1 AND program_name = $2', [organizationId, name]);
  if (found[0]) return found[0].id;
  const stamp = newStamp();
  const body = {
    programName: name,
    programLongName: `Flexibility bought in market zone ${zoneName}`.slice(0, 128),
    payloadDescriptors: [{ objectType: 'EVENT_PAYLOAD_DESCRIPTOR', payloadType: SETPOINT_PAYLOAD, units: 'KW', currency: null }],
    targets: null,
    timeZoneOffset: 'PT0S',
  };
  const doc = JSON.stringify(documentOf('PROGRAM', stamp, body));
  await insertRow(tx, 'vtn_programs', callerIn(organizationId), stamp, { program_name: name, target_keys: [], doc });
  changes.push({ organizationId, kind: 'PROGRAM', operation: 'POST', objectId: stamp.id, doc, targets: null, targetKeys: [], programId: stamp.id, ownerClientId: null });
  return stamp.id;
}

async function deleteEvent(tx: PoolClient, organizationId: number, eventId: string, changes: Change[]): Promise<void> {
  const caller = callerIn(organizationId);
  const found = await findObject(tx, 'vtn_events', caller, eventId, { visibility: 'targeted', forUpdate: true, columns: `t.program_id AS "programID", t.doc->'targets' AS targets, t.ext` });
  if (!found) return;
  await deleteRow(tx, 'vtn_events', organizationId, eventId);
  changes.push(eventChange(caller, 'DELETE', eventId, found.doc, { programID: found.programID as string, targets: found.targets as EventBody['targets'] }, found.ext as undefined));
}

async function writeOne(deps: VtnDeps, tx: PoolClient, item: DispatchItem, programs: Map<string, string>, changes: Change[]): Promise<DispatchOutcome> {
  const { plan, organizationId } = item;
  if (!plan) {
    if (item.eventId) await deleteEvent(tx, organizationId, item.eventId, changes);
    return { eventId: null, reason: null };
  }
  const names = await query<{ venName: string; resourceName: string; granted: boolean }>(
    tx,
    `SELECT v.ven_name AS "venName", r.resource_name AS "resourceName", v.name_granted AS granted FROM vtn_resources r JOIN vtn_vens v ON v.organization_id = r.organization_id AND v.id = r.ven_id
     WHERE r.organization_id = $1 AND r.id = $2 AND r.ven_id = $3`,
    [organizationId, plan.venResourceId, plan.venId],
  );
  if (!names[0]) {
    if (item.eventId) await deleteEvent(tx, organizationId, item.eventId, changes);
    return { eventId: null, reason: `the bound VEN resource ${plan.venResourceId} of VEN ${plan.venId} no longer exists in the VTN; bind the grid resource again` };
  }
  const key = `${organizationId}:${programNameOf(plan.zoneName)}`;
  let programId = programs.get(key);
  if (!programId) programs.set(key, (programId = await programFor(deps, tx, organizationId, plan.zoneName, changes)));
  const body = eventBody(programId, plan, names[0]);
  const caller = callerIn(organizationId);
  // The event is addressed by the VEN's name, which reaches the VEN only once business logic
  // granted it (docs/vtn.md, VEN identity): say so rather than look sent to a VEN that cannot see it.
  const note = names[0].granted ? null : `VEN ${plan.venId} registered its name itself; the event reaches it once business logic confirms the VEN (PUT with its name)`;
  const existing = item.eventId ? await findObject(tx, 'vtn_events', caller, item.eventId, { visibility: 'targeted', forUpdate: true }) : undefined;
  if (existing) {
    const stamp = replacedStamp(item.eventId!, existing);
    const doc = JSON.stringify(documentOf('EVENT', stamp, body));
    await updateRow(tx, 'vtn_events', caller, stamp, eventColumns(body, doc, null));
    changes.push(eventChange(caller, 'PUT', stamp.id, doc, body, null));
    return { eventId: stamp.id, note };
  }
  const stamp = newStamp();
  const doc = JSON.stringify(documentOf('EVENT', stamp, body));
  await insertRow(tx, 'vtn_events', caller, stamp, eventColumns(body, doc, null));
  changes.push(eventChange(caller, 'POST', stamp.id, doc, body, null));
  return { eventId: stamp.id, note };
}

/** Writes (creates, replaces or deletes) the events of `items` in the caller's transaction.
 * Returns each item's outcome and what to do after the caller commits. */
export async function writeDispatchEvents(deps: VtnDeps, tx: PoolClient, items: readonly DispatchItem[]): Promise<{ outcomes: DispatchOutcome[]; afterCommit: () => void }> {
  const changes: Change[] = [];
  const programs = new Map<string, string>();
  const outcomes: DispatchOutcome[] = [];
  for (const item of items) outcomes.push(await writeOne(deps, tx, item, programs, changes));
  const afterCommit = await recordChanges(deps, tx, changes);
  return { outcomes, afterCommit };
}

