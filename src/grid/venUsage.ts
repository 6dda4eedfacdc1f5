// VEN usage reports as meter data (docs/flexibility-loop.md): the usage a VEN reports for a VEN
// resource bound to a grid resource becomes readings of that resource's actual register, through
// the time-series store, with the rules of POST /api/readings (the organization must have access
// to the meter; the register is stored, not virtual; whole seconds up to 366 days; finite values;
// the last of equal timestamps wins).
//
// Units: a reading's value v means v × 10^measurementPrefix of the base unit (Wh, W). Energy
// (USAGE, kWh) into an energy register: v = kWh × 10^(3 − prefix); into a power register: the mean
// power kWh / hours. Power (DEMAND, kW) into a power register: v = kW × 10^(3 − prefix); into an
// energy register: kW × hours. Other registers (voltage, …) measure neither: refused.
//
// Meter data first: an interval that overlaps a reading the VEN did not write (a meter's, a
// correction's) is refused; the VEN's own earlier readings of the same interval and length are
// replaced. Which readings are the VEN's is kept in grid_ven_readings: each write's span and the
// updatedAt it gave its readings (a later write by anyone else moves a reading's updatedAt). The
// span is recorded before the store write, in its own commit, so a write that happened before a
// crash is still recognised as the VEN's when the report is processed again.
import { MeasurementType } from '../codes.ts';
import { registersForReadBy } from '../meter/meterStore.ts';
import type { Pool, Queryable } from '../store/database.ts';
import type { ReadingRows, TimeSeriesStore } from '../store/timeseries/types.ts';
import { resourcesBoundTo } from './bindings.ts';

/** The VTN's reading of one report resource (vtn/usageReports.ts, passed through the wiring file). */
export interface ResourceUsage {
  resourceName: string;
  venResourceId: string | null;
  samples: { start: number; seconds: number; kind: 'energy' | 'power'; value: number }[];
  refused: { path: string; reason: string }[];
  reason: string | null;
}

export interface UsageReport {
  organizationId: number;
  reportId: string;
  resources: ResourceUsage[];
}

export interface ResourceOutcome {
  resourceName: string;
  state: 'stored' | 'partly stored' | 'refused';
  readings: number;
  reason: string | null;
  refused: { path: string; reason: string }[];
}

const MAX_LISTED = 20;

interface Existing {
  start: number;
  end: number;
  updatedAt: number;
}

/** The register's readings overlapping [start, end) and which of them the VEN wrote. */
async function existingReadings(pool: Pool, store: TimeSeriesStore, registerId: number, start: number, end: number): Promise<{ ven: Existing[]; other: Existing[] }> {
  // Readings that start before `start` may still reach into it: look back one longest reading.
  const [series] = await store.readSeries({ registerIds: [registerId], start: start - 366 * 86_400_000, end });
  const spans = (await venReadingSpans(pool, [registerId], start - 366 * 86_400_000, end)).get(registerId) ?? [];
  const ven: Existing[] = [];
  const other: Existing[] = [];
  for (let i = 0; i < (series?.timestamps.length ?? 0); i += 1) {
    const t = series!.timestamps[i]!;
    const e = t + series!.resolutions[i]! * 1000;
    if (e <= start || t >= end) continue;
    const u = series!.updatedAt[i]!;
    const mine = spans.some((s) => s.updatedMs === u && s.start <= t && t < s.end);
    (mine ? ven : other).push({ start: t, end: e, updatedAt: u });
  }
  return { ven, other };
}

function convert(sample: ResourceUsage['samples'][number], measurementType: number, prefix: number): number {
  const hours = sample.seconds / 3600;
  const kilo = measurementType === MeasurementType.ActiveEnergy ? (sample.kind === 'energy' ? sample.value : sample.value * hours) : sample.kind === 'power' ? sample.value : sample.value / hours;
  return kilo * 10 ** (3 - prefix);
}

const refusedAll = (resource: ResourceUsage, reason: string): ResourceOutcome => ({ resourceName: resource.resourceName, state: 'refused', readings: 0, reason, refused: resource.refused.slice(0, MAX_LISTED) });

async function storeResource(pool: Pool, store: TimeSeriesStore, report: UsageReport, resource: ResourceUsage, bound: Map<string, { resourceId: number; actualRegisterId: number | null }>): Promise<ResourceOutcome> {
  if (resource.reason !== null || resource.venResourceId === null) return refusedAll(resource, resource.reason ?? 'unknown resource');
  if (resource.samples.length === 0 && resource.refused.length === 0) return { resourceName: resource.resourceName, state: 'stored', readings: 0, reason: 'no USAGE or DEMAND payloads', refused: [] };
  const target = bound.get(resource.venResourceId);
  if (!target) return refusedAll(resource, `VEN resource ${resource.venResourceId} is not bound to a grid resource`);
  if (target.actualRegisterId === null) return refusedAll(resource, `grid resource ${target.resourceId} has no actual register`);
  const [register] = await registersForReadBy(pool, [target.actualRegisterId], report.organizationId);
  if (!register) return refusedAll(resource, `grid resource ${target.resourceId} has no actual register`);
  if (!register.accessible) return refusedAll(resource, `organization ${report.organizationId} has no access to the meter of register ${register.id}`);
  if (register.isVirtual) return refusedAll(resource, `register ${register.id} is virtual: its readings are computed`);
  if (register.measurementType !== MeasurementType.ActiveEnergy && register.measurementType !== MeasurementType.ActivePower) {
    return refusedAll(resource, `register ${register.id} measures neither active energy nor active power`);
  }
  const refused = [...resource.refused];
  const byStart = new Map<number, { seconds: number; value: number }>();
  const start = Math.min(...resource.samples.map((s) => s.start));
  const end = Math.max(...resource.samples.map((s) => s.start + s.seconds * 1000));
  const existing = resource.samples.length > 0 ? await existingReadings(pool, store, register.id, start, end) : { ven: [], other: [] };
  resource.samples.forEach((sample, i) => {
    const s = sample.start;
    const e = s + sample.seconds * 1000;
    const value = convert(sample, register.measurementType, register.measurementPrefix);
    const path = `sample ${i} (${new Date(s).toISOString()}, ${sample.seconds} s)`;
    if (!Number.isFinite(value)) return void refused.push({ path, reason: 'the value is out of range' });
    if (existing.other.some((x) => x.start < e && x.end > s)) return void refused.push({ path, reason: `register ${register.id} has other readings (meter data) in this interval; they take precedence` });
    if (existing.ven.some((x) => x.start < e && x.end > s && (x.start !== s || x.end !== e))) return void refused.push({ path, reason: 'overlaps an interval of another length reported earlier' });
    byStart.delete(s);
    byStart.set(s, { seconds: sample.seconds, value });
  });
  // Within one report: an interval overlapping an earlier one of the same report is refused.
  const kept: [number, { seconds: number; value: number }][] = [];
  for (const [s, v] of [...byStart].sort((a, b) => a[0] - b[0])) {
    const last = kept[kept.length - 1];
    if (last && last[0] + last[1].seconds * 1000 > s) refused.push({ path: `interval at ${new Date(s).toISOString()}`, reason: 'overlaps another interval of the report' });
    else kept.push([s, v]);
  }
  const outcome = (readings: number): ResourceOutcome => {
    const state = refused.length === 0 ? 'stored' : readings === 0 ? 'refused' : 'partly stored';
    const reason = refused.length === 0 ? null : `${refused.length} interval${refused.length === 1 ? '' : 's'} refused`;
    return { resourceName: resource.resourceName, state, readings, reason, refused: refused.slice(0, MAX_LISTED) };
  };
  if (kept.length === 0) return outcome(0);
  const rows: ReadingRows = {
    registerIds: [register.id],
    offsets: Int32Array.from([0, kept.length]),
    timestamps: Float64Array.from(kept, ([s]) => s),
    values: Float64Array.from(kept, ([, v]) => v.value),
    resolutions: Int32Array.from(kept, ([, v]) => v.seconds),
  };
  // Later than every reading it may replace, so a re-validation sees the change.
  const updatedMs = Math.max(Date.now(), ...existing.ven.map((x) => x.updatedAt + 1));
  const spanEnd = kept[kept.length - 1]![0] + kept[kept.length - 1]![1].seconds * 1000;
  await pool.query(
    `INSERT INTO grid_ven_readings (register_id, updated_ms, span_start, span_end, readings, resource_id, organization_id, report_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [register.id, updatedMs, new Date(kept[0]![0]), new Date(spanEnd), kept.length, target.resourceId, report.organizationId, report.reportId],
  );
  const written = await store.write({ rows, updatedAtMs: updatedMs });
  if (!written.ok) {
    refused.push(...written.errors.map((e) => ({ path: e.path, reason: e.message })));
    return outcome(0);
  }
  return outcome(kept.length);
}

/** Stores the usage of claimed reports; returns each resource's outcome. Throws when the store is
 * unreachable (the report is tried again later). */
export async function storeVenUsage(deps: { pool: Pool; store: TimeSeriesStore }, db: Queryable, reports: readonly UsageReport[]): Promise<{ organizationId: number; reportId: string; resources: ResourceOutcome[] }[]> {
  const out = [];
  for (const report of reports) {
    const ids = report.resources.map((r) => r.venResourceId).filter((id): id is string => id !== null);
    const bound = new Map((await resourcesBoundTo(db, report.organizationId, ids)).map((b) => [b.venResourceId, b]));
    const resources: ResourceOutcome[] = [];
    for (const resource of report.resources) resources.push(await storeResource(deps.pool, deps.store, report, resource, bound));
    out.push({ organizationId: report.organizationId, reportId: report.reportId, resources });
  }
  return out;
}

/** The spans the VEN wrote into these registers over [start, end) (ms), with the updatedAt of
 * their readings: a reading is the VEN's when one of its register's spans holds it with its
 * updatedAt (delivery validation names its inputs' source by this). */
export async function venReadingSpans(db: Queryable, registerIds: readonly number[], start: number, end: number): Promise<Map<number, { updatedMs: number; start: number; end: number }[]>> {
  const { rows } = await db.query<{ registerId: number; updatedMs: string; start: Date; end: Date }>(
    `SELECT register_id AS "registerId", updated_ms AS "updatedMs", span_start AS start, span_end AS "end" FROM grid_ven_readings
     WHERE register_id = ANY($1::int[]) AND span_start < $3 AND span_end > $2`,
    [registerIds, new Date(start), new Date(end)],
  );
  const out = new Map<number, { updatedMs: number; start: number; end: number }[]>();
  for (const r of rows) out.set(r.registerId, [...(out.get(r.registerId) ?? []), { updatedMs: Number(r.updatedMs), start: r.start.getTime(), end: r.end.getTime() }]);
  return out;
}
