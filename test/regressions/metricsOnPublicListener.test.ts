// Regression: GET /metrics was public on the API listener: routes and statuses, the 401 and 429
// counts of the token endpoint, the database pool's state and the VTN's backlog, to anyone. It now
// needs METRICS_TOKEN or a global administrator's token there; METRICS_PORT serves it without a
// token on a listener of its own (loopback by default).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const METRICS_TOKEN = `metrics-${'s'.repeat(40)}`;
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ METRICS_TOKEN, METRICS_PORT: '0' });
});
afterAll(() => t?.close());

describe('GET /metrics', () => {
  it('on the API listener: 401 without a token, 403 for an organization client, 200 for METRICS_TOKEN and administrators', async () => {
    const anonymous = await t.api.get('/metrics');
    expect(anonymous.status).toBe(401);
    expect(anonymous.text).not.toContain('http_requests_total');
    expect((await t.api.get('/metrics', 'not-the-token')).status).toBe(401);
    const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Organization.Organization.ReadWrite'] });
    expect((await t.api.get('/metrics', client.token)).status).toBe(403);
    const scraper = await t.api.get('/metrics', METRICS_TOKEN);
    expect(scraper.status).toBe(200);
    expect(scraper.text).toContain('http_requests_total');
    expect((await t.api.get('/metrics', t.adminToken)).status).toBe(200);
  });

  it('on METRICS_PORT: served without a token, and nothing else', async () => {
    expect(t.app.metricsPort).toBeGreaterThan(0);
    const res = await fetch(`http://127.0.0.1:${t.app.metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('http_requests_total');
    expect((await fetch(`http://127.0.0.1:${t.app.metricsPort}/health`)).status).toBe(404);
  });
});
