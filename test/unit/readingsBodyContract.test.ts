// POST /api/readings is enforced by the worker's byte parser (src/shared/readings/parseReadings.ts),
// not by Ajv; its published body schema (readingsBatchSchema, in the OpenAPI document) must say
// exactly what the parser accepts. Random bodies built from edge-case pieces go through both:
// Ajv on the schema (plus the platform-wide storable-text rule every route applies) and the
// parser must accept and refuse the same ones, and agree on the instants they read.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readingsBatchSchema } from '../../src/meter/readingsRoutes.ts';
import { compile, createValidators, parseUtcTimestamp, unstorableTextErrors } from '../../src/http/validation.ts';
import { MAX_ID_LENGTH, MAX_RESOLUTION, parseReadings, type ParsedBatch } from '../../src/shared/readings/parseReadings.ts';

const validate = compile(createValidators().body, readingsBatchSchema, 'POST /api/readings');

// Raw JSON text of each leaf: a plain valid one, or (rarely, so that most bodies carry zero or one
// oddity and the comparison means something) one from around every limit either side could have.
const TIMESTAMPS = {
  plain: ['"2024-01-20T00:15:00Z"', '"2024-01-20T00:30:00Z"', '"2024-03-31T01:00:00.5Z"'],
  edge: [
    '"2024-02-29T23:59:59.999Z"', '"2024-01-20T00:15:00.123456789Z"', '"2024-01-20T00:15:00.1234567890Z"', '"2024-01-20T00:15:00.Z"',
    '"2024-01-20t00:15:00Z"', '"2024-01-20T00:15:00z"', '"2024-01-20 00:15:00Z"', '"2024-01-20T00:15:00+01:00"', '"2024-01-20T00:15:00"',
    '"2023-02-29T00:00:00Z"', '"2024-01-20T24:00:00Z"', '"2024-13-01T00:00:00Z"', '"0050-06-01T00:00:00Z"', '"0000-01-01T00:00:00Z"',
    '"1969-12-31T23:59:59Z"', '"9999-12-31T23:59:59Z"', '"+02024-01-20T00:15:00Z"', '"yesterday"', '""', '1705709700000', 'null',
  ],
};
const VALUES = { plain: ['1.5', '0', '42'], edge: ['-0', '-2.5e-3', '1e308', '5e-324', '1e999', '-1e999', '"5"', 'null', 'true', '[]', '{}'] };
const RESOLUTIONS = {
  plain: ['900', '3600'],
  edge: ['1', '86400', `${MAX_RESOLUTION}`, `${MAX_RESOLUTION + 1}`, '2147483648', '0', '-900', '900.5', '9e2', '900.0', '1e-7', '"900"', 'null'],
};
const IDS = {
  plain: ['"M1"', '"R1"', '"import-kwh"'],
  edge: [`"${'x'.repeat(MAX_ID_LENGTH)}"`, `"${'x'.repeat(MAX_ID_LENGTH + 1)}"`, '""', '"\\u0000"', '"a\\ud800"', '"\\udc00a"', '"\\ud83d\\ude00"', '"é"', '" "', '5', 'null'],
};

const leaf = (choices: { plain: string[]; edge: string[] }) => fc.oneof({ weight: 30, arbitrary: fc.constantFrom(...choices.plain) }, { weight: 1, arbitrary: fc.constantFrom(...choices.edge) });
/** Usually there, now and then left out. */
const field = (arb: fc.Arbitrary<string>) => fc.oneof({ weight: 40, arbitrary: arb }, { weight: 1, arbitrary: fc.constant(undefined) });
const rarely = (text: string) => fc.oneof({ weight: 60, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant(text) });
const list = (item: fc.Arbitrary<string>, maxLength: number, odd: string[]) =>
  fc.oneof({ weight: 40, arbitrary: fc.array(item, { maxLength }).map((items) => `[${items.join(',')}]`) }, { weight: 1, arbitrary: fc.constantFrom(...odd) });

/** A JSON object's text from [key, raw value] pairs (undefined values left out). */
const object = (fields: [string, string | undefined][]) => `{${fields.filter(([, v]) => v !== undefined).map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;

const valueText = fc
  .tuple(field(leaf(TIMESTAMPS)), field(leaf(VALUES)), field(leaf(RESOLUTIONS)), rarely('"good"'))
  .map(([timestamp, value, resolution, quality]) => object([['timestamp', timestamp], ['value', value], ['resolution', resolution], ['quality', quality]]));
const registerText = fc
  .tuple(field(leaf(IDS)), field(list(valueText, 4, ['{}', 'null', '"v"'])), rarely('1'))
  .map(([id, values, extra]) => object([['id', id], ['values', values], ['unit', extra]]));
const meterText = fc
  .tuple(field(leaf(IDS)), field(list(registerText, 3, ['{}', 'null'])), rarely('[]'))
  .map(([id, registers, extra]) => object([['id', id], ['registers', registers], ['tags', extra]]));
const bodyText = fc.tuple(field(list(meterText, 3, ['{}', '1', 'null'])), rarely('1')).map(([meters, extra]) => object([['meters', meters], ['extra', extra]]));

function schemaAccepts(text: string): boolean {
  const body: unknown = JSON.parse(text);
  return validate(body) === true && unstorableTextErrors(body, '').length === 0;
}

/** Every reading as `meter register instant`, once per series and instant, as the published
 * format reads it (the parser keeps the last of equal timestamps in a series). */
function readingsOf(text: string): string[] {
  const body = JSON.parse(text) as { meters: { id: string; registers: { id: string; values: { timestamp: string }[] }[] }[] };
  const keys = body.meters.flatMap((m) => m.registers.flatMap((r) => r.values.map((v) => `${m.id} ${r.id} ${parseUtcTimestamp(v.timestamp)}`)));
  return [...new Set(keys)].sort();
}

function parsedReadings(batch: ParsedBatch): string[] {
  return batch.series.flatMap((s, i) => [...batch.timestamps.subarray(batch.offsets[i], batch.offsets[i + 1])].map((t) => `${s.meterId} ${s.registerId} ${t}`)).sort();
}

describe('POST /api/readings: published schema and parser', () => {
  it('accept and refuse the same bodies', () => {
    fc.assert(
      fc.property(bodyText, (text) => {
        const parsed = parseReadings(Buffer.from(text));
        expect(parsed.ok, `${text}\nparser: ${parsed.ok ? 'accepted' : JSON.stringify(parsed.errors)}\nschema: ${JSON.stringify(validate.errors)}`).toBe(schemaAccepts(text));
        if (parsed.ok) expect(parsedReadings(parsed.batch), text).toEqual(readingsOf(text));
      }),
      { numRuns: 20_000 },
    );
  });

  it('publishes the parser’s limits', () => {
    const value = (readingsBatchSchema as any).properties.meters.items.properties.registers.items.properties.values.items.properties;
    expect(value.resolution).toMatchObject({ type: 'integer', minimum: 1, maximum: MAX_RESOLUTION });
    expect((readingsBatchSchema as any).properties.meters.items.properties.id).toMatchObject({ minLength: 1, maxLength: MAX_ID_LENGTH });
  });
});
