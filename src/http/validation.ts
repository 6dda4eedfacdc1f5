// Ajv instances, compiled once at start. Bodies are validated strictly (no type coercion);
// path and query parameters arrive as strings and are coerced by their schemas.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { isStorableText, UNSTORABLE_TEXT } from '../shared/storableText.ts';
import type { FieldError } from './errors.ts';
import type { JsonSchema } from './types.ts';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

export const MAX_LISTED_ERRORS = 20;

function newAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    // `title` names a schema for the OpenAPI components; `example` documents it.
    keywords: ['example'],
  });
  addFormats(ajv);
  // `date-time` in JSON Schema accepts offsets; the platform speaks UTC only (DESIGN.md, Time).
  ajv.addFormat('utc-date-time', {
    type: 'string',
    validate: (s: string) => parseUtcTimestamp(s) !== undefined,
  });
  ajv.addFormat('iso-duration', { type: 'string', validate: (s: string) => ISO_DURATION.test(s) });
  return ajv;
}

export const UTC_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/;

/** Epoch milliseconds of an ISO 8601 UTC timestamp (`…Z`), or undefined when it is not one or
 * names a day that does not exist (Date.parse would roll 2024-02-30 over to March 1st). */
export function parseUtcTimestamp(s: string): number | undefined {
  const m = UTC_DATE_TIME.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0–99 as 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCDate() !== day) return undefined;
  return date.getTime() + hour * 3_600_000 + minute * 60_000 + second * 1000 + (m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0);
}
/** ISO 8601 durations as OpenADR 3.0.1 writes them (its `duration` pattern): whole numbers of
 * years, months, weeks or days (weeks and days not both), hours and minutes, a fraction only on
 * seconds, an optional leading minus. Slightly stricter than 3.0.1: a `T` must be followed by a
 * number (`P1DT` is refused). `PT1.5H`, `P1W2D`, `P0.5D` are refused. */
export const ISO_DURATION = /^-?P(?=\d|T\d)(?:\d+Y)?(?:\d+M)?(?:\d+[DW])?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$/;

export interface Validators {
  body: Ajv;
  input: Ajv;
}

export function createValidators(): Validators {
  return { body: newAjv(false), input: newAjv(true) };
}

export function compile(ajv: Ajv, schema: JsonSchema, what: string): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (err) {
    throw new Error(`Invalid schema for ${what}: ${(err as Error).message}`);
  }
}

/** `/meters/0/registers/2` → `meters[0].registers[2]`, prefixed for query/path parameters. */
export function formatPath(pointer: string, prefix: string): string {
  let out = prefix;
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(segment)) out += `[${segment}]`;
    else out += out === '' ? segment : `.${segment}`;
  }
  return out;
}

function join(path: string, child: string): string {
  return path === '' ? child : `${path}.${child}`;
}

export function toFieldErrors(errors: ErrorObject[] | null | undefined, prefix: string): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    let path = formatPath(e.instancePath, prefix);
    let message = e.message ?? 'is invalid';
    switch (e.keyword) {
      case 'required':
        path = join(path, String(e.params.missingProperty));
        message = 'is required';
        break;
      case 'additionalProperties':
        path = join(path, String(e.params.additionalProperty));
        message = 'is not a known property';
        break;
      case 'enum':
        message = `must be one of: ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
        break;
      case 'format':
        message = formatMessage(String(e.params.format));
        break;
    }
    if (path === '') path = prefix === '' ? '(body)' : prefix;
    const key = `${path}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, message });
    if (out.length >= MAX_LISTED_ERRORS) break;
  }
  return out;
}

function formatMessage(format: string): string {
  switch (format) {
    case 'utc-date-time':
      return 'must be an ISO 8601 UTC date-time such as 2024-01-01T00:00:00Z';
    case 'date-time':
      return 'must be an ISO 8601 date-time';
    case 'iso-duration':
      return 'must be an ISO 8601 duration such as PT1H (whole numbers, a fraction only on seconds, weeks or days but not both)';
    case 'uri':
      return 'must be an absolute URI (RFC 3986; spaces must be percent-encoded)';
    default:
      return `must match format "${format}"`;
  }
}

/** One container being walked: its members are visited in order through `next`. */
interface Level {
  container: unknown[] | Record<string, unknown>;
  /** Property names of an object; undefined for an array. */
  keys: string[] | undefined;
  next: number;
  parent: Level | undefined;
  /** Property name or array index of this container under its parent. */
  key: string | number | undefined;
}

function levelPath(level: Level | undefined, last: string | number | undefined, prefix: string): string {
  const keys: (string | number)[] = last === undefined ? [] : [last];
  for (let l = level; l && l.key !== undefined; l = l.parent) keys.push(l.key);
  let out = prefix;
  for (const key of keys.reverse()) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? key : `.${key}`;
  }
  return out === '' ? '(body)' : out;
}

/** Every string (values and property names) of a parsed request part that PostgreSQL could not
 * store (src/shared/storableText.ts), as field errors: the same check at one depth for path
 * parameters, query parameters and bodies, on every route. Iterative, so a deeply nested body
 * cannot exhaust the stack; it holds one entry per level of nesting, not per value (a frame per
 * array element took ~40 bytes each: 20 MiB for a 1 MiB `[0,0,…]`), and builds paths only for
 * offenders. */
export function unstorableTextErrors(value: unknown, prefix: string): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof value === 'string') {
    if (!isStorableText(value)) errors.push({ path: levelPath(undefined, undefined, prefix), message: UNSTORABLE_TEXT });
    return errors;
  }
  const open = (v: unknown, parent: Level | undefined, key: string | number | undefined): Level | undefined => {
    if (Array.isArray(v)) return { container: v, keys: undefined, next: 0, parent, key };
    if (v !== null && typeof v === 'object') return { container: v as Record<string, unknown>, keys: Object.keys(v), next: 0, parent, key };
    return undefined;
  };
  let level = open(value, undefined, undefined);
  while (level && errors.length < MAX_LISTED_ERRORS) {
    const { container, keys } = level;
    const size = keys ? keys.length : (container as unknown[]).length;
    if (level.next >= size) {
      level = level.parent;
      continue;
    }
    const i = level.next;
    level.next += 1;
    const key = keys ? keys[i]! : i;
    if (keys && !isStorableText(key as string)) {
      errors.push({ path: levelPath(level, undefined, prefix), message: `has a property name that ${UNSTORABLE_TEXT}` });
      continue;
    }
    const member = keys ? (container as Record<string, unknown>)[key as string] : (container as unknown[])[i];
    if (typeof member === 'string') {
      if (!isStorableText(member)) errors.push({ path: levelPath(level, key, prefix), message: UNSTORABLE_TEXT });
    } else if (member !== null && typeof member === 'object') {
      level = open(member, level, key);
    }
  }
  return errors.slice(0, MAX_LISTED_ERRORS);
}
