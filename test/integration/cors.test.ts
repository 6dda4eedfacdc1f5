// CORS_ORIGINS: off by default (no CORS header, preflight is the path's 405); with origins
// listed, preflights get 204 with the path's methods, answers (errors too) name the origin, and
// other origins are refused. Real server, requests as a browser makes them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const ALLOWED = 'https://tool.example.com';
let off: TestApp;
let on: TestApp;
let any: TestApp;

beforeAll(async () => {
  [off, on, any] = await Promise.all([startTestApp(), startTestApp({ CORS_ORIGINS: `${ALLOWED}, http://localhost:5173` }), startTestApp({ CORS_ORIGINS: '*' })]);
});
afterAll(() => Promise.all([off?.close(), on?.close(), any?.close()]));

const preflight = (t: TestApp, path: string, origin: string, method = 'GET', headers = 'authorization') =>
  fetch(t.url + path, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });

describe('CORS', () => {
  it('is off by default: no headers, preflight is 405', async () => {
    const res = await off.api.request('GET', '/api/me', { token: off.adminToken, headers: { origin: ALLOWED } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect((await preflight(off, '/api/me', ALLOWED)).status).toBe(405);
  });

  it('answers a preflight from a listed origin with the path’s methods', async () => {
    const res = await preflight(on, '/api/admin/meters/:id'.replace(':id', '7'), ALLOWED, 'PUT', 'Authorization, Content-Type');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, PUT, DELETE');
    expect(res.headers.get('access-control-allow-headers')).toContain('Authorization');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('vary')).toContain('Origin');
  });

  it('refuses other origins, methods and headers', async () => {
    const stranger = await preflight(on, '/api/me', 'https://evil.example.net');
    expect(stranger.status).toBe(403);
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
    expect(((await stranger.json()) as { detail: string }).detail).toContain('CORS_ORIGINS');
    expect((await preflight(on, '/api/me', ALLOWED, 'DELETE')).status).toBe(405);
    expect((await preflight(on, '/api/me', ALLOWED, 'GET', 'x-secret')).status).toBe(403);
    expect((await preflight(on, '/api/nothing-here', ALLOWED)).status).toBe(404);
  });

  it('names the origin on answers and errors, exposing the headers clients read', async () => {
    const ok = await on.api.request('GET', '/api/me', { token: on.adminToken, headers: { origin: ALLOWED } });
    expect(ok.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(ok.headers.get('access-control-expose-headers')).toContain('X-Total-Count');
    expect(ok.headers.get('vary')).toContain('Origin');
    const unauthorized = await on.api.request('GET', '/api/me', { headers: { origin: 'http://localhost:5173' } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const missing = await on.api.request('GET', '/api/nothing-here', { headers: { origin: ALLOWED } });
    expect(missing.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    const stranger = await on.api.request('GET', '/api/me', { token: on.adminToken, headers: { origin: 'https://evil.example.net' } });
    expect(stranger.status).toBe(200);
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('with *, any origin, without Vary: Origin', async () => {
    const res = await preflight(any, '/api/readings', 'https://anything.example.org', 'POST', 'content-type,authorization');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const get = await any.api.request('GET', '/api/me', { token: any.adminToken, headers: { origin: 'https://x.example' } });
    expect(get.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('refuses malformed origins in the configuration', () => {
    expect(() => loadConfig({ CORS_ORIGINS: 'https://ok.example.com,tool.example.com/path' })).toThrow(ConfigError);
    expect(loadConfig({ CORS_ORIGINS: 'https://ok.example.com/' }).corsOrigins).toEqual(['https://ok.example.com']);
    expect(loadConfig({}).corsOrigins).toEqual([]);
  });
});
