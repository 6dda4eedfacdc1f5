// Market zones, their participants and substations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient, createOrganization } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let operator: Awaited<ReturnType<typeof createOrgClient>>;
let provider: Awaited<ReturnType<typeof createOrgClient>>;
let zoneId: number;

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error' });
  operator = await createOrgClient(t.api, t.adminToken, { features: ['Grid'], permissions: ['Organization.Organization.Read'] });
  provider = await createOrgClient(t.api, t.adminToken, { features: ['Grid'], permissions: ['Organization.Organization.Read'] });
  const res = await t.api.post(
    '/api/admin/zones',
    { name: 'North', timeResolution: 1, orderQuantityResolution: 0.5, organizationIds: [operator.organizationId, provider.organizationId], markets: [{ name: 'Day-ahead' }, { name: 'Intraday' }] },
    t.adminToken,
  );
  expect(res.status).toBe(201);
  zoneId = res.body.id;
});
afterAll(() => t?.close());

describe('market zones', () => {
  it('are created with members and markets, and listed for a member', async () => {
    const zone = (await t.api.get(`/api/admin/zones/${zoneId}`, t.adminToken)).body;
    expect(zone).toMatchObject({ name: 'North', timeResolution: 1, orderQuantityResolution: 0.5, createdBy: 'user:1' });
    expect(zone.markets.map((m: { name: string }) => m.name)).toEqual(['Day-ahead', 'Intraday']);
    const list = await t.api.get(`/api/grid/zone?organizationId=${operator.organizationId}`, operator.token);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([expect.objectContaining({ id: zoneId, name: 'North', organizationIds: [operator.organizationId, provider.organizationId].sort((a, b) => a - b) })]);
    expect(list.body[0].markets).toBeUndefined();
    const outsider = await createOrgClient(t.api, t.adminToken, { features: ['Grid'], permissions: ['Organization.Organization.Read'] });
    expect((await t.api.get(`/api/grid/zone?organizationId=${outsider.organizationId}`, outsider.token)).body).toEqual([]);
    expect((await t.api.get('/api/grid/zone', operator.token)).status).toBe(400);
    expect((await t.api.get('/api/grid/zone', t.adminToken)).body.length).toBeGreaterThanOrEqual(1);
  });

  it('keep market ids when replaced, and refuse unknown codes', async () => {
    const before = (await t.api.get(`/api/admin/zones/${zoneId}`, t.adminToken)).body.markets;
    const updated = await t.api.put(
      `/api/admin/zones/${zoneId}`,
      { name: 'North', timeResolution: 1, orderQuantityResolution: 0.5, organizationIds: [operator.organizationId, provider.organizationId], markets: [{ name: 'Day-ahead' }, { name: 'Intraday' }, { name: 'Balancing' }] },
      t.adminToken,
    );
    expect(updated.status).toBe(200);
    expect(updated.body.markets.slice(0, 2)).toEqual(before);
    expect((await t.api.post('/api/admin/zones', { name: 'Bad', timeResolution: 9, orderQuantityResolution: 1 }, t.adminToken)).body.errors[0].path).toBe('timeResolution');
    expect((await t.api.post('/api/admin/zones', { name: 'Bad', timeResolution: 1, orderQuantityResolution: 0 }, t.adminToken)).status).toBe(400);
  });

  it('list their participants with resources, for members only', async () => {
    const resource = await t.api.post('/api/admin/resources', { organizationId: provider.organizationId, name: 'Heat pumps', type: 1, regulationType: 1, maxQuantity: 40, marketZoneId: zoneId }, t.adminToken);
    expect(resource.status).toBe(201);
    const res = await t.api.get(`/api/grid/zone/${zoneId}/participants?organizationId=${operator.organizationId}`, operator.token);
    expect(res.status).toBe(200);
    const providerEntry = res.body.organizations.find((o: { organizationId: number }) => o.organizationId === provider.organizationId);
    expect(providerEntry.resources).toEqual([{ resourceId: resource.body.id, resourceName: 'Heat pumps' }]);
    expect(res.body.markets.map((m: { name: string }) => m.name)).toContain('Intraday');
    const outsider = await createOrgClient(t.api, t.adminToken, { features: ['Grid'], permissions: ['Organization.Organization.Read'] });
    expect((await t.api.get(`/api/grid/zone/${zoneId}/participants?organizationId=${outsider.organizationId}`, outsider.token)).status).toBe(403);
    expect((await t.api.get(`/api/grid/zone/999999/participants?organizationId=${operator.organizationId}`, operator.token)).status).toBe(404);
    const noGrid = await createOrgClient(t.api, t.adminToken, { features: [], permissions: ['Organization.Organization.Read'] });
    expect((await t.api.get(`/api/grid/zone/${zoneId}/participants?organizationId=${noGrid.organizationId}`, noGrid.token)).status).toBe(403);
  });

  it('have substations owned by a member, with resource impact factors', async () => {
    const resource = (await t.api.post('/api/admin/resources', { organizationId: provider.organizationId, name: 'Battery', type: 3, regulationType: 3, maxQuantity: 100, marketZoneId: zoneId }, t.adminToken)).body;
    const sub = await t.api.post('/api/admin/substations', { organizationId: operator.organizationId, marketZoneId: zoneId, name: 'S1', impacts: [{ resourceId: resource.id, factor: 0.75 }] }, t.adminToken);
    expect(sub.status).toBe(201);
    expect(sub.body.impacts).toEqual([{ resourceId: resource.id, factor: 0.75 }]);
    const stranger = await createOrganization(t.api, t.adminToken);
    expect((await t.api.post('/api/admin/substations', { organizationId: stranger, marketZoneId: zoneId, name: 'S2' }, t.adminToken)).body.errors[0].path).toBe('organizationId');
    expect((await t.api.post('/api/admin/substations', { organizationId: operator.organizationId, marketZoneId: zoneId, name: 'S3', impacts: [{ resourceId: resource.id, factor: 2 }] }, t.adminToken)).status).toBe(400);
  });
});
