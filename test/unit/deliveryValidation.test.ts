// Delivery-validation rules without a database: exact decimals, coverage of a period,
// direction, reference adjustment, percentages and the remuneration rule, availability.
import { describe, expect, it } from 'vitest';
import { DeliveryValidationStatus as S } from '../../src/codes.ts';
import { decimal, decimalText, divideTo, roundTo, type Decimal } from '../../src/products/decimal.ts';
import {
  availabilityFigures,
  energyOver,
  flexibilityFigures,
  referenceAdjustment,
  remunerationOf,
  unmeasurableReason,
  type Intervals,
  type MeasuredRegister,
} from '../../src/products/deliveryValidation.ts';

const Q = 900_000;
const T0 = Date.parse('2024-06-03T10:00:00Z');
const energy: MeasuredRegister = { id: 1, measurementType: 1, measurementPrefix: 3, defaultResolution: 900, isVirtual: false };

function intervals(values: number[], from = T0, step = Q): Intervals & { timestamps: number[]; ends: number[]; values: number[] } {
  return {
    timestamps: values.map((_, i) => from + i * step),
    ends: values.map((_, i) => from + (i + 1) * step),
    values,
    updatedAt: values.map((_, i) => 1000 + i),
  };
}
const kwh = (units: Decimal | undefined) => (units === undefined ? undefined : decimalText(units));

describe('exact decimals', () => {
  it('parses doubles through their shortest text, so tenths stay tenths', () => {
    expect(decimalText(decimal(0.1).plus(decimal(0.2)))).toBe('0.3');
    expect(decimalText(decimal(1e-7))).toBe('0.0000001');
    expect(decimalText(decimal('-12.5e2'))).toBe('-1250');
    expect(decimalText(roundTo(decimal(1.2000000000000002), 12))).toBe('1.2');
  });

  it('rounds half away from zero', () => {
    expect(decimalText(divideTo(decimal(5), 2, 0))).toBe('3');
    expect(decimalText(divideTo(decimal(-5), 2, 0))).toBe('-3');
    expect(decimalText(divideTo(decimal(4), 3, 0))).toBe('1');
    expect(decimalText(roundTo(decimal('1.234565'), 5))).toBe('1.23457');
    expect(decimalText(roundTo(decimal('-1.234565'), 5))).toBe('-1.23457');
    expect(decimalText(roundTo(decimal('0.0000005'), 6))).toBe('0.000001');
    expect(decimalText(roundTo(decimal('-0.0000005'), 6))).toBe('-0.000001');
  });
});

describe('energy over a period', () => {
  const end = T0 + 4 * Q;
  it('sums energy readings that tile the period', () => {
    expect(kwh(energyOver(energy, intervals([1.1, 2.2, 3.3, 0.4]), T0, end)?.units)).toBe('7');
    expect(energyOver(energy, intervals([1, 1, 1, 1]), T0, end)?.updatedAt).toBe(1003);
  });

  it('is incomplete (never zero) with a gap, a missing value, an overlap or an interval past the end', () => {
    const gap = intervals([1, 1, 1, 1]);
    expect(energyOver(energy, { ...gap, timestamps: gap.timestamps.slice(0, 3), ends: gap.ends.slice(0, 3), values: gap.values.slice(0, 3) }, T0, end)).toBeUndefined();
    expect(energyOver(energy, intervals([1, NaN, 1, 1]), T0, end)).toBeUndefined();
    const hole = intervals([1, 1, 1]);
    expect(energyOver(energy, { ...hole, timestamps: [T0, T0 + 2 * Q, T0 + 3 * Q], ends: [T0 + Q, T0 + 3 * Q, T0 + 4 * Q] }, T0, end)).toBeUndefined();
    expect(energyOver(energy, { timestamps: [T0, T0 + Q / 2], ends: [T0 + Q, T0 + 2 * Q], values: [1, 1], updatedAt: [0, 0] }, T0, T0 + 2 * Q)).toBeUndefined();
    expect(energyOver(energy, intervals([1, 1], T0, 2 * Q), T0, T0 + 3 * Q)).toBeUndefined();
    expect(energyOver(energy, intervals([]), T0, end)).toBeUndefined();
  });

  it('accepts finer readings than the register’s resolution when they tile the period', () => {
    expect(kwh(energyOver(energy, intervals([0.5, 0.5, 0.5], T0, 300_000), T0, T0 + Q)?.units)).toBe('1.5');
  });

  it('converts power (kW × hours) and unit prefixes to kWh', () => {
    const power = { ...energy, measurementType: 3 };
    expect(kwh(energyOver(power, intervals([4, 8]), T0, T0 + 2 * Q)?.units)).toBe('3');
    const wh = { ...energy, measurementPrefix: 0 };
    expect(kwh(energyOver(wh, intervals([1500, 250.5]), T0, T0 + 2 * Q)?.units)).toBe('1.7505');
    const mw = { ...energy, measurementPrefix: 6 };
    expect(kwh(energyOver(mw, intervals([0.0015]), T0, T0 + Q)?.units)).toBe('1.5');
  });

  it('names what makes a register unable to measure a period', () => {
    expect(unmeasurableReason(energy, T0, T0 + Q)).toBeUndefined();
    expect(unmeasurableReason({ ...energy, defaultResolution: 3600 }, T0, T0 + Q)).toMatch(/grid/);
    expect(unmeasurableReason({ ...energy, measurementType: 7 }, T0, T0 + Q)).toMatch(/active energy/);
  });
});

describe('figures of a flexibility transaction', () => {
  const e = (value: string) => ({ units: decimal(value), updatedAt: 5 });
  const zero = decimal(0);

  it('upward: delivered = reference − actual − adjustment; downward: actual − reference − adjustment', () => {
    const up = flexibilityFigures({ upward: true, quantity: '12', reference: e('20'), actual: e('9'), adjustment: zero });
    expect(up).toMatchObject({ status: S.Validated, referenceReadingValue: '20', validationReadingValue: '9', referenceAdjustmentQuantity: '0', deliveredQuantity: '11', deliveryPercentage: '91.67', remunerationPercentage: '91.67', readingsUpdatedAt: 5 });
    const down = flexibilityFigures({ upward: false, quantity: '4', reference: e('1.5'), actual: e('6.5'), adjustment: decimal(1) });
    expect(down).toMatchObject({ deliveredQuantity: '4', deliveryPercentage: '100', remunerationPercentage: '100', referenceAdjustmentQuantity: '1' });
    const wrongWay = flexibilityFigures({ upward: true, quantity: '4', reference: e('1'), actual: e('3'), adjustment: zero });
    expect(wrongWay).toMatchObject({ deliveredQuantity: '-2', deliveryPercentage: '-50', remunerationPercentage: '0' });
  });

  it('pays nothing below 60 %, the delivery percentage from 60 %, at most 100 %', () => {
    const pay = (percent: string) => decimalText(remunerationOf(decimal(percent)));
    expect(pay('59.99')).toBe('0');
    expect(pay('60')).toBe('60');
    expect(pay('87.5')).toBe('87.5');
    expect(pay('150')).toBe('100');
    expect(pay('-1')).toBe('0');
    expect(flexibilityFigures({ upward: true, quantity: '3', reference: e('2'), actual: e('0'), adjustment: zero }).deliveryPercentage).toBe('66.67');
  });

  it('adjusts for earlier transactions of the resource by their share of the overlap, signed by direction', () => {
    const H = 3_600_000;
    const earlier = [
      { quantity: '10', start: T0, end: T0 + H, productType: 1 }, // same direction, full overlap
      { quantity: '8', start: T0 - H, end: T0 + H, productType: 1 }, // half inside
      { quantity: '2', start: T0 + H / 2, end: T0 + H, productType: 2 }, // opposite direction
      { quantity: '5', start: T0 + H, end: T0 + 2 * H, productType: 1 }, // no overlap
    ];
    expect(decimalText(referenceAdjustment(true, T0, T0 + H, earlier))).toBe('12');
    expect(decimalText(referenceAdjustment(false, T0, T0 + H, earlier))).toBe('-12');
  });
});

describe('figures of an availability transaction', () => {
  const call = (quantity: string, deliveredQuantity: string | null, status = S.Validated) => ({ quantity, deliveredQuantity, status });

  it('is 100 % when nothing was called', () => {
    expect(availabilityFigures([])).toEqual({ status: S.Validated, expectedDeliveredQuantity: '0', deliveredQuantity: '0', deliveryPercentage: '100', remunerationPercentage: '100' });
  });

  it('expects the called energy and gets the delivered sum', () => {
    expect(availabilityFigures([call('10', '9'), call('5', '3')])).toEqual({ status: S.Validated, expectedDeliveredQuantity: '15', deliveredQuantity: '12', deliveryPercentage: '80', remunerationPercentage: '80' });
    expect(availabilityFigures([call('10', '5')])).toMatchObject({ deliveryPercentage: '50', remunerationPercentage: '0' });
  });

  it('takes the state of a call that is not validated, with the expectation known', () => {
    expect(availabilityFigures([call('10', '9'), call('5', null, S.MissingReferenceData)])).toEqual({ status: S.MissingReferenceData, expectedDeliveredQuantity: '15', deliveredQuantity: null, deliveryPercentage: null, remunerationPercentage: null });
    expect(availabilityFigures([call('1', null, S.MissingReferenceData), call('1', null, S.MissingActualData)]).status).toBe(S.MissingActualData);
    expect(availabilityFigures([call('1', null, S.MissingActualData), call('1', null, S.NotMeasurable)]).status).toBe(S.NotMeasurable);
    expect(availabilityFigures([call('1', null, S.Pending)]).status).toBe(S.Pending);
  });
});
