// Regression: `GET /api/openadr/3.1.0/auth/server` always answered
// `http://localhost/api/openadr/3.1.0/auth/token` whatever the Host (the Host header never
// reached the handler), so OpenADR 3.1 clients posted their secret to localhost:80 and failed.
// The URL is now the request's Host, X-Forwarded-Proto/Host behind a trusted proxy
// (TRUST_PROXY), or PUBLIC_BASE_URL.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { requestBaseUrl } from '../../src/vtn/v31/v31Routes.ts';
import { V31 } from '../support/openAdrClients.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

it('answers the token URL at the address the client used', async () => {
  const res = await t.api.get(`${V31}/auth/server`);
  expect(res.body.tokenURL).toBe(`${t.url}${V31}/auth/token`);
  const form = { grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'x' };
  // The URL answered is the token endpoint itself: a client following it reaches it.
  expect((await fetch(res.body.tokenURL, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) })).status).toBe(401);
});

it('ignores X-Forwarded-* unless the proxy is trusted, and refuses a Host that is not a host', async () => {
  const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'flex.example.com' };
  expect((await t.api.request('GET', `${V31}/auth/server`, { headers: forwarded })).body.tokenURL).toBe(`${t.url}${V31}/auth/token`);
  // The other configurations, on the function the route uses (no second server needed).
  const host = { host: '127.0.0.1:8080', ...forwarded };
  expect(requestBaseUrl(host, { trustProxy: true })).toBe('https://flex.example.com');
  expect(requestBaseUrl({ host: 'vtn.example.org', 'x-forwarded-proto': 'https, http' }, { trustProxy: true })).toBe('https://vtn.example.org');
  expect(requestBaseUrl(host, { publicBaseUrl: 'https://vtn.example.org' })).toBe('https://vtn.example.org');
  expect(requestBaseUrl({ host: '[::1]:8080' }, {})).toBe('http://[::1]:8080');
  for (const bad of ['evil.example.com/path?', 'a b', '', 'user@host']) expect(() => requestBaseUrl({ host: bad }, {}), bad).toThrow();
  expect(() => requestBaseUrl({}, {})).toThrow();
  expect(loadConfig({ PUBLIC_BASE_URL: 'https://vtn.example.org/' }).publicBaseUrl).toBe('https://vtn.example.org');
  expect(() => loadConfig({ PUBLIC_BASE_URL: 'ftp://x' })).toThrow(/PUBLIC_BASE_URL/);
});
