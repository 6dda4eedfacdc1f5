// One CSV row of the import, validated by the rules of POST /api/readings: ids of 1 to 200
// characters, a UTC ISO 8601 timestamp ending in Z naming a real calendar date (the API's own
// byte parser), a finite value, a resolution that is a whole number of seconds from 1 to
// MAX_RESOLUTION. Meter and register are checked later, per series (importBatch.ts).
import { MAX_RESOLUTION, parseTimestampBytes } from '../shared/readings/parseReadings.ts';
import type { Fields } from './csv.ts';

export const COLUMNS = ['meterId', 'registerId', 'timestamp', 'value', 'resolution'] as const;
export type Column = (typeof COLUMNS)[number];

/** Field index of each column, from the header (any order, names case-insensitive). */
export type ColumnIndex = Record<Column, number>;

/** The header's column positions, or a message saying what is wrong with it. */
export function readHeader(names: readonly string[]): ColumnIndex | string {
  const clean = names.map((n, i) => (i === 0 ? n.replace(/^\uFEFF/, '') : n).trim());
  const index: Partial<ColumnIndex> = {};
  const problems: string[] = [];
  clean.forEach((name, i) => {
    const column = COLUMNS.find((c) => c.toLowerCase() === name.toLowerCase());
    if (!column) problems.push(`unknown column ${JSON.stringify(name)}`);
    else if (index[column] !== undefined) problems.push(`column ${column} appears twice`);
    else index[column] = i;
  });
  for (const c of COLUMNS) if (index[c] === undefined) problems.push(`column ${c} is missing`);
  if (problems.length > 0) return `the first line must be the header ${COLUMNS.join(',')} (any order); got ${JSON.stringify(clean.join(','))}: ${problems.join('; ')}`;
  return index as ColumnIndex;
}

export interface Reading {
  timestamp: number;
  value: number;
  resolution: number;
}

const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const MAX_EXACT = 2 ** 53;
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * A decimal number (`-12`, `0.25`, `.5`, `1e3`) from bytes; NaN when the text is not one.
 * Up to 15 significant digits and 22 decimals are converted without a string: an integer mantissa
 * below 2^53 divided by an exact power of ten is correctly rounded, the same double `Number()`
 * gives (Clinger's fast path). Anything else goes through `Number()` after the grammar check.
 */
export function parseDecimal(buf: Buffer, start: number, end: number): number {
  let i = start;
  let negative = false;
  if (i < end && (buf[i] === MINUS || buf[i] === PLUS)) {
    negative = buf[i] === MINUS;
    i += 1;
  }
  let mantissa = 0;
  let digits = 0;
  let decimals = 0;
  let seenDot = false;
  let simple = true;
  for (; i < end; i += 1) {
    const c = buf[i]!;
    if (c === DOT) {
      if (seenDot) return NaN;
      seenDot = true;
      continue;
    }
    const d = c - 0x30;
    if (d < 0 || d > 9) break;
    mantissa = mantissa * 10 + d;
    digits += 1;
    if (seenDot) decimals += 1;
  }
  if (digits === 0) return NaN;
  if (i < end) {
    // Only an exponent may follow: e, optional sign, digits.
    if (buf[i] !== 0x65 && buf[i] !== 0x45) return NaN;
    let j = i + 1;
    if (j < end && (buf[j] === MINUS || buf[j] === PLUS)) j += 1;
    if (j >= end) return NaN;
    for (; j < end; j += 1) if (buf[j]! < 0x30 || buf[j]! > 0x39) return NaN;
    simple = false;
  }
  if (simple && mantissa < MAX_EXACT && decimals < POWERS_OF_TEN.length) {
    const value = decimals === 0 ? mantissa : mantissa / POWERS_OF_TEN[decimals]!;
    return negative ? -value : value;
  }
  return Number(buf.toString('latin1', start, end));
}

const NON_FINITE = /^[+-]?(nan|inf|infinity)$/i;

function idProblem(buf: Buffer, fields: Fields, k: number, column: Column): string | undefined {
  const length = fields.ends[k]! - fields.starts[k]!;
  // Bytes bound characters: only empty or long ids need counting as the API does (UTF-16 units).
  if (length === 0 || (length > 200 && fields.text(buf, k).length > 200)) return `${column} must be 1 to 200 characters`;
  return undefined;
}

function join(a: string | undefined, b: string | undefined): string | undefined {
  return a === undefined ? b : b === undefined ? a : `${a}; ${b}`;
}

/** Why a row's fields are not acceptable (every problem, `; `-separated), or undefined when they
 * are; fills `out`. No closure or array per row: this runs for every row of the file. */
export function readReading(buf: Buffer, fields: Fields, columns: ColumnIndex, out: Reading): string | undefined {
  let problems = join(idProblem(buf, fields, columns.meterId, 'meterId'), idProblem(buf, fields, columns.registerId, 'registerId'));

  const t = columns.timestamp;
  const ts = parseTimestampBytes(buf, fields.starts[t]!, fields.ends[t]!);
  if (typeof ts === 'string') problems = join(problems, `timestamp ${ts}`);
  else out.timestamp = ts;

  const v = columns.value;
  const value = parseDecimal(buf, fields.starts[v]!, fields.ends[v]!);
  if (Number.isNaN(value)) problems = join(problems, NON_FINITE.test(fields.text(buf, v)) ? 'value must be a finite number' : 'value must be a number');
  else if (!Number.isFinite(value)) problems = join(problems, 'value must be a finite number');
  else out.value = value;

  const r = columns.resolution;
  const resolution = parseDecimal(buf, fields.starts[r]!, fields.ends[r]!);
  if (!Number.isInteger(resolution) || resolution < 1 || resolution > MAX_RESOLUTION) problems = join(problems, `resolution must be a positive integer number of seconds up to ${MAX_RESOLUTION}`);
  else out.resolution = resolution;
  return problems;
}
