import { describe, expect, it } from 'vitest';
import { compile, createValidators, formatPath, toFieldErrors } from '../../src/http/validation.ts';

describe('validation errors', () => {
  it('formats JSON pointers as dotted paths with indexes', () => {
    expect(formatPath('/meters/0/registers/2/values/17/timestamp', '')).toBe('meters[0].registers[2].values[17].timestamp');
    expect(formatPath('/start', 'query')).toBe('query.start');
    expect(formatPath('', 'query')).toBe('query');
  });

  it('lists required, unknown, enum and format problems by path', () => {
    const { body } = createValidators();
    const validate = compile(
      body,
      {
        type: 'object',
        properties: { name: { type: 'string' }, at: { type: 'string', format: 'utc-date-time' }, kind: { enum: ['a', 'b'] }, d: { type: 'string', format: 'iso-duration' } },
        required: ['name'],
        additionalProperties: false,
      },
      'test',
    );
    expect(validate({ at: '2024-01-01T00:00:00+01:00', kind: 'c', extra: 1, d: 'P' })).toBe(false);
    const errors = toFieldErrors(validate.errors, '');
    expect(errors).toEqual(
      expect.arrayContaining([
        { path: 'name', message: 'is required' },
        { path: 'extra', message: 'is not a known property' },
        { path: 'kind', message: 'must be one of: "a", "b"' },
        { path: 'at', message: 'must be an ISO 8601 UTC date-time such as 2024-01-01T00:00:00Z' },
        { path: 'd', message: expect.stringContaining('must be an ISO 8601 duration such as PT1H') },
      ]),
    );
  });

  it('accepts UTC date-times and ISO durations', () => {
    const { body } = createValidators();
    const validate = compile(body, { type: 'object', properties: { at: { type: 'string', format: 'utc-date-time' }, d: { type: 'string', format: 'iso-duration' } } }, 't');
    expect(validate({ at: '2024-02-29T23:59:59.123Z', d: 'PT15M' })).toBe(true);
    expect(validate({ at: '2024-02-30T00:00:00Z' })).toBe(false);
    expect(validate({ d: 'P1DT2H' })).toBe(true);
  });
});
