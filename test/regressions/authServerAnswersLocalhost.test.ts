// Regression: `GET /api/openadr/3.1.0/auth/server` always answered
// `http://localhost/api/openadr/3.1.0/auth/token` whatever the Host (the Host header never
// reached the handler), so OpenADR 3.1 clients posted their secret to localhost:80 and failed.
// The URL is now the request's Host, X-Forwarded-Proto/Host behind a trusted proxy
// (TRUST_PROXY), or PUBLIC_BASE_URL.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { V31 } from '../support/openAdrClients.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const apps: TestApp[] = [];
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  apps.push(t);
});
afterAll(async () => {
  for (const app of apps) await app.close();
});

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
  const trusting = await startTestApp({ TRUST_PROXY: 'true' });
  apps.push(trusting);
  expect((await trusting.api.request('GET', `${V31}/auth/server`, { headers: forwarded })).body.tokenURL).toBe(`https://flex.example.com${V31}/auth/token`);
  const configured = await startTestApp({ PUBLIC_BASE_URL: 'https://vtn.example.org/' });
  apps.push(configured);
  expect((await configured.api.get(`${V31}/auth/server`)).body.tokenURL).toBe(`https://vtn.example.org${V31}/auth/token`);
  const bad = await trusting.api.request('GET', `${V31}/auth/server`, { headers: { 'x-forwarded-host': 'evil.example.com/path?' } });
  expect(bad.status).toBe(400);
});
