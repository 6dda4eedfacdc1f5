// The general per-client quota (RATE_LIMIT_API_PER_MINUTE) on ordinary API routes: headers on
// every response to an OAuth client, 429 with Retry-After and a text body, PAT users exempt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_API_PER_MINUTE: '3' });
});
afterAll(() => t?.close());

describe('RATE_LIMIT_API_PER_MINUTE', () => {
  it('limits an OAuth client on any authenticated route and says so in headers and text', async () => {
    const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Organization.Organization.Read'] });
    const seen: { status: number; remaining: string | null; limit: string | null; reset: string | null }[] = [];
    let last;
    for (let i = 0; i < 10 && last?.status !== 429; i += 1) {
      last = await t.api.get('/api/me', client.token);
      seen.push({ status: last.status, remaining: last.headers.get('x-rate-limit-remaining'), limit: last.headers.get('x-rate-limit-limit'), reset: last.headers.get('x-rate-limit-reset') });
    }
    expect(seen[0]).toMatchObject({ status: 200, limit: '3', remaining: '2' });
    expect(seen[0]!.reset).toMatch(/Z$/);
    expect(last!.status).toBe(429);
    expect(last!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(last!.text).toMatch(/^Rate limit exceeded: quota "api" allows 3 requests per minute\. Retry after \d+ seconds?\.\n$/);
  });

  it('leaves personal access token users unrestricted and without headers', async () => {
    for (let i = 0; i < 6; i += 1) {
      const res = await t.api.get('/api/me', t.adminToken);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-rate-limit-limit')).toBeNull();
    }
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = (await t.api.get('/api/openapi.json')).body;
    expect(doc.paths['/api/me'].get.responses['429']).toBeDefined();
  });
});
