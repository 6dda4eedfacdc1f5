// Pure VTN logic: ISO 8601 duration arithmetic and event/report spans, target keys, and the
// internal-address rules for callback URLs.
import { describe, expect, it } from 'vitest';
import { callbackUrlProblem, isInternalAddress } from '../../src/vtn/callbackUrl.ts';
import { filterKeys, overlaps, sameKeys, targetKeys } from '../../src/vtn/targets.ts';
import { addDuration, parseDuration, reportSpan, spanOf } from '../../src/vtn/timeSpan.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe('durations', () => {
  it('adds calendar and clock components in UTC', () => {
    const add = (from: string, d: string, times = 1) => new Date(addDuration(at(from), parseDuration(d)!, times)).toISOString();
    expect(add('2024-01-01T00:00:00Z', 'PT1H')).toBe('2024-01-01T01:00:00.000Z');
    expect(add('2024-01-01T00:00:00Z', 'PT1H', 3)).toBe('2024-01-01T03:00:00.000Z');
    expect(add('2024-01-01T00:00:00Z', 'P1DT12H30M15.5S')).toBe('2024-01-02T12:30:15.500Z');
    expect(add('2024-01-01T00:00:00Z', 'P2W')).toBe('2024-01-15T00:00:00.000Z');
    expect(add('2024-01-31T00:00:00Z', 'P1M')).toBe('2024-02-29T00:00:00.000Z');
    expect(add('2023-01-31T00:00:00Z', 'P1M')).toBe('2023-02-28T00:00:00.000Z');
    expect(add('2024-02-29T00:00:00Z', 'P1Y')).toBe('2025-02-28T00:00:00.000Z');
    expect(add('2024-03-01T00:00:00Z', '-PT1H')).toBe('2024-02-29T23:00:00.000Z');
    expect(add('2024-01-01T00:00:00Z', 'P1M', 13)).toBe('2025-02-01T00:00:00.000Z');
    expect(parseDuration('1H')).toBeUndefined();
  });
});

describe('spans', () => {
  const period = (start: string, duration?: string) => ({ start, duration });
  it('covers back-to-back default intervals, own periods, and the hull of both', () => {
    const s = spanOf(period('2024-01-01T00:00:00Z', 'PT1H'), [{}, {}, {}]);
    expect([iso(s!.start), iso(s!.end)]).toEqual(['2024-01-01T00:00:00.000Z', '2024-01-01T03:00:00.000Z']);
    const own = spanOf(undefined, [{ intervalPeriod: period('2024-01-01T05:00:00Z', 'PT15M') }, { intervalPeriod: period('2024-01-01T02:00:00Z', 'PT1H') }]);
    expect([iso(own!.start), iso(own!.end)]).toEqual(['2024-01-01T02:00:00.000Z', '2024-01-01T05:15:00.000Z']);
    // An interval's own start with the event's default duration.
    const mixed = spanOf(period('2024-01-01T00:00:00Z', 'PT1H'), [{}, { intervalPeriod: { start: '2024-01-01T10:00:00Z' } }]);
    expect([iso(mixed!.start), iso(mixed!.end)]).toEqual(['2024-01-01T00:00:00.000Z', '2024-01-01T11:00:00.000Z']);
  });

  it('is open-ended for a zero or missing duration and unbounded without timing', () => {
    expect(spanOf(period('2024-01-01T00:00:00Z'), [])).toEqual({ start: at('2024-01-01T00:00:00Z'), end: null });
    expect(spanOf(period('2024-01-01T00:00:00Z', 'PT0S'), [{}, {}])).toEqual({ start: at('2024-01-01T00:00:00Z'), end: null });
    expect(spanOf(undefined, [{}, {}])).toBeUndefined();
    expect(spanOf(null, null)).toBeUndefined();
    // Untimed intervals beside timed ones do not widen the span.
    expect(spanOf(undefined, [{}, { intervalPeriod: period('2024-01-01T00:00:00Z', 'PT1H') }])).toEqual({ start: at('2024-01-01T00:00:00Z'), end: at('2024-01-01T01:00:00Z') });
  });

  it('spans a report over its resources', () => {
    const s = reportSpan([
      { intervalPeriod: period('2024-01-01T00:00:00Z', 'PT15M'), intervals: [{}, {}] },
      { intervals: [{ intervalPeriod: period('2024-01-01T03:00:00Z', 'PT1H') }] },
      { intervals: [{}] },
    ]);
    expect([iso(s!.start), iso(s!.end)]).toEqual(['2024-01-01T00:00:00.000Z', '2024-01-01T04:00:00.000Z']);
    expect(reportSpan([])).toBeUndefined();
    expect(reportSpan(undefined)).toBeUndefined();
  });
});

describe('targets', () => {
  it('indexes each (type, value) pair once, values as text', () => {
    const keys = targetKeys([
      { type: 'GROUP', values: ['a', 'b', 'a'] },
      { type: 'ZONE', values: [5, true, { x: 1, y: 2 }] },
    ]);
    expect(keys).toHaveLength(5);
    expect(overlaps(keys, filterKeys('ZONE', ['5']))).toBe(true);
    expect(overlaps(keys, filterKeys('GROUP', ['5']))).toBe(false);
    expect(overlaps(keys, filterKeys('ZONE', ['true']))).toBe(true);
    expect(targetKeys(null)).toEqual([]);
    expect(sameKeys(targetKeys([{ type: 'G', values: ['a', 'b'] }]), targetKeys([{ type: 'G', values: ['b'] }, { type: 'G', values: ['a'] }]))).toBe(true);
    expect(sameKeys(targetKeys([{ type: 'G', values: ['a'] }]), targetKeys([{ type: 'H', values: ['a'] }]))).toBe(false);
  });
});

describe('callback URLs', () => {
  it('knows internal addresses, IPv4-mapped IPv6 included', () => {
    for (const a of ['127.0.0.1', '10.0.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd12:3456::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1']) {
      expect(isInternalAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700::1111', 'example.com']) expect(isInternalAddress(a), a).toBe(false);
  });

  it('accepts public http(s) URLs only, unless internal ones are allowed', () => {
    expect(callbackUrlProblem('https://example.com/hook', false)).toBeUndefined();
    expect(callbackUrlProblem('http://example.com:8080/hook?a=1', false)).toBeUndefined();
    expect(callbackUrlProblem('ftp://example.com/', false)).toBe('must use http or https');
    expect(callbackUrlProblem('file:///etc/passwd', true)).toBe('must use http or https');
    expect(callbackUrlProblem('/relative', true)).toBe('must be an absolute http or https URL');
    expect(callbackUrlProblem('https://a:b@example.com/', true)).toMatch(/credentials/);
    expect(callbackUrlProblem('http://LOCALHOST./x', false)).toMatch(/special-purpose address \(localhost\)/);
    expect(callbackUrlProblem('http://[::1]:8080/', false)).toMatch(/special-purpose address \(loopback/);
    expect(callbackUrlProblem('http://127.0.0.1:8080/', true)).toBeUndefined();
  });
});
