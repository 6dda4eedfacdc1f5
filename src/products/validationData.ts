// Meter data for delivery validation: loads the registers of a batch of flexibility
// transactions and their readings, then applies the rules of deliveryValidation.ts. The batch
// is cut into clusters of transactions close in time; per cluster, stored registers are read by
// one time-series store query and each virtual reference (e.g. a baseline) is computed once by
// the VirtualEngine over the cluster's span; each transaction then takes its period's slice.
import type { Logger } from 'pino';
import { DeliveryValidationStatus } from '../codes.ts';
import { HttpError } from '../http/errors.ts';
import { registersForRead, type RegisterForRead } from '../meter/meterStore.ts';
import type { VirtualEngine } from '../meter/virtualEngine.ts';
import type { Pool } from '../store/database.ts';
import type { Series, TimeSeriesStore } from '../store/timeseries/types.ts';
import {
  energyOver,
  flexibilityFigures,
  referenceAdjustment,
  storedQuantity,
  unmeasurableReason,
  unvalidated,
  type Energy,
  type FlexibilityFigures,
  type ValidationInputs,
  type Intervals,
  type OtherTransaction,
} from './deliveryValidation.ts';
import { decimal } from './decimal.ts';
import { venReadingSpans } from '../grid/venUsage.ts';
import type { AgreementState } from './agreement.ts';
import { isUpward } from './rules.ts';

export interface ValidationDeps {
  pool: Pool;
  store: TimeSeriesStore;
  virtual: VirtualEngine;
  log: Logger;
}

/** A flexibility transaction with what its validation needs (FLEX_ROW_SELECT). */
export interface FlexRow {
  id: number;
  start: number;
  end: number;
  quantity: string;
  productType: number;
  actualRegisterId: number | null;
  referenceRegisterId: number | null;
  useZeroReference: boolean;
  agreementState: AgreementState;
  /** Earlier-accepted transactions of the same resource overlapping the period. */
  earlier: OtherTransaction[];
}

const ms = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

export const FLEX_ROW_SELECT = `SELECT t.id, ${ms('t.start')} AS start, ${ms('t."end"')} AS "end", t.quantity::text AS quantity, t.product_type AS "productType",
  r.actual_register_id AS "actualRegisterId", r.reference_register_id AS "referenceRegisterId", r.use_zero_reference AS "useZeroReference",
  t.agreement_state AS "agreementState", coalesce((SELECT json_agg(json_build_object('quantity', o.quantity::text, 'start', ${ms('o.start')}, 'end', ${ms('o."end"')}, 'productType', o.product_type))
    FROM (SELECT * FROM flexibility_transactions o WHERE o.resource_id = t.resource_id AND o."end" > t.start OFFSET 0) o
    WHERE o.id < t.id AND o.start < t."end"), '[]') AS earlier
FROM flexibility_transactions t JOIN grid_resources r ON r.id = t.resource_id`;
// The overlap search goes through (resource_id, end): the transactions of the resource ending
// after this one starts are a handful for a recent period, however long the history. OFFSET 0
// keeps the planner from also matching start < end on a start index (it once AND-ed a scan of
// every transaction that started before).

/** Transactions close in time share one read per register: a cluster spans at most this. */
const CLUSTER_SPAN_MS = 2 * 86_400_000;

interface Intervals64 extends Intervals {
  timestamps: Float64Array;
  ends: Float64Array;
  values: Float64Array;
  updatedAt: Float64Array;
}

function intervalsOf(series: Series): Intervals64 {
  const ends = new Float64Array(series.timestamps.length);
  for (let i = 0; i < ends.length; i += 1) ends[i] = series.timestamps[i]! + series.resolutions[i]! * 1000;
  return { timestamps: series.timestamps, ends, values: series.values, updatedAt: series.updatedAt };
}

/** First index whose timestamp is ≥ t. */
function lowerBound(timestamps: Float64Array, t: number): number {
  let lo = 0;
  let hi = timestamps.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (timestamps[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The intervals starting in [start, end) (views, no copy). */
function slice(data: Intervals64, start: number, end: number): Intervals64 {
  const from = lowerBound(data.timestamps, start);
  const to = lowerBound(data.timestamps, end);
  return { timestamps: data.timestamps.subarray(from, to), ends: data.ends.subarray(from, to), values: data.values.subarray(from, to), updatedAt: data.updatedAt.subarray(from, to) };
}

interface Plan {
  row: FlexRow;
  actual: RegisterForRead;
  reference: RegisterForRead | null;
}

/** Readings (stored) or computed values (virtual) of each register over a cluster's span as of
 * `asOf`; an
 * HttpError where a virtual register cannot be computed. */
async function loadCluster(deps: ValidationDeps, plans: readonly Plan[], asOf: number): Promise<Map<number, Intervals64 | HttpError>> {
  const start = Math.min(...plans.map((p) => p.row.start));
  const end = Math.max(...plans.map((p) => p.row.end));
  const stored = new Set<number>();
  const virtual = new Map<number, RegisterForRead>();
  for (const { actual, reference } of plans) {
    stored.add(actual.id);
    if (reference?.isVirtual) virtual.set(reference.id, reference);
    else if (reference) stored.add(reference.id);
  }
  const out = new Map<number, Intervals64 | HttpError>();
  for (const series of await deps.store.readSeries({ registerIds: [...stored], start, end, asOf })) out.set(series.registerId, intervalsOf(series));
  for (const register of virtual.values()) {
    try {
      out.set(register.id, await deps.virtual.series(register, start, end, asOf));
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      out.set(register.id, err);
    }
  }
  return out;
}

/** What a batch's validation found: each row's figures (rows whose data could not be read at
 * all are left out) and the instant of the readings they were computed from. */
export interface Measured {
  figures: Map<number, FlexibilityFigures>;
  /** UTC ms: the readings as they were at this instant (taken before the first read). */
  readingsAsOf: number;
}

/** Computes the figures of each row from the readings as of now: every read is made as of
 * the one instant recorded with the validation, so reading it again as of that instant gives
 * the same figures. */
export async function measureFlexibility(deps: ValidationDeps, rows: readonly FlexRow[]): Promise<Measured> {
  const readingsAsOf = Date.now();
  const ids = new Set<number>();
  for (const row of rows) {
    if (row.actualRegisterId !== null) ids.add(row.actualRegisterId);
    if (row.referenceRegisterId !== null && !row.useZeroReference) ids.add(row.referenceRegisterId);
  }
  const registers = new Map((await registersForRead(deps.pool, [...ids])).map((r) => [r.id, r]));
  const results = new Map<number, FlexibilityFigures>();
  const plans: Plan[] = [];
  for (const row of rows) {
    const actual = row.actualRegisterId === null ? undefined : registers.get(row.actualRegisterId);
    const reference = row.useZeroReference ? null : row.referenceRegisterId === null ? undefined : registers.get(row.referenceRegisterId);
    if (!actual) {
      results.set(row.id, unvalidated(DeliveryValidationStatus.NotMeasurable, 'the resource has no actual register'));
      continue;
    }
    if (reference === undefined) {
      results.set(row.id, unvalidated(DeliveryValidationStatus.NotMeasurable, 'the resource has no reference register and does not use a zero reference'));
      continue;
    }
    const reason = unmeasurableReason(actual, row.start, row.end) ?? (reference ? unmeasurableReason(reference, row.start, row.end) : undefined);
    if (reason) {
      results.set(row.id, unvalidated(DeliveryValidationStatus.NotMeasurable, reason));
      continue;
    }
    plans.push({ row, actual, reference });
  }
  // One read per register and cluster of transactions close in time (a batch of due
  // transactions ends within a short time), instead of one per transaction.
  plans.sort((a, b) => a.row.start - b.row.start);
  for (let from = 0; from < plans.length; ) {
    let to = from + 1;
    let end = plans[from]!.row.end;
    while (to < plans.length && Math.max(end, plans[to]!.row.end) - plans[from]!.row.start <= CLUSTER_SPAN_MS) end = Math.max(end, plans[to++]!.row.end);
    const cluster = plans.slice(from, to);
    const data = await loadCluster(deps, cluster, readingsAsOf);
    const spans = await venReadingSpans(deps.pool, [...new Set(cluster.map((p) => p.actual.id))], plans[from]!.row.start, end);
    for (const plan of cluster) results.set(plan.row.id, withInputs(measure(plan, data), plan, data, spans));
    from = to;
  }
  return { figures: results, readingsAsOf };
}

type Spans = Map<number, { updatedMs: number; start: number; end: number }[]>;

/** Names where the figures came from: which of the actual readings the VEN reported (its
 * usage reports, grid/venUsage.ts: a reading whose updatedAt is still that of a VEN write
 * holding it), and what the reference is. */
function withInputs(figures: FlexibilityFigures, { row, actual, reference }: Plan, data: Map<number, Intervals64 | HttpError>, spans: Spans): FlexibilityFigures {
  const referenceInput: ValidationInputs['reference'] = reference === null ? { registerId: null, source: 'zero' } : { registerId: reference.id, source: reference.isVirtual ? 'virtual register' : 'register' };
  let source: ValidationInputs['actual']['source'] = null;
  if (figures.validationReadingValue !== null) {
    const readings = slice((data.get(actual.id) as Intervals64 | undefined) ?? EMPTY, row.start, row.end);
    const mine = spans.get(actual.id) ?? [];
    let ven = 0;
    for (let i = 0; i < readings.timestamps.length; i += 1) {
      const t = readings.timestamps[i]!;
      if (mine.some((s) => s.updatedMs === readings.updatedAt[i] && s.start <= t && t < s.end)) ven += 1;
    }
    source = ven === 0 ? 'meter' : ven === readings.timestamps.length ? 'ven' : 'meter and ven';
  }
  return { ...figures, inputs: { actual: { registerId: actual.id, source }, reference: referenceInput } };
}

const EMPTY: Intervals64 = { timestamps: new Float64Array(0), ends: new Float64Array(0), values: new Float64Array(0), updatedAt: new Float64Array(0) };

function measure({ row, actual, reference }: Plan, data: Map<number, Intervals64 | HttpError>): FlexibilityFigures {
  const actualData = data.get(actual.id) as Intervals64 | undefined;
  const actualEnergy = energyOver(actual, slice(actualData ?? EMPTY, row.start, row.end), row.start, row.end);
  if (!actualEnergy) return unvalidated(DeliveryValidationStatus.MissingActualData, `register ${actual.id} does not cover the period`);
  // The actual energy is kept with a missing reference, for diagnosis.
  const partial = { validationReadingValue: storedQuantity(actualEnergy.units) };
  let referenceEnergy: Energy | undefined = { units: decimal(0), updatedAt: NaN };
  if (reference) {
    const referenceData = data.get(reference.id);
    if (referenceData instanceof HttpError) {
      return unvalidated(DeliveryValidationStatus.NotMeasurable, `the virtual reference register ${reference.id} cannot be computed: ${referenceData.message}`, partial);
    }
    referenceEnergy = energyOver(reference, slice(referenceData ?? EMPTY, row.start, row.end), row.start, row.end);
    if (!referenceEnergy) return unvalidated(DeliveryValidationStatus.MissingReferenceData, `reference register ${reference.id} does not cover the period`, partial);
  }
  const upward = isUpward(row.productType);
  return flexibilityFigures({ upward, quantity: row.quantity, actual: actualEnergy, reference: referenceEnergy, adjustment: referenceAdjustment(upward, row.start, row.end, row.earlier) });
}
