// The one representation of every quantity and amount: an exact decimal (big.js). Values come in
// as PostgreSQL numeric text or as JSON numbers, a number through its shortest round-trip text
// (0.1 is one tenth, 1e-7 is 0.0000001), and are never truncated: a quantity of 0.1000001 is not
// a multiple of a 0.1 step (scaled integers would truncate at 6 decimals in one
// place and round in another). Rounding happens only where a rule says so (stored figures,
// percentages), always half away from zero. The properties are checked with fast-check in
// test/unit/decimal.test.ts.
import Big from 'big.js';

export type Decimal = Big;

/** A private big.js constructor, so that settings never leak to or from other users of big.js.
 * NE/PE: never exponential notation (PostgreSQL numeric and our JSON read plain decimals). */
function constructor(dp: number): Big.BigConstructor {
  const C = Big();
  C.DP = dp;
  C.RM = Big.roundHalfUp; // half away from zero
  C.NE = -1e6;
  C.PE = 1e6;
  return C;
}

const Exact = constructor(40);
const byDigits = new Map<number, Big.BigConstructor>();

/** A quantity or amount as an exact decimal. Throws RangeError for anything that is not a finite
 * decimal number. */
export function decimal(value: string | number | Decimal): Decimal {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  try {
    return new Exact(typeof value === 'string' ? value.trim() : value);
  } catch {
    throw new RangeError(`not a decimal: ${String(value)}`);
  }
}

/** Whether `value` is an integer multiple of `step`, exactly (0.3 is a multiple of 0.1;
 * 0.0000001 is not). A zero step has no multiples. */
export function isMultipleOf(value: string | number | Decimal, step: string | number | Decimal): boolean {
  const s = decimal(step);
  return !s.eq(0) && decimal(value).mod(s).eq(0);
}

/** Rounded to `digits` fraction digits, half away from zero. */
export function roundTo(value: Decimal, digits: number): Decimal {
  return value.round(digits, Big.roundHalfUp);
}

/** a / b rounded once to `digits` fraction digits, half away from zero. */
export function divideTo(a: Decimal, b: Decimal | number, digits: number): Decimal {
  if (decimal(b).eq(0)) throw new RangeError('division by zero');
  let C = byDigits.get(digits);
  if (!C) byDigits.set(digits, (C = constructor(digits)));
  return new C(a).div(b);
}

/** Plain decimal text without trailing zeros ("-0.5", "12", "0.0000001"), for numeric columns and
 * responses. Zero is "0", never "-0". */
export function decimalText(value: Decimal): string {
  return value.eq(0) ? '0' : value.toFixed();
}
