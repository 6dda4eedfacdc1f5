// The pipeline without a socket: handlers are plain functions.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/http/errors.ts';
import { MemoryRateLimitStore } from '../../src/http/rateLimit.ts';
import { Router, type RequestHead } from '../../src/http/router.ts';
import type { Principal, RouteDef } from '../../src/http/types.ts';

const principal: Principal = {
  kind: 'client',
  subject: 'c1',
  organizationId: 7,
  permissions: new Set(['Meter.Organization.ReadWrite']),
  scopes: new Set(),
  features: new Set(['Grid']),
  globalAdmin: false,
  rateLimitKey: 'c1',
  clientRowId: 1,
};

const route: RouteDef = {
  method: 'GET',
  path: '/things/:organizationId',
  summary: 'things',
  tags: [],
  auth: { permission: 'Meter.Organization.Read', feature: 'Grid', organization: { in: 'path', name: 'organizationId' } },
  params: { type: 'object', properties: { organizationId: { type: 'integer' } }, required: ['organizationId'] },
  query: { type: 'object', properties: { id: { type: 'array', items: { type: 'integer' } } }, additionalProperties: false },
  responses: { 200: { description: 'ok', schema: { type: 'object', properties: { org: { type: 'integer' }, ids: { type: 'array', items: { type: 'integer' } } } } } },
  rateLimit: { name: 'things', windows: [{ seconds: 60, max: 2 }] },
  handler: (req) => ({ status: 200, body: { org: req.params.organizationId, ids: req.query.id, secret: 'not serialized' } }),
};

function setup() {
  return new Router([route], {
    authenticate: async (h) => {
      if (h !== 'Bearer good') throw new HttpError('invalid_token', 'bad');
      return principal;
    },
    rateLimits: new MemoryRateLimitStore(),
    log: pino({ level: 'silent' }),
  });
}

const head = (path: string, query = '', authorization = 'Bearer good'): RequestHead => ({
  method: 'GET',
  path,
  rawQuery: query,
  headers: authorization ? { authorization } : {},
  rawParams: [path.split('/')[2]!],
  remoteAddress: '127.0.0.1',
  requestId: 'r1',
});

describe('Router.dispatch', () => {
  it('coerces parameters, checks access, serializes only declared fields, adds rate headers', async () => {
    const router = setup();
    const out = await router.dispatch(router.routes[0]!, head('/things/7', 'id=1,2&id=3'));
    expect(out.status).toBe(200);
    expect(JSON.parse(out.body as string)).toEqual({ org: 7, ids: [1, 2, 3] });
    expect(out.headers['X-Rate-Limit-Limit']).toBe('2');
  });

  it('answers 401, 403 (organization), 400 and 429 as problems or text', async () => {
    const router = setup();
    const r = router.routes[0]!;
    expect((await router.dispatch(r, head('/things/7', '', ''))).status).toBe(401);
    expect((await router.dispatch(r, head('/things/7', '', 'Bearer bad'))).status).toBe(401);
    const other = await router.dispatch(r, head('/things/8'));
    expect(other.status).toBe(403);
    expect(JSON.parse(other.body as string).type).toBe('urn:flex:error:organization_forbidden');
    const bad = await router.dispatch(r, head('/things/7', 'id=x'));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body as string).errors[0].path).toBe('query.id[0]');
    const limited = await router.dispatch(r, head('/things/7'));
    expect(limited.status).toBe(429);
    expect(limited.headers['Content-Type']).toMatch(/^text\/plain/);
    expect(limited.headers['Retry-After']).toMatch(/^\d+$/);
  });

  it('refuses a broken schema at construction, naming the route', () => {
    const broken: RouteDef = { ...route, query: { type: 'object', properties: { x: { type: 'nonsense' } } } };
    expect(() => setup.call(null) && new Router([broken], { authenticate: async () => principal, rateLimits: new MemoryRateLimitStore(), log: pino({ level: 'silent' }) })).toThrow(/GET \/things\/:organizationId/);
  });
});
