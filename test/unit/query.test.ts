import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/http/errors.ts';
import { arrayKeysOf, parseQuery } from '../../src/http/query.ts';

describe('parseQuery', () => {
  it('decodes names and values, + as space', () => {
    expect(parseQuery('a=1&b=hello+world&c=%C3%A9&d')).toEqual({ a: '1', b: 'hello world', c: 'é', d: '' });
  });

  it('collects repeated parameters into arrays', () => {
    expect(parseQuery('registerId=1&registerId=2&x=3')).toEqual({ registerId: ['1', '2'], x: '3' });
  });

  it('splits comma lists for array parameters, and mixes with repetition', () => {
    const arrays = new Set(['registerId']);
    expect(parseQuery('registerId=1,2&registerId=3', arrays)).toEqual({ registerId: ['1', '2', '3'] });
    expect(parseQuery('registerId=7', arrays)).toEqual({ registerId: ['7'] });
    expect(parseQuery('name=a,b', arrays)).toEqual({ name: 'a,b' });
  });

  it('refuses invalid percent-encodings with a 400 error', () => {
    expect(() => parseQuery('a=%zz')).toThrow(HttpError);
    try {
      parseQuery('a=%E0%A4%A');
    } catch (err) {
      expect((err as HttpError).status).toBe(400);
    }
  });

  it('finds the array properties of a schema', () => {
    expect(arrayKeysOf({ type: 'object', properties: { a: { type: 'array' }, b: { type: 'integer' } } })).toEqual(new Set(['a']));
  });
});
