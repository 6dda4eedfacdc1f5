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
