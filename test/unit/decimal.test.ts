// Properties of the one exact decimal representation of quantities and amounts
// (src/products/decimal.ts), checked with fast-check over generated decimals.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decimal, decimalText, divideTo, isMultipleOf, roundTo } from '../../src/products/decimal.ts';

/** A decimal as text with up to 12 fraction digits, and its value as a scaled BigInt. */
const scaledDecimal = fc.record({ units: fc.bigInt({ min: -(10n ** 18n), max: 10n ** 18n }), digits: fc.integer({ min: 0, max: 12 }) }).map(({ units, digits }) => {
  const negative = units < 0n;
  const abs = (negative ? -units : units).toString().padStart(digits + 1, '0');
  const text = digits === 0 ? abs : `${abs.slice(0, -digits)}.${abs.slice(-digits)}`;
  return { text: `${negative ? '-' : ''}${text}`, units, digits };
});

describe('decimal', () => {
  it('reads text exactly and writes it back without trailing zeros', () => {
    fc.assert(
      fc.property(scaledDecimal, ({ text, units, digits }) => {
        const d = decimal(text);
        // Same value as the exact scaled integer.
        expect(d.times(`1e${digits}`).eq(units.toString())).toBe(true);
        expect(decimal(decimalText(d)).eq(d)).toBe(true);
        expect(decimalText(d)).not.toMatch(/e|\.\d*0$|^-0$/);
      }),
    );
  });

  it('reads a JSON number through its shortest round-trip text', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        expect(Number(decimalText(decimal(n)))).toBe(Object.is(n, -0) ? 0 : n);
      }),
    );
    expect(decimalText(decimal(0.1).plus(0.2))).toBe('0.3');
    expect(() => decimal(Number.NaN)).toThrow(RangeError);
    expect(() => decimal('1,5')).toThrow(RangeError);
  });

  it('knows multiples exactly: k × step is a multiple, k × step + a smaller non-zero part is not', () => {
    fc.assert(
      fc.property(scaledDecimal, fc.bigInt({ min: -(10n ** 6n), max: 10n ** 6n }), fc.integer({ min: 1, max: 9 }), ({ text: stepText }, k, extraDigits) => {
        const step = decimal(stepText).abs();
        fc.pre(!step.eq(0));
        const multiple = step.times(k.toString());
        expect(isMultipleOf(multiple, step)).toBe(true);
        // A part finer than anything in the step can never complete a multiple.
        const finer = decimal(`1e-${13 + extraDigits}`);
        expect(isMultipleOf(multiple.plus(finer), step)).toBe(false);
      }),
    );
    expect(isMultipleOf(0.0000001, 0.1)).toBe(false);
    expect(isMultipleOf(5, 0)).toBe(false);
  });

  it('rounds half away from zero, symmetrically, once', () => {
    fc.assert(
      fc.property(scaledDecimal, fc.integer({ min: 0, max: 12 }), ({ text }, digits) => {
        const d = decimal(text);
        const r = roundTo(d, digits);
        expect(roundTo(d.neg(), digits).eq(r.neg())).toBe(true);
        // Within half a unit of the last digit, and never further.
        expect(r.minus(d).abs().lte(decimal(`5e-${digits + 1}`))).toBe(true);
      }),
    );
    expect(decimalText(roundTo(decimal('2.5'), 0))).toBe('3');
    expect(decimalText(roundTo(decimal('-2.5'), 0))).toBe('-3');
  });

  it('divides to a number of digits with one rounding', () => {
    fc.assert(
      fc.property(scaledDecimal, scaledDecimal, fc.integer({ min: 0, max: 8 }), ({ text: a }, { text: b }, digits) => {
        fc.pre(!decimal(b).eq(0));
        const q = divideTo(decimal(a), decimal(b), digits);
        // |q·b − a| ≤ half a unit of the quotient's last digit, times |b|.
        expect(q.times(b).minus(a).abs().lte(decimal(`5e-${digits + 1}`).times(decimal(b).abs()))).toBe(true);
      }),
    );
  });
});
