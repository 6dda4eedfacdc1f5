// Grid resources: admin API, GET /api/grid/resource, reference readings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient } from '../support/fixtures.ts';
import { createMeter, createRegister, readingsUrl } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let provider: Awaited<ReturnType<typeof createOrgClient>>;
let actual: { id: number };
let reference: { id: number };
let zone: number;
let otherZone: number;

const resourceBody = (organizationId: number, extra: Record<string, unknown> = {}) => ({
  organizationId,
  name: 'Battery 1',
  type: 3,
  regulationType: 3,
  maxQuantity: 250,
  actualRegisterId: actual.id,
  referenceRegisterId: reference.id,
  allowedProducts: [1, 2],
  pods: [{ podId: 'POD-1', name: 'Main connection', description: null }],
  marketZoneId: zone,
  ...extra,
});

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error' });
  provider = await createOrgClient(t.api, t.adminToken, { features: ['Grid'], permissions: ['Resource.Organization.Read', 'Planning.Organization.ReadWrite', 'Meter.Organization.Read'] });
  const meter = await createMeter(t.api, t.adminToken, [provider.organizationId]);
  actual = await createRegister(t.api, t.adminToken, meter.id);
  reference = await createRegister(t.api, t.adminToken, meter.id);
  zone = (await t.api.post('/api/admin/zones', { name: 'Zone A', timeResolution: 1, orderQuantityResolution: 0.1, organizationIds: [provider.organizationId] }, t.adminToken)).body.id;
  otherZone = (await t.api.post('/api/admin/zones', { name: 'Zone B', timeResolution: 1, orderQuantityResolution: 0.1 }, t.adminToken)).body.id;
});
afterAll(() => t?.close());

describe('grid resources', () => {
  it('are created by administrators with every field and listed for their organization', async () => {
    const created = await t.api.post('/api/admin/resources', resourceBody(provider.organizationId, { connectedAt: '2023-06-01T00:00:00Z', endurance: 3600, cooldown: 900 }), t.adminToken);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      organizationId: provider.organizationId,
      name: 'Battery 1',
      type: 3,
      regulationType: 3,
      maxQuantity: 250,
      useZeroReference: false,
      allowedProducts: [1, 2],
      pods: [{ podId: 'POD-1', name: 'Main connection', description: null }],
      connectedAt: '2023-06-01T00:00:00.000Z',
      endurance: 3600,
      createdBy: 'user:1',
      marketZoneId: zone,
    });
    const list = await t.api.get(`/api/grid/resource?organizationId=${provider.organizationId}`, provider.token);
    expect(list.status).toBe(200);
    expect(list.body.map((r: { id: number }) => r.id)).toEqual([created.body.id]);
    expect((await t.api.get(`/api/grid/resource?organizationId=${provider.organizationId}&marketZoneId=${otherZone}`, provider.token)).body).toEqual([]);
    expect((await t.api.get(`/api/grid/resource?organizationId=${provider.organizationId}&marketZoneId=${zone}`, provider.token)).body).toHaveLength(1);
  });

  it('refuse unknown codes, registers and duplicate pods', async () => {
    expect((await t.api.post('/api/admin/resources', resourceBody(provider.organizationId, { type: 99 }), t.adminToken)).body.errors[0].path).toBe('type');
    expect((await t.api.post('/api/admin/resources', resourceBody(provider.organizationId, { allowedProducts: [9] }), t.adminToken)).body.errors[0].path).toBe('allowedProducts[0]');
    expect((await t.api.post('/api/admin/resources', resourceBody(provider.organizationId, { actualRegisterId: 999999 }), t.adminToken)).body.errors[0].path).toBe('actualRegisterId');
    const dupPods = await t.api.post('/api/admin/resources', resourceBody(provider.organizationId, { pods: [{ podId: 'A', name: 'a' }, { podId: 'A', name: 'b' }] }), t.adminToken);
    expect(dupPods.body.errors[0].path).toBe('pods[1].podId');
  });

  it('GET needs the Grid feature and organizationId', async () => {
    const noGrid = await createOrgClient(t.api, t.adminToken, { features: [], permissions: ['Resource.Organization.Read'] });
    expect((await t.api.get(`/api/grid/resource?organizationId=${noGrid.organizationId}`, noGrid.token)).status).toBe(403);
    expect((await t.api.get('/api/grid/resource', provider.token)).status).toBe(400);
  });

  it('stores reference readings in the resource’s reference register', async () => {
    const resource = (await t.api.post('/api/admin/resources', resourceBody(provider.organizationId), t.adminToken)).body;
    const readings = [
      { timestamp: '2024-06-01T00:15:00Z', value: 5, resolution: 900 },
      { timestamp: '2024-06-01T00:00:00Z', value: 4, resolution: 900 },
      { timestamp: '2024-06-01T00:15:00Z', value: 6, resolution: 900 },
    ];
    const res = await t.api.post(`/api/grid/resource/${resource.id}/readings/reference`, { organizationId: provider.organizationId, readings }, provider.token);
    expect(res.status).toBe(204);
    const stored = await t.api.get(readingsUrl(provider.organizationId, [reference.id], '2024-06-01T00:00:00Z', '2024-06-02T00:00:00Z'), provider.token);
    expect(stored.body[0].readings.map((r: { value: number }) => r.value)).toEqual([4, 6]);

    const bad = await t.api.post(`/api/grid/resource/${resource.id}/readings/reference`, { organizationId: provider.organizationId, readings: [{ timestamp: '2024-06-01T00:00:00+02:00', value: 1, resolution: 900 }] }, provider.token);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('readings[0].timestamp');
    const other = await createOrgClient(t.api, t.adminToken, { features: ['Grid'], permissions: ['Planning.Organization.ReadWrite'] });
    expect((await t.api.post(`/api/grid/resource/${resource.id}/readings/reference`, { organizationId: other.organizationId, readings }, other.token)).status).toBe(404);
    expect((await t.api.post(`/api/grid/resource/${resource.id}/readings/reference`, { organizationId: provider.organizationId, readings }, other.token)).status).toBe(403);
    const noRef = (await t.api.post('/api/admin/resources', resourceBody(provider.organizationId, { referenceRegisterId: null, useZeroReference: true }), t.adminToken)).body;
    expect((await t.api.post(`/api/grid/resource/${noRef.id}/readings/reference`, { organizationId: provider.organizationId, readings }, provider.token)).status).toBe(409);
  });

  it('refuses registers that do not exist or are virtual where readings must be measured', async () => {
    const meter = await createMeter(t.api, t.adminToken, [provider.organizationId]);
    const computed = await createRegister(t.api, t.adminToken, meter.id, { isVirtual: true, virtualDefinition: { calculationType: 2, constant: 1 } });
    const missing = 2_000_000_000;
    const refusal = async (extra: Record<string, unknown>) => {
      const res = await t.api.post('/api/admin/resources', resourceBody(provider.organizationId, extra), t.adminToken);
      expect(res.status, res.text).toBe(400);
      return res.body.errors.map((e: { path: string; message: string }) => `${e.path}: ${e.message}`);
    };
    expect(await refusal({ actualRegisterId: computed.id })).toEqual(['actualRegisterId: must be a register with measured readings, not a virtual one']);
    expect(await refusal({ actualRegisterId: missing, referenceRegisterId: missing })).toEqual([`actualRegisterId: register ${missing} does not exist`, `referenceRegisterId: register ${missing} does not exist`]);
    // A virtual reference register is allowed (a computed reference), but readings cannot be stored in it.
    const created = await t.api.post('/api/admin/resources', resourceBody(provider.organizationId, { referenceRegisterId: computed.id }), t.adminToken);
    expect(created.status, created.text).toBe(201);
    const readings = [{ timestamp: '2024-06-01T00:00:00Z', value: 1, resolution: 900 }];
    const res = await t.api.post(`/api/grid/resource/${created.body.id}/readings/reference`, { organizationId: provider.organizationId, readings }, provider.token);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('is virtual');
  });

  it('keeps a register used by a resource from being deleted', async () => {
    expect((await t.api.delete(`/api/admin/registers/${actual.id}`, t.adminToken)).status).toBe(409);
  });
});
