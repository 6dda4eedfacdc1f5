// VEN usage reports, the VTN side (docs/flexibility-loop.md): how an OpenADR report's USAGE and
// DEMAND payloads read as energy and power over time intervals, the queue of reports waiting to
// become meter data (migration 011), and what became of each (the processing state).
//
// Reading a report resource:
//   - it names a resource (`resourceName`) of a VEN bound to the credential that wrote the
//     report; another name, or one that several of its VENs have, is refused;
//   - each interval's time: its own intervalPeriod, else the k-th of the resource's sequence
//     (OpenADR: intervals are sequential), else the event's interval with the same id;
//   - payload USAGE ("energy usage over an interval", OpenADR 3 Definitions) in KWH, or DEMAND
//     ("power usage for an interval, i.e. Real Power") in KW, the units and reading type taken
//     from the report's payloadDescriptors, else from the event's reportDescriptors; reading
//     types FORECAST (not a measurement) and PEAK (not the interval's mean) are refused, as are
//     other units, values that are not one finite number, and intervals without a duration.
//     With both in one interval, USAGE is taken. Other payload types are not meter data: ignored.
import type { Queryable } from '../store/database.ts';
import { addDuration, isZero, parseDuration, type Period } from './timeSpan.ts';
import { query } from './sql.ts';

export interface UsageSample {
  start: number;
  seconds: number;
  /** energy: kWh over the interval; power: mean kW. */
  kind: 'energy' | 'power';
  value: number;
}

export interface Refusal {
  path: string;
  reason: string;
}

export interface ReportResourceUsage {
  resourceName: string;
  /** The VTN resource the name resolved to; null with `reason` when it did not. */
  venResourceId: string | null;
  samples: UsageSample[];
  refused: Refusal[];
  reason: string | null;
}

export interface ClaimedReport {
  organizationId: number;
  reportId: string;
  resources: ReportResourceUsage[];
}

export type UsageState = 'stored' | 'partly stored' | 'refused';

export interface ResourceOutcome {
  resourceName: string;
  state: UsageState;
  /** Readings written to the actual register. */
  readings: number;
  reason: string | null;
  refused: Refusal[];
}

/** At most this many refused intervals are listed per resource (the count is in the reason). */
export const MAX_LISTED = 20;
const MAX_SECONDS = 366 * 86_400;

const READING_TYPES = new Set(['DIRECT_READ', 'ESTIMATED', 'SUMMED', 'MEAN', 'AVERAGE']);
const UNITS: Record<string, { units: string; kind: UsageSample['kind'] }> = { USAGE: { units: 'KWH', kind: 'energy' }, DEMAND: { units: 'KW', kind: 'power' } };

interface Descriptor {
  payloadType?: string;
  units?: string | null;
  readingType?: string | null;
}
interface Payload {
  type: string;
  values: unknown[];
}
interface Interval {
  id: number;
  intervalPeriod?: Period | null;
  payloads: Payload[];
}
interface ReportDoc {
  payloadDescriptors?: Descriptor[] | null;
  resources?: { resourceName: string; intervalPeriod?: Period | null; intervals?: Interval[] | null }[];
}
interface EventDoc {
  intervalPeriod?: Period | null;
  intervals?: Interval[] | null;
  reportDescriptors?: Descriptor[] | null;
}

type Timing = { start: number; seconds: number } | { error: string };

function timing(start: number, duration: string | null | undefined, k = 1): Timing {
  const d = duration ? parseDuration(duration) : undefined;
  if (!d || isZero(d) || d.sign < 0) return { error: 'the interval has no duration' };
  const from = k === 1 ? start : addDuration(start, d, k - 1);
  const seconds = (addDuration(from, d) - from) / 1000;
  if (!Number.isInteger(seconds) || seconds > MAX_SECONDS) return { error: `the interval's duration must be whole seconds, at most ${MAX_SECONDS}` };
  return { start: from, seconds };
}

/** Each interval's time in a sequence with a default period (OpenADR: intervals are sequential). */
function intervalTiming(period: Period | null | undefined, interval: Interval, position: number): Timing | undefined {
  const own = interval.intervalPeriod;
  if (own) return timing(Date.parse(own.start), own.duration ?? period?.duration);
  if (period) return timing(Date.parse(period.start), period.duration, position + 1);
  return undefined;
}

function descriptors(list: Descriptor[] | null | undefined): Map<string, Descriptor> {
  return new Map((list ?? []).filter((d) => d.payloadType).map((d) => [d.payloadType!, d]));
}

/** The usage samples of one report resource, and the intervals refused with their reason. */
export function readResource(doc: ReportDoc, event: EventDoc | null, r: number): Pick<ReportResourceUsage, 'samples' | 'refused'> {
  const resource = doc.resources![r]!;
  const own = descriptors(doc.payloadDescriptors);
  const asked = descriptors(event?.reportDescriptors);
  const eventTimes = new Map<number, Timing>();
  (event?.intervals ?? []).forEach((interval, k) => {
    const t = intervalTiming(event?.intervalPeriod, interval, k);
    if (t) eventTimes.set(interval.id, t);
  });
  const samples: UsageSample[] = [];
  const refused: Refusal[] = [];
  (resource.intervals ?? []).forEach((interval, i) => {
    const p = interval.payloads.findIndex((x) => x.type === 'USAGE') >= 0 ? interval.payloads.findIndex((x) => x.type === 'USAGE') : interval.payloads.findIndex((x) => x.type === 'DEMAND');
    if (p < 0) return;
    const payload = interval.payloads[p]!;
    const path = `resources[${r}].intervals[${i}].payloads[${p}]`;
    const refuse = (reason: string) => void refused.push({ path, reason });
    const expected = UNITS[payload.type]!;
    const descriptor = own.get(payload.type) ?? asked.get(payload.type);
    const units = descriptor?.units ?? null;
    const readingType = descriptor?.readingType ?? 'DIRECT_READ';
    if (units === null) return refuse(`${payload.type} has no units: give them in a payloadDescriptor (${expected.units})`);
    if (units.toUpperCase() !== expected.units) return refuse(`${payload.type} in ${units} does not map to a register: send ${expected.units}`);
    if (!READING_TYPES.has(readingType.toUpperCase())) return refuse(`reading type ${readingType} is not a measurement of the interval (accepted: ${[...READING_TYPES].join(', ')})`);
    if (payload.values.length !== 1 || typeof payload.values[0] !== 'number' || !Number.isFinite(payload.values[0])) return refuse('the payload must hold one number');
    const t = intervalTiming(resource.intervalPeriod, interval, i) ?? eventTimes.get(interval.id) ?? { error: 'the interval has no intervalPeriod, nor has the resource or the event an interval with its id' };
    if ('error' in t) return refuse(t.error);
    samples.push({ start: t.start, seconds: t.seconds, kind: expected.kind, value: payload.values[0] });
  });
  return { samples, refused };
}

// The queue -----------------------------------------------------------------------------------

interface ClaimedRow {
  organizationId: number;
  reportId: string;
  doc: ReportDoc;
  event: EventDoc | null;
  owner: string;
}

/** Claims pending reports (locked until the caller's transaction ends) and reads them. */
export async function claimUsageReports(tx: Queryable, limit: number): Promise<ClaimedReport[]> {
  const rows = await query<ClaimedRow>(
    tx,
    `SELECT u.organization_id AS "organizationId", u.report_id AS "reportId", r.doc, e.doc AS event, r.owner_client_id AS owner
     FROM vtn_usage_reports u JOIN vtn_reports r ON r.organization_id = u.organization_id AND r.id = u.report_id
       LEFT JOIN vtn_events e ON e.organization_id = r.organization_id AND e.id = r.event_id
     WHERE u.state = 'pending' AND u.next_attempt_at <= now() ORDER BY u.next_attempt_at, u.report_id LIMIT $1 FOR UPDATE OF u SKIP LOCKED`,
    [limit],
  );
  const out: ClaimedReport[] = [];
  for (const row of rows) {
    const names = [...new Set((row.doc.resources ?? []).map((r) => r.resourceName))];
    const owned = await query<{ id: string; name: string }>(
      tx,
      `SELECT res.id, res.resource_name AS name FROM vtn_resources res JOIN vtn_vens v ON v.organization_id = res.organization_id AND v.id = res.ven_id
       WHERE res.organization_id = $1 AND v.client_id = $2 AND res.resource_name = ANY($3::text[])`,
      [row.organizationId, row.owner, names],
    );
    const byName = new Map<string, string[]>();
    for (const o of owned) byName.set(o.name, [...(byName.get(o.name) ?? []), o.id]);
    const resources = (row.doc.resources ?? []).map((resource, r): ReportResourceUsage => {
      const ids = byName.get(resource.resourceName) ?? [];
      const base = { resourceName: resource.resourceName, samples: [], refused: [] };
      if (ids.length === 0) return { ...base, venResourceId: null, reason: `no VEN of the credential that wrote the report has a resource named ${JSON.stringify(resource.resourceName)}` };
      if (ids.length > 1) return { ...base, venResourceId: null, reason: `several VENs of the credential that wrote the report have a resource named ${JSON.stringify(resource.resourceName)}` };
      return { resourceName: resource.resourceName, venResourceId: ids[0]!, reason: null, ...readResource(row.doc, row.event, r) };
    });
    out.push({ organizationId: row.organizationId, reportId: row.reportId, resources });
  }
  return out;
}

/** The report's overall state from its resources' (those without usage payloads do not count). */
export function reportState(resources: readonly ResourceOutcome[]): UsageState {
  const counted = resources.filter((r) => r.readings > 0 || r.state !== 'stored');
  if (counted.length === 0 || counted.every((r) => r.state === 'refused')) return 'refused';
  return counted.every((r) => r.state === 'stored') ? 'stored' : 'partly stored';
}

export async function recordUsageOutcomes(tx: Queryable, outcomes: readonly { organizationId: number; reportId: string; resources: ResourceOutcome[] }[]): Promise<void> {
  if (outcomes.length === 0) return;
  await tx.query(
    `UPDATE vtn_usage_reports u SET state = 'processed', outcome = o.outcome, processed_at = now(), attempts = u.attempts + 1, last_error = NULL
     FROM unnest($1::int[], $2::text[], $3::json[]) AS o(org, id, outcome) WHERE u.organization_id = o.org AND u.report_id = o.id`,
    [outcomes.map((o) => o.organizationId), outcomes.map((o) => o.reportId), outcomes.map((o) => JSON.stringify({ state: reportState(o.resources), resources: o.resources }))],
  );
}

/** A report whose processing failed (the store was unreachable…): tried again after a backoff. */
export async function postponeUsageReport(db: Queryable, organizationId: number, reportId: string, error: string): Promise<void> {
  await db.query(
    `UPDATE vtn_usage_reports SET attempts = attempts + 1, last_error = $3, next_attempt_at = now() + least(300000, 1000 * power(2, least(attempts, 20))) * interval '1 millisecond'
     WHERE organization_id = $1 AND report_id = $2 AND state = 'pending'`,
    [organizationId, reportId, error.slice(0, 500)],
  );
}
