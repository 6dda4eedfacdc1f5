// The socket-free parts of the HTTP servers: route matching for node:http (literal segments before
// parameters, HEAD as GET, 405 with Allow) and the Content-Length rule both servers apply.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../../src/http/rateLimit.ts';
import { Router } from '../../src/http/router.ts';
import { RouteTable, allowOf, parseContentLength } from '../../src/http/serverCore.ts';
import type { RouteDef } from '../../src/http/types.ts';

const route = (method: RouteDef['method'], path: string): RouteDef => ({ method, path, summary: path, tags: [], auth: 'public', responses: { 200: { description: 'ok' } }, handler: () => ({ status: 200 }) });
const router = new Router(
  [route('GET', '/api/things'), route('POST', '/api/things'), route('GET', '/api/things/:id'), route('DELETE', '/api/things/:id'), route('GET', '/api/things/new'), route('PUT', '/api/things/:id/parts/:part')],
  { authenticate: async () => Promise.reject(new Error('none')), rateLimits: new MemoryRateLimitStore(), log: pino({ level: 'silent' }) },
);
const table = new RouteTable(router.routes);

describe('RouteTable', () => {
  it('matches literal paths and parameters, literal segments first', () => {
    const list = table.match('GET', '/api/things');
    expect(list && 'route' in list && list.route.def.path).toBe('/api/things');
    const one = table.match('DELETE', '/api/things/42');
    expect(one && 'route' in one && [one.route.def.path, one.params]).toEqual(['/api/things/:id', ['42']]);
    const literal = table.match('GET', '/api/things/new');
    expect(literal && 'route' in literal && literal.route.def.path).toBe('/api/things/new');
    const two = table.match('PUT', '/api/things/7/parts/x%20y');
    expect(two && 'route' in two && two.params).toEqual(['7', 'x%20y']);
  });

  it('serves HEAD with the GET route and lists HEAD in Allow', () => {
    const head = table.match('HEAD', '/api/things/1');
    expect(head && 'route' in head && head.route.def.method).toBe('GET');
    expect(table.match('PATCH', '/api/things/1')).toEqual({ allow: 'GET, HEAD, DELETE' });
    expect(table.match('HEAD', '/api/other')).toBeUndefined();
    expect(allowOf(router.routes.filter((r) => r.def.path === '/api/things'))).toBe('GET, HEAD, POST');
  });

  it('does not match empty parameters, extra or missing segments', () => {
    expect(table.match('GET', '/api/things/')).toBeUndefined();
    expect(table.match('GET', '/api/things/1/2')).toBeUndefined();
    expect(table.match('GET', '/api')).toBeUndefined();
  });
});

describe('parseContentLength', () => {
  it('accepts decimal digits only', () => {
    expect(parseContentLength(undefined)).toBeUndefined();
    expect(parseContentLength('0')).toBe(0);
    expect(parseContentLength('1024')).toBe(1024);
    for (const bad of ['-1', 'abc', '1e3', '0x10', ' 1', '1.5', '99999999999999999999']) expect(parseContentLength(bad), bad).toBe('invalid');
  });
});
