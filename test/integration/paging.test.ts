// Admin lists: the page is a bare array, the total across all pages is X-Total-Count, on every
// paged admin list, documented in the OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  for (let i = 0; i < 5; i += 1) await createOrganization(t.api, t.adminToken);
});
afterAll(() => t?.close());

describe('paged admin lists', () => {
  it('give the total across pages whatever the page', async () => {
    const all = await t.api.get('/api/admin/organizations?limit=10000', t.adminToken);
    const total = all.body.length;
    expect(total).toBeGreaterThanOrEqual(5);
    expect(all.headers.get('x-total-count')).toBe(String(total));
    const page = await t.api.get('/api/admin/organizations?limit=2&offset=1', t.adminToken);
    expect(page.body).toEqual(all.body.slice(1, 3));
    expect(page.headers.get('x-total-count')).toBe(String(total));
    const beyond = await t.api.get(`/api/admin/organizations?offset=${total + 10}`, t.adminToken);
    expect(beyond.body).toEqual([]);
    expect(beyond.headers.get('x-total-count')).toBe(String(total));
  });

  it('count what the filters keep (notifications)', async () => {
    const res = await t.api.get('/api/admin/notifications?state=dead&limit=1', t.adminToken);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe('0');
  });

  it('are documented with the header in the OpenAPI document', async () => {
    const doc = (await t.api.get('/api/openapi.json')).body;
    const paged = Object.entries(doc.paths as Record<string, Record<string, { parameters?: { name: string }[]; responses: Record<string, { headers?: Record<string, unknown> }> }>>).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([method, op]) => method === 'get' && path.startsWith('/api/admin/') && op.parameters?.some((p) => p.name === 'offset'))
        .map(([, op]) => [path, op] as const),
    );
    expect(paged.map(([path]) => path)).toEqual(expect.arrayContaining(['/api/admin/organizations', '/api/admin/meters', '/api/admin/registers', '/api/admin/notifications']));
    for (const [path, op] of paged) expect(op.responses['200']!.headers, path).toHaveProperty('X-Total-Count');
  });
});
