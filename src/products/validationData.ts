// Meter data for delivery validation: loads the registers of a batch of flexibility
// transactions and their readings over each period, then applies the rules of
// deliveryValidation.ts. Stored registers are read through the time-series store, one query per
// distinct period for all registers of that period (a batch of 15-minute products shares few
// periods); a virtual reference (e.g. a baseline) is computed by the VirtualEngine.
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
  type Intervals,
  type OtherTransaction,
} from './deliveryValidation.ts';
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
  /** Earlier-accepted transactions of the same resource overlapping the period. */
  earlier: OtherTransaction[];
}

const ms = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

export const FLEX_ROW_SELECT = `SELECT t.id, ${ms('t.start')} AS start, ${ms('t."end"')} AS "end", t.quantity::text AS quantity, t.product_type AS "productType",
  r.actual_register_id AS "actualRegisterId", r.reference_register_id AS "referenceRegisterId", r.use_zero_reference AS "useZeroReference",
  coalesce((SELECT json_agg(json_build_object('quantity', o.quantity::text, 'start', ${ms('o.start')}, 'end', ${ms('o."end"')}, 'productType', o.product_type))
    FROM flexibility_transactions o WHERE o.resource_id = t.resource_id AND o.id < t.id AND o.start < t."end" AND o."end" > t.start), '[]') AS earlier
FROM flexibility_transactions t JOIN grid_resources r ON r.id = t.resource_id`;

function intervalsOf(series: Series): Intervals {
  const ends = new Float64Array(series.timestamps.length);
  for (let i = 0; i < ends.length; i += 1) ends[i] = series.timestamps[i]! + series.resolutions[i]! * 1000;
  return { timestamps: series.timestamps, ends, values: series.values, updatedAt: series.updatedAt };
}

/** Readings of the stored registers the rows need, per period: key `${registerId}:${start}:${end}`. */
async function storedReadings(store: TimeSeriesStore, needs: Map<string, Set<number>>): Promise<Map<string, Intervals>> {
  const out = new Map<string, Intervals>();
  for (const [period, ids] of needs) {
    const [start, end] = period.split(':').map(Number) as [number, number];
    for (const series of await store.readSeries({ registerIds: [...ids], start, end })) out.set(`${series.registerId}:${period}`, intervalsOf(series));
  }
  return out;
}

/** Computes the figures of each row; rows whose data cannot be computed at all are left out. */
export async function measureFlexibility(deps: ValidationDeps, rows: readonly FlexRow[]): Promise<Map<number, FlexibilityFigures>> {
  const ids = new Set<number>();
  for (const row of rows) {
    if (row.actualRegisterId !== null) ids.add(row.actualRegisterId);
    if (row.referenceRegisterId !== null && !row.useZeroReference) ids.add(row.referenceRegisterId);
  }
  const registers = new Map((await registersForRead(deps.pool, [...ids])).map((r) => [r.id, r]));
  const results = new Map<number, FlexibilityFigures>();
  const measurable: { row: FlexRow; actual: RegisterForRead; reference: RegisterForRead | null }[] = [];
  const needs = new Map<string, Set<number>>();
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
    const period = `${row.start}:${row.end}`;
    if (!needs.has(period)) needs.set(period, new Set());
    needs.get(period)!.add(actual.id);
    if (reference && !reference.isVirtual) needs.get(period)!.add(reference.id);
    measurable.push({ row, actual, reference });
  }
  const readings = await storedReadings(deps.store, needs);
  for (const { row, actual, reference } of measurable) {
    const actualEnergy = energyOver(actual, readings.get(`${actual.id}:${row.start}:${row.end}`)!, row.start, row.end);
    if (!actualEnergy) {
      results.set(row.id, unvalidated(DeliveryValidationStatus.MissingActualData, `register ${actual.id} does not cover the period`));
      continue;
    }
    // The actual energy is kept with a missing reference, for diagnosis.
    const partial = { validationReadingValue: storedQuantity(actualEnergy.units) };
    let referenceEnergy: Energy | undefined;
    if (reference === null) referenceEnergy = { units: 0n, updatedAt: NaN };
    else if (!reference.isVirtual) referenceEnergy = energyOver(reference, readings.get(`${reference.id}:${row.start}:${row.end}`)!, row.start, row.end);
    else {
      try {
        referenceEnergy = energyOver(reference, await deps.virtual.series(reference, row.start, row.end), row.start, row.end);
      } catch (err) {
        if (!(err instanceof HttpError)) throw err;
        results.set(row.id, unvalidated(DeliveryValidationStatus.NotMeasurable, `the virtual reference register ${reference.id} cannot be computed: ${err.message}`, partial));
        continue;
      }
    }
    if (!referenceEnergy) {
      results.set(row.id, unvalidated(DeliveryValidationStatus.MissingReferenceData, `reference register ${reference!.id} does not cover the period`, partial));
      continue;
    }
    const upward = isUpward(row.productType);
    results.set(row.id, flexibilityFigures({ upward, quantity: row.quantity, actual: actualEnergy, reference: referenceEnergy, adjustment: referenceAdjustment(upward, row.start, row.end, row.earlier) }));
  }
  return results;
}
