// Delivery validation rules (docs/products.md, "Delivery validation"): how meter data becomes
// the figures of a transaction. Pure functions over readings already loaded; the job that
// claims transactions, loads readings and stores the figures is validationJob.ts.
//
// Arithmetic is exact (decimal.ts): reading values (binary doubles in the time-series store)
// enter through their shortest round-trip decimal text (0.1 is one tenth) rounded to 12 decimals
// of kWh, sums are exact, stored quantities are rounded to 6 decimals and percentages to 2, half
// away from zero; transaction quantities are used as stored, never rounded.
import { DeliveryValidationStatus, MeasurementType } from '../codes.ts';
import { decimal, decimalText, divideTo, roundTo, type Decimal } from './decimal.ts';
import { isUpward } from './rules.ts';

/** Fraction digits of the internal sums (kWh). */
export const WORK_DIGITS = 12;
/** Fraction digits of stored quantities (kWh). */
export const STORED_DIGITS = 6;
/** Below this delivery percentage nothing is paid (remuneration 0). */
export const REMUNERATION_THRESHOLD_PERCENT = 60;

/** What the validation needs to know of a register. */
export interface MeasuredRegister {
  id: number;
  measurementType: number;
  measurementPrefix: number;
  defaultResolution: number;
  isVirtual: boolean;
}

/** Intervals of one register over a period, time-ordered; NaN values are missing. */
export interface Intervals {
  timestamps: ArrayLike<number>;
  ends: ArrayLike<number>;
  values: ArrayLike<number>;
  updatedAt: ArrayLike<number>;
}

/** Why a register cannot measure the period at all (→ NotMeasurable), or undefined. */
export function unmeasurableReason(register: MeasuredRegister, start: number, end: number): string | undefined {
  if (register.measurementType !== MeasurementType.ActiveEnergy && register.measurementType !== MeasurementType.ActivePower) {
    return `register ${register.id} measures neither active energy nor active power`;
  }
  const step = register.defaultResolution * 1000;
  // Day (and longer) registers follow local days; their alignment is left to the coverage walk.
  if (register.defaultResolution < 86400 && (start % step !== 0 || end % step !== 0)) {
    return `the period is not on register ${register.id}'s ${register.defaultResolution} s grid`;
  }
  return undefined;
}

export interface Energy {
  /** kWh, with at most WORK_DIGITS fraction digits. */
  units: Decimal;
  /** Latest updatedAt of the intervals used (NaN when unknown). */
  updatedAt: number;
}

/**
 * The energy (kWh) a register measured over [start, end), or undefined when its intervals do
 * not tile the period exactly: a gap, an overlap, a missing value or an interval sticking out
 * past `end` all mean "incomplete" — never a silent zero. Energy registers are summed; power
 * registers contribute value × interval length. The unit prefix converts to kilo.
 */
export function energyOver(register: MeasuredRegister, data: Intervals, start: number, end: number): Energy | undefined {
  const power = register.measurementType === MeasurementType.ActivePower;
  let cursor = start;
  let sum = decimal(0);
  let updatedAt = NaN;
  for (let i = 0; i < data.timestamps.length; i += 1) {
    const t = data.timestamps[i]!;
    const e = data.ends[i]!;
    const v = data.values[i]!;
    if (t < start || t >= end) continue;
    if (t !== cursor || e > end || Number.isNaN(v)) return undefined;
    const value = roundTo(decimal(v), WORK_DIGITS);
    sum = sum.plus(power ? value.times(Math.round((e - t) / 1000)) : value);
    cursor = e;
    const u = data.updatedAt[i]!;
    if (!(u <= updatedAt)) updatedAt = u;
  }
  if (cursor !== end) return undefined;
  // value × 10^prefix base units (Wh or W); kilo = 10^3. Power × seconds / 3600 = energy.
  const exponent = register.measurementPrefix - 3;
  let kwh = roundTo(sum.times(decimal(`1e${exponent}`)), WORK_DIGITS);
  if (power) kwh = divideTo(kwh, 3600, WORK_DIGITS);
  return { units: kwh, updatedAt };
}

export interface OtherTransaction {
  quantity: string;
  start: number;
  end: number;
  productType: number;
}

/**
 * Reference adjustment: the energy that other flexibility transactions of the same resource,
 * accepted earlier, were to deliver inside this one's period (their quantity pro rata to the
 * overlap), counted positive when in the same direction and negative when opposite. It already
 * moved the actual consumption, so it is not this transaction's delivery.
 */
export function referenceAdjustment(upward: boolean, start: number, end: number, earlier: readonly OtherTransaction[]): Decimal {
  let total = decimal(0);
  for (const other of earlier) {
    const overlap = Math.min(end, other.end) - Math.max(start, other.start);
    if (overlap <= 0) continue;
    const share = divideTo(decimal(other.quantity).times(overlap), other.end - other.start, WORK_DIGITS);
    total = isUpward(other.productType) === upward ? total.plus(share) : total.minus(share);
  }
  return total;
}

/** Delivery percentage of `delivered` against `expected`, rounded to 2 decimals. */
export function percentageOf(delivered: Decimal, expected: Decimal): Decimal {
  return divideTo(delivered.times(100), expected, 2);
}

/** The remuneration rule: 0 below the threshold, otherwise the delivery percentage capped at 100. */
export function remunerationOf(deliveryPercent: Decimal): Decimal {
  if (deliveryPercent.lt(REMUNERATION_THRESHOLD_PERCENT)) return decimal(0);
  return deliveryPercent.gt(100) ? decimal(100) : deliveryPercent;
}

/** Stored figures: decimal text for numeric columns, null when unknown. */
export interface FlexibilityFigures {
  status: DeliveryValidationStatus;
  reason?: string;
  referenceReadingValue: string | null;
  validationReadingValue: string | null;
  referenceAdjustmentQuantity: string | null;
  deliveredQuantity: string | null;
  deliveryPercentage: string | null;
  remunerationPercentage: string | null;
  /** Latest updatedAt of the readings used (ms), for the correction check. */
  readingsUpdatedAt: number | null;
  /** Where the figures came from (validationData.ts); absent where nothing was read. */
  inputs?: ValidationInputs;
}

/** The inputs of a validation and their source (docs/flexibility-loop.md): the actual register's
 * readings came from meter data, from the VEN's usage reports, or from both; the reference is a
 * stored register, a virtual one (a baseline), or zero. */
export interface ValidationInputs {
  actual: { registerId: number; source: 'meter' | 'ven' | 'meter and ven' | null };
  reference: { registerId: number | null; source: 'register' | 'virtual register' | 'zero' };
}

/** kWh as the stored decimal text (STORED_DIGITS). */
export const storedQuantity = (kwh: Decimal) => decimalText(roundTo(kwh, STORED_DIGITS));
const percent = (value: Decimal) => decimalText(value);

export function unvalidated(status: DeliveryValidationStatus, reason: string, partial: Partial<FlexibilityFigures> = {}): FlexibilityFigures {
  return {
    status,
    reason,
    referenceReadingValue: null,
    validationReadingValue: null,
    referenceAdjustmentQuantity: null,
    deliveredQuantity: null,
    deliveryPercentage: null,
    remunerationPercentage: null,
    readingsUpdatedAt: null,
    ...partial,
  };
}

/** The figures of a measured flexibility transaction (quantity: its kWh as decimal text). */
export function flexibilityFigures(input: { upward: boolean; quantity: string; actual: Energy; reference: Energy; adjustment: Decimal }): FlexibilityFigures {
  // From the stored (rounded) figures, so that anyone can redo the sums from what is shown.
  const [reference, actual, adjustment] = [input.reference.units, input.actual.units, input.adjustment].map((u) => roundTo(u, STORED_DIGITS)) as [Decimal, Decimal, Decimal];
  const delivered = (input.upward ? reference.minus(actual) : actual.minus(reference)).minus(adjustment);
  const hundredths = percentageOf(delivered, decimal(input.quantity));
  const latest = [input.actual.updatedAt, input.reference.updatedAt].filter((u) => !Number.isNaN(u));
  const text = decimalText;
  return {
    status: DeliveryValidationStatus.Validated,
    referenceReadingValue: text(reference),
    validationReadingValue: text(actual),
    referenceAdjustmentQuantity: text(adjustment),
    deliveredQuantity: text(delivered),
    deliveryPercentage: percent(hundredths),
    remunerationPercentage: percent(remunerationOf(hundredths)),
    readingsUpdatedAt: latest.length > 0 ? Math.max(...latest) : null,
  };
}

/** A flexibility transaction that activated an availability transaction, as stored. */
export interface Call {
  quantity: string;
  deliveredQuantity: string | null;
  status: DeliveryValidationStatus;
}

export interface AvailabilityFigures {
  status: DeliveryValidationStatus;
  expectedDeliveredQuantity: string | null;
  deliveredQuantity: string | null;
  deliveryPercentage: string | null;
  remunerationPercentage: string | null;
}

/**
 * Availability: expected = the energy called (sum of the quantities of the flexibility
 * transactions activating it), delivered = the sum of their delivered quantities; the
 * percentages follow the flexibility rule. Nothing called: 100 %. A call not validated yet
 * decides the status (Pending waits; NotMeasurable before MissingActualData before
 * MissingReferenceData), with the expectation filled in.
 */
export function availabilityFigures(calls: readonly Call[]): AvailabilityFigures {
  const expected = calls.reduce((sum, c) => sum.plus(decimal(c.quantity)), decimal(0));
  const expectedText = decimalText(expected);
  for (const status of [DeliveryValidationStatus.Pending, DeliveryValidationStatus.NotMeasurable, DeliveryValidationStatus.MissingActualData, DeliveryValidationStatus.MissingReferenceData]) {
    if (calls.some((c) => c.status === status)) return { status, expectedDeliveredQuantity: expectedText, deliveredQuantity: null, deliveryPercentage: null, remunerationPercentage: null };
  }
  if (calls.length === 0) return { status: DeliveryValidationStatus.Validated, expectedDeliveredQuantity: '0', deliveredQuantity: '0', deliveryPercentage: '100', remunerationPercentage: '100' };
  const delivered = calls.reduce((sum, c) => sum.plus(decimal(c.deliveredQuantity ?? '0')), decimal(0));
  const hundredths = percentageOf(delivered, expected);
  return {
    status: DeliveryValidationStatus.Validated,
    expectedDeliveredQuantity: expectedText,
    deliveredQuantity: decimalText(delivered),
    deliveryPercentage: percent(hundredths),
    remunerationPercentage: percent(remunerationOf(hundredths)),
  };
}
