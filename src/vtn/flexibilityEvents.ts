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
import { insertRow } from './objects.ts';
import type { Change } from './outbox.ts';
import { documentOf, newStamp, query, replacedStamp, type Stamp } from './sql.ts';
import type { DispatchItem, DispatchOutcome, EventPlan } from '../shared/dispatchContract.ts';

export type { DispatchItem, DispatchOutcome, EventPlan };

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
async function programFor(tx: PoolClient, organizationId: number, zoneName: string, changes: Change[]): Promise<string> {
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

interface Names {
  venName: string;
  resourceName: string;
  granted: boolean;
}

interface Stored {
  organizationId: number;
  id: string;
  createdDateTime: string;
  modificationDateTime: string;
  doc: string;
  programId: string;
  targets: EventBody['targets'];
}

/** The VEN and resource names of the plans, by `org:venResourceId:venId`. */
async function namesOf(tx: PoolClient, plans: readonly { organizationId: number; plan: EventPlan }[]): Promise<Map<string, Names>> {
  if (plans.length === 0) return new Map();
  const rows = await query<Names & { key: string }>(
    tx,
    `SELECT q.org || ':' || q.rid || ':' || q.vid AS key, v.ven_name AS "venName", r.resource_name AS "resourceName", v.name_granted AS granted
     FROM unnest($1::int[], $2::text[], $3::text[]) AS q(org, rid, vid)
     JOIN vtn_resources r ON r.organization_id = q.org AND r.id = q.rid AND r.ven_id = q.vid
     JOIN vtn_vens v ON v.organization_id = r.organization_id AND v.id = r.ven_id`,
    [plans.map((p) => p.organizationId), plans.map((p) => p.plan.venResourceId), plans.map((p) => p.plan.venId)],
  );
  return new Map(rows.map((r) => [r.key, r]));
}

/** The stored events of the items, locked for this transaction, by `org:id`. */
async function lockEvents(tx: PoolClient, items: readonly DispatchItem[]): Promise<Map<string, Stored>> {
  const known = items.filter((i) => i.eventId !== null);
  if (known.length === 0) return new Map();
  const rows = await query<Stored>(
    tx,
    `SELECT e.organization_id AS "organizationId", e.id, e.doc->>'createdDateTime' AS "createdDateTime", e.doc->>'modificationDateTime' AS "modificationDateTime",
       e.doc::text AS doc, e.program_id AS "programId", e.doc->'targets' AS targets
     FROM vtn_events e JOIN unnest($1::int[], $2::text[]) AS q(org, id) ON e.organization_id = q.org AND e.id = q.id
     ORDER BY e.organization_id, e.id FOR UPDATE OF e`,
    [known.map((i) => i.organizationId), known.map((i) => i.eventId)],
  );
  return new Map(rows.map((r) => [`${r.organizationId}:${r.id}`, r]));
}

interface Row {
  organizationId: number;
  stamp: Stamp;
  body: EventBody;
  doc: string;
}

/** Inserts or replaces event rows, one statement for all (the columns events.ts writes). */
async function writeRows(tx: PoolClient, rows: readonly Row[], insert: boolean): Promise<void> {
  if (rows.length === 0) return;
  const cols = rows.map((r) => ({ ...eventColumns(r.body, r.doc, null), organizationId: r.organizationId, stamp: r.stamp }));
  const values = [
    cols.map((c) => c.organizationId),
    cols.map((c) => c.stamp.id),
    cols.map((c) => c.stamp.createdDateTime),
    cols.map((c) => c.stamp.modificationDateTime),
    cols.map((c) => c.program_id),
    cols.map((c) => c.target_keys[0] ?? null),
    cols.map((c) => c.target_keys[1] ?? null),
    cols.map((c) => c.span_start),
    cols.map((c) => c.span_end),
    cols.map((c) => c.doc),
  ];
  const input = `unnest($1::int[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::timestamptz[], $10::json[])
    AS q(org, id, created, modified, program, k1, k2, span_start, span_end, doc)`;
  // Dispatched events always have their two targets (VEN_NAME, RESOURCE_NAME): two keys.
  if (insert) {
    await query(
      tx,
      `INSERT INTO vtn_events (organization_id, id, created_at, modified_at, program_id, priority, target_keys, span_start, span_end, doc, ext)
       SELECT q.org, q.id, q.created, q.modified, q.program, NULL, ARRAY[q.k1, q.k2], q.span_start, q.span_end, q.doc, NULL FROM ${input}`,
      values,
    );
  } else {
    await query(
      tx,
      `UPDATE vtn_events e SET modified_at = q.modified, program_id = q.program, priority = NULL, target_keys = ARRAY[q.k1, q.k2], span_start = q.span_start,
         span_end = q.span_end, doc = q.doc, ext = NULL
       FROM ${input} WHERE e.organization_id = q.org AND e.id = q.id`,
      values,
    );
  }
}

/** Writes (creates, replaces or deletes) the events of `items` in the caller's transaction, a
 * few statements for the whole batch. Returns each item's outcome and what to do after the
 * caller commits. */
export async function writeDispatchEvents(deps: VtnDeps, tx: PoolClient, items: readonly DispatchItem[]): Promise<{ outcomes: DispatchOutcome[]; afterCommit: () => void }> {
  const planned = items.flatMap((item) => (item.plan ? [{ organizationId: item.organizationId, plan: item.plan }] : []));
  const names = await namesOf(tx, planned);
  const stored = await lockEvents(tx, items);
  const programs = new Map<string, string>();
  const programChanges: Change[] = [];
  const changes: Change[] = [];
  const deleted: Stored[] = [];
  const inserts: Row[] = [];
  const updates: Row[] = [];
  const outcomes: DispatchOutcome[] = [];
  for (const item of items) {
    const { plan, organizationId } = item;
    const caller = callerIn(organizationId);
    const old = item.eventId ? stored.get(`${organizationId}:${item.eventId}`) : undefined;
    const found = plan ? names.get(`${organizationId}:${plan.venResourceId}:${plan.venId}`) : undefined;
    if (!plan || !found) {
      if (old) {
        deleted.push(old);
        changes.push(eventChange(caller, 'DELETE', old.id, old.doc, { programID: old.programId, targets: old.targets }, null));
      }
      outcomes.push({ eventId: null, reason: plan ? `the bound VEN resource ${plan.venResourceId} of VEN ${plan.venId} no longer exists in the VTN; bind the grid resource again` : null });
      continue;
    }
    const key = `${organizationId}:${programNameOf(plan.zoneName)}`;
    let programId = programs.get(key);
    if (!programId) programs.set(key, (programId = await programFor(tx, organizationId, plan.zoneName, programChanges)));
    const body = eventBody(programId, plan, found);
    const stamp = old ? replacedStamp(old.id, old) : newStamp();
    const doc = JSON.stringify(documentOf('EVENT', stamp, body));
    (old ? updates : inserts).push({ organizationId, stamp, body, doc });
    changes.push(eventChange(caller, old ? 'PUT' : 'POST', stamp.id, doc, body, null));
    // The event is addressed by the VEN's name, which reaches the VEN only once business logic
    // granted it (docs/vtn.md, VEN identity): say so rather than look sent to a VEN that cannot see it.
    const note = found.granted ? null : `VEN ${plan.venId} registered its name itself; the event reaches it once business logic confirms the VEN (PUT with its name)`;
    outcomes.push({ eventId: stamp.id, note });
  }
  if (deleted.length > 0) {
    await query(tx, 'DELETE FROM vtn_events e USING unnest($1::int[], $2::text[]) AS q(org, id) WHERE e.organization_id = q.org AND e.id = q.id', [deleted.map((d) => d.organizationId), deleted.map((d) => d.id)]);
  }
  await writeRows(tx, inserts, true);
  await writeRows(tx, updates, false);
  const afterCommit = await recordChanges(deps, tx, [...programChanges, ...changes]);
  return { outcomes, afterCommit };
}
