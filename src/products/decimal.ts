// Exact decimal arithmetic for quantities and money: values as integers of 10^-6 units (BigInt).
// Never binary floating point: 0.1 + 0.2 is 0.3 here.

export const SCALE_DIGITS = 6;
const SCALE = 10n ** BigInt(SCALE_DIGITS);

/** A decimal (text from PostgreSQL numeric, or a JSON number) as scaled integer units. */
export function toScaled(value: string | number): bigint {
  let text = typeof value === 'number' ? String(value) : value;
  if (/e/i.test(text)) text = Number(text).toFixed(SCALE_DIGITS);
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = text.replace('-', '').split('.');
  const units = BigInt(whole || '0') * SCALE + BigInt((fraction + '0'.repeat(SCALE_DIGITS)).slice(0, SCALE_DIGITS));
  return negative ? -units : units;
}

/** Scaled units back to decimal text (no trailing zeros). */
export function fromScaled(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const fraction = (abs % SCALE).toString().padStart(SCALE_DIGITS, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / SCALE}${fraction ? `.${fraction}` : ''}`;
}

/** Whether `value` is an integer multiple of `step`, exactly (0.3 is a multiple of 0.1). */
export function isMultipleOf(value: number | string, step: number | string): boolean {
  const s = toScaled(step);
  return s !== 0n && toScaled(value) % s === 0n;
}

// Exact decimals at a chosen number of fraction digits (delivery validation works at 12, then
// stores 6; money is rounded to 2 in SQL). Rounding is always half away from zero.

const DECIMAL_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i;

/** a / b rounded half away from zero. */
export function divRound(a: bigint, b: bigint): bigint {
  if (b === 0n) throw new RangeError('division by zero');
  const negative = a < 0n !== b < 0n;
  const absA = a < 0n ? -a : a;
  const absB = b < 0n ? -b : b;
  const q = (absA * 2n + absB) / (absB * 2n);
  return negative ? -q : q;
}

/** A decimal (text, or a finite number through its shortest round-trip text, so 0.1 is 1/10)
 * as integer units of 10^-digits, rounded half away from zero beyond `digits`. */
export function parseDecimal(value: string | number, digits: number): bigint {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  const match = DECIMAL_TEXT.exec(String(value).trim());
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) throw new RangeError(`not a decimal: ${value}`);
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  const mantissa = BigInt(`${whole}${fraction}` || '0');
  const shift = Number(exponent) - fraction.length + digits;
  const units = shift >= 0 ? mantissa * 10n ** BigInt(shift) : divRound(mantissa, 10n ** BigInt(-shift));
  return sign === '-' ? -units : units;
}

/** Units at `from` fraction digits re-expressed at `to` digits (rounded half away from zero when fewer). */
export function rescale(units: bigint, from: number, to: number): bigint {
  return to >= from ? units * 10n ** BigInt(to - from) : divRound(units, 10n ** BigInt(from - to));
}

/** Units of 10^-digits as decimal text without trailing zeros ("-0.5", "12", "0.000001"). */
export function formatDecimal(units: bigint, digits: number): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const scale = 10n ** BigInt(digits);
  const fraction = digits === 0 ? '' : (abs % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / scale}${fraction ? `.${fraction}` : ''}`;
}
