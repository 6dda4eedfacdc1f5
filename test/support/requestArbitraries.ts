// fast-check arbitraries for requests to the routes of our OpenAPI document: values generated
// from each route's published schemas (so that many requests get past validation and run their
// handlers), then mutated with hostile values (nulls, U+0000 and lone surrogates, huge numbers
// and strings, deep nesting, bad dates and durations, wrong types), and the raw bodies, content
// types and path parameters a careless or hostile client sends.
import fc from 'fast-check';

type Schema = Record<string, any>;
export type OpenApi = { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, Schema> } };

/** Existing ids, so that generated requests also name objects that exist. */
export interface IdPools {
  /** Integer ids that may be used in any request. */
  ints: number[];
  /** Integer ids only reads may name (the fuzzer's own credentials, roles and organization). */
  protectedInts: Set<number>;
  /** VTN object ids (programs, events, VENs, …). */
  strings: string[];
}

const deep = (depth: number) => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown;

/** Values a hostile or careless client puts where something else belongs. */
export const HOSTILE_VALUES: readonly unknown[] = [
  null,
  '',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  'x'.repeat(70_000),
  1e308,
  -1e308,
  2 ** 53 + 2,
  -1,
  0,
  1.5,
  true,
  [],
  {},
  deep(1500),
  { nested: { deeper: [[[[{ a: [null] }]]]] } },
  '2024-02-30T00:00:00Z',
  '2024-01-01T00:00:00+01:00',
  '2024-13-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999999999Z',
  'PT1.5H',
  'P1W2D',
  'P',
  'P99999999999999999999Y',
  '-P9999999999DT99999999999H',
  "' OR 1=1 --",
  '../../etc/passwd',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://exa mple.com/',
  '1e400',
  'NaN',
];

/** Hostile path and query parameter texts, already percent-encoded where needed. */
export const HOSTILE_PARAMS: readonly string[] = [
  '%00', 'a%00b', '%ED%A0%80', '%F0%9F%98%80', '%ff', '%', '-1', '0', '2147483648', '99999999999999999999', '1e3', '1.5', 'abc', '%20', '..', '.',
  'x'.repeat(300), '9'.repeat(40), '%2F', 'null', 'true', '[]', '{}',
];

function resolve(schema: Schema, doc: OpenApi): Schema {
  let s = schema;
  for (let i = 0; i < 10 && typeof s.$ref === 'string'; i += 1) s = doc.components.schemas[s.$ref.replace('#/components/schemas/', '')] ?? {};
  return s;
}

const DATE_TIMES = ['2024-01-01T00:00:00Z', '2024-06-03T10:00:00Z', '2024-06-03T11:00:00Z', '2023-12-31T23:45:00Z', '2024-02-29T12:30:00.5Z', '2030-01-01T00:00:00Z'];
const DURATIONS = ['PT1H', 'PT15M', 'P1D', 'P1W', '-PT8H', 'P1M', 'PT0S', 'P1Y2M3DT4H5M6.5S'];

function stringArbitrary(s: Schema, name: string, pools: IdPools): fc.Arbitrary<unknown> {
  const maxLength = Math.min(s.maxLength ?? 24, 64);
  const minLength = Math.min(s.minLength ?? 0, maxLength);
  switch (s.format) {
    case 'utc-date-time':
    case 'date-time':
      return fc.oneof(fc.constantFrom(...DATE_TIMES), fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()));
    case 'iso-duration':
      return fc.constantFrom(...DURATIONS);
    case 'uri':
      return fc.constantFrom('https://example.com/hook', 'http://93.184.215.14:8443/x', 'https://hooks.example.org/a?b=c');
    case 'uuid':
      return fc.uuid();
  }
  if (s.pattern && /ID$|Id$|^id$/.test(name) && pools.strings.length > 0) return fc.oneof(fc.constantFrom(...pools.strings), fc.stringMatching(new RegExp(s.pattern), { maxLength }).filter((v) => v.length >= minLength));
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern), { maxLength }).filter((v) => v.length >= minLength && v.length <= maxLength);
  return fc.string({ minLength, maxLength, unit: 'grapheme' });
}

function integerArbitrary(s: Schema, name: string, pools: IdPools): fc.Arbitrary<number> {
  const min = Math.max(s.minimum ?? -(2 ** 31), -(2 ** 31));
  const max = Math.min(s.maximum ?? 2 ** 31 - 1, 2 ** 31 - 1);
  const plain = fc.integer({ min, max });
  const ids = pools.ints.filter((i) => i >= min && i <= max);
  if (!/Ids?$|^id$|^\w+Id$/.test(name)) return plain;
  // Any id, but never one the caller protects (pools.ints leaves those out for writes): a plain
  // integer is biased towards small values and would name the fuzzer's own organization (1).
  const other = plain.filter((i) => ids.includes(i) || !pools.protectedInts.has(i));
  return ids.length > 0 ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ids) }, { weight: 1, arbitrary: other }) : other;
}

/** A value for `schema` (valid as far as one schema can tell). */
export function valueFor(schema: Schema, doc: OpenApi, pools: IdPools, name = '', depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, doc);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  if ('const' in s) return fc.constant(s.const);
  const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((a) => valueFor(a, doc, pools, name, depth + 1)));
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
  const byType = types.map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'string':
        return stringArbitrary(s, name, pools);
      case 'integer':
        return integerArbitrary(s, name, pools);
      case 'number':
        return fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array': {
        const maxLength = depth > 4 ? Math.min(s.minItems ?? 0, 1) : Math.max(Math.min(s.maxItems ?? 3, 3), s.minItems ?? 0);
        const items = valueFor(s.items ?? {}, doc, pools, name.replace(/s$/, ''), depth + 1);
        return fc.array(items, { minLength: Math.min(s.minItems ?? 0, maxLength), maxLength }).map((a) => (s.uniqueItems ? [...new Set(a.map((v) => JSON.stringify(v)))].map((v) => JSON.parse(v) as unknown) : a));
      }
      case 'object': {
        const properties = (s.properties ?? {}) as Record<string, Schema>;
        const required = new Set<string>(s.required ?? []);
        // Past a few levels only what is required, so that generated documents stay small.
        const keys = Object.keys(properties).filter((k) => depth < 5 || required.has(k));
        const record = Object.fromEntries(keys.map((k) => [k, valueFor(properties[k]!, doc, pools, k, depth + 1)]));
        return fc.record(record, { requiredKeys: keys.filter((k) => required.has(k)) });
      }
      default:
        return fc.constant(null);
    }
  });
  return byType.length === 1 ? byType[0]! : fc.oneof(...byType);
}

/** Every node of a JSON value, with a setter, for mutations. */
function nodes(value: unknown, set: (v: unknown) => void, out: { get: () => unknown; set: (v: unknown) => void }[] = [], depth = 0): typeof out {
  out.push({ get: () => value, set });
  if (depth > 8) return out;
  if (Array.isArray(value)) value.forEach((v, i) => nodes(v, (n) => (value[i] = n), out, depth + 1));
  else if (value && typeof value === 'object') for (const k of Object.keys(value)) nodes((value as Record<string, unknown>)[k], (n) => ((value as Record<string, unknown>)[k] = n), out, depth + 1);
  return out;
}

/** A generated document, possibly with one or two of its nodes replaced by hostile values or
 * given an unknown member. */
export function mutated(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const mutation = fc.record({ at: fc.nat(), hostile: fc.constantFrom(...HOSTILE_VALUES), kind: fc.constantFrom('replace', 'replace', 'unknown-member', 'wrap') });
  return fc.tuple(valid, fc.array(mutation, { maxLength: 2 })).map(([value, mutations]) => {
    let root: unknown = structuredClone(value);
    for (const m of mutations) {
      const all = nodes(root, (v) => (root = v));
      const node = all[m.at % all.length]!;
      const current = node.get();
      // A copy of the hostile value: a second mutation may land inside it, and the shared
      // constant must neither change nor end up containing itself (a cycle JSON cannot encode).
      const hostile = structuredClone(m.hostile);
      if (m.kind === 'replace') node.set(hostile);
      else if (m.kind === 'unknown-member' && current && typeof current === 'object' && !Array.isArray(current)) (current as Record<string, unknown>)['unexpected\u0000member'] = hostile;
      else if (m.kind === 'wrap') node.set([current]);
      else node.set(hostile);
    }
    return root;
  });
}

/** Percent-encodes for a URL, writing lone surrogates as their (invalid) UTF-8 bytes. */
export function encodeComponent(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return [...text].map((c) => (/[\ud800-\udfff]/.test(c) ? '%ED%A0%80' : encodeURIComponent(c))).join('');
  }
}

/** Raw bodies: not a JSON document, or one that tests the parser's limits. */
export const RAW_BODIES: readonly string[] = [
  '',
  'null',
  '[1,2',
  '{"a":',
  '{"a":1e400}',
  `{"meters":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
  '[' + '{},'.repeat(20_000) + '{}]',
  '"\\u0000"',
  '{"a":"\\ud800"}',
  '\u0000\u0001\u0002',
  'grant_type=client_credentials&client_id=%00&client_secret=%ED%A0%80&audience=flex-api',
];

export const CONTENT_TYPES: readonly (string | undefined)[] = [
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  'application/merge-patch+json',
  'multipart/form-data; boundary=x',
];
