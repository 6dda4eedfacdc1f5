// The admin API for meters and registers (codes, virtual definitions, references) and GET /api/meter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient, createOrganization } from '../support/fixtures.ts';
import { batch, createMeter, createRegister, uniqueId } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let admin: string;

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error' });
  admin = t.adminToken;
});
afterAll(() => t?.close());

const registerBody = (meterId: number, extra: Record<string, unknown> = {}) => ({
  externalId: uniqueId('r'),
  name: 'register',
  type: 1,
  measurementType: 1,
  measurementPrefix: 3,
  defaultResolution: 900,
  updateFrequency: 900,
  meterId,
  ...extra,
});

describe('/api/admin/meters', () => {
  it('creates a meter shared by several organizations and replaces it', async () => {
    const a = await createOrganization(t.api, admin);
    const b = await createOrganization(t.api, admin);
    const created = await t.api.post('/api/admin/meters', { externalId: 'MTR-1', name: 'Main meter', type: 1, longitude: '10.75', latitude: '59.91', organizationsIds: [a, b] }, admin);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ externalId: 'MTR-1', type: 1, longitude: '10.75', organizationsIds: [a, b].sort((x, y) => x - y) });
    const replaced = await t.api.put(`/api/admin/meters/${created.body.id}`, { externalId: 'MTR-1', name: 'Renamed', type: 2, organizationsIds: [b] }, admin);
    expect(replaced.body).toMatchObject({ name: 'Renamed', type: 2, organizationsIds: [b], longitude: null });
    expect((await t.api.post('/api/admin/meters', { externalId: 'MTR-1', name: 'dup', type: 1 }, admin)).status).toBe(409);
  });

  it('refuses unknown codes and organizations, and deleting a meter with registers', async () => {
    const badType = await t.api.post('/api/admin/meters', { externalId: uniqueId('m'), name: 'x', type: 42 }, admin);
    expect(badType.status).toBe(400);
    expect(badType.body.errors[0].path).toBe('type');
    const badOrg = await t.api.post('/api/admin/meters', { externalId: uniqueId('m'), name: 'x', type: 1, organizationsIds: [999999] }, admin);
    expect(badOrg.status).toBe(400);
    expect(badOrg.body.errors[0].path).toBe('organizationsIds[0]');
    const meter = await createMeter(t.api, admin, []);
    await createRegister(t.api, admin, meter.id);
    expect((await t.api.delete(`/api/admin/meters/${meter.id}`, admin)).status).toBe(409);
  });
});

describe('/api/admin/registers', () => {
  it('creates registers with known codes only', async () => {
    const meter = await createMeter(t.api, admin, []);
    const ok = await t.api.post('/api/admin/registers', registerBody(meter.id), admin);
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ meterId: meter.id, isVirtual: false, virtualDefinition: null, timeZone: 'UTC' });
    for (const [field, value] of [['type', 9], ['measurementType', 99], ['measurementPrefix', 2]] as const) {
      const res = await t.api.post('/api/admin/registers', registerBody(meter.id, { [field]: value }), admin);
      expect(res.status, field).toBe(400);
      expect(res.body.errors[0].path).toBe(field);
    }
    expect((await t.api.post('/api/admin/registers', registerBody(meter.id, { timeZone: 'Mars/Olympus' }), admin)).body.errors[0].path).toBe('timeZone');
    expect((await t.api.post('/api/admin/registers', registerBody(999999), admin)).body.errors[0].path).toBe('meterId');
  });

  it('validates virtual definitions: expression syntax and names, sources, cycles', async () => {
    const meter = await createMeter(t.api, admin, []);
    const a = await createRegister(t.api, admin, meter.id);
    const b = await createRegister(t.api, admin, meter.id);
    const virtual = (def: Record<string, unknown>) => t.api.post('/api/admin/registers', registerBody(meter.id, { isVirtual: true, virtualDefinition: def }), admin);

    const good = await virtual({ calculationType: 1, expression: 'r0 - 0.5 * r1', sourceRegisters: [a.id, b.id] });
    expect(good.status).toBe(201);
    expect(good.body.virtualDefinition).toMatchObject({ calculationType: 1, expression: 'r0 - 0.5 * r1', sourceRegisters: [a.id, b.id], sumPreviousValues: false });
    expect(typeof good.body.virtualDefinition.id).toBe('number');

    const syntax = await virtual({ calculationType: 1, expression: 'r0 - * r1', sourceRegisters: [a.id, b.id] });
    expect(syntax.status).toBe(400);
    expect(syntax.body.errors[0].path).toBe('virtualDefinition.expression');
    const unknownName = await virtual({ calculationType: 1, expression: 'r0 + r2', sourceRegisters: [a.id, b.id] });
    expect(unknownName.body.errors[0].message).toMatch(/r2/);
    const unknownSource = await virtual({ calculationType: 1, expression: 'r0', sourceRegisters: [999999] });
    expect(unknownSource.body.errors[0].path).toBe('virtualDefinition.sourceRegisters[0]');
    expect((await virtual({ calculationType: 2 })).body.errors[0].path).toBe('virtualDefinition.constant');
    expect((await virtual({ calculationType: 3, sourceRegisters: [a.id] })).body.errors[0].path).toBe('virtualDefinition.baselineAlgorithmType');
    expect((await virtual({ calculationType: 3, baselineAlgorithmType: 99, sourceRegisters: [a.id] })).status).toBe(400);
    expect((await t.api.post('/api/admin/registers', registerBody(meter.id, { isVirtual: true }), admin)).body.errors[0].path).toBe('virtualDefinition');
    expect((await t.api.post('/api/admin/registers', registerBody(meter.id, { virtualDefinition: { calculationType: 2, constant: 1 } }), admin)).status).toBe(400);

    // A cycle: v1 = r0 (a); v2 = v1; then v1 := v2 would loop.
    const v1 = await virtual({ calculationType: 1, expression: 'r0', sourceRegisters: [a.id] });
    const v2 = await virtual({ calculationType: 1, expression: 'r0', sourceRegisters: [v1.body.id] });
    const loop = await t.api.put(`/api/admin/registers/${v1.body.id}`, registerBody(meter.id, { externalId: v1.body.externalId, isVirtual: true, virtualDefinition: { calculationType: 1, expression: 'r0', sourceRegisters: [v2.body.id] } }), admin);
    expect(loop.status).toBe(400);
    expect(loop.body.errors[0].message).toMatch(/cycle/);
    // A source in use cannot be deleted.
    expect((await t.api.delete(`/api/admin/registers/${a.id}`, admin)).status).toBe(409);
  });

  it('keeps a register holding readings from becoming virtual, and deletes its readings with it', async () => {
    const client = await createOrgClient(t.api, admin, { permissions: ['Meter.Organization.ReadWrite'] });
    const meter = await createMeter(t.api, admin, [client.organizationId]);
    const r = await createRegister(t.api, admin, meter.id);
    expect((await t.api.post('/api/readings', batch(meter.externalId, { [r.externalId]: [{ timestamp: '2024-01-01T00:00:00Z', value: 1, resolution: 900 }] }), client.token)).status).toBe(204);
    const toVirtual = await t.api.put(`/api/admin/registers/${r.id}`, registerBody(meter.id, { externalId: r.externalId, isVirtual: true, virtualDefinition: { calculationType: 2, constant: 1 } }), admin);
    expect(toVirtual.status).toBe(409);
    expect((await t.api.delete(`/api/admin/registers/${r.id}`, admin)).status).toBe(204);
    expect(await t.app.timeSeries.hasReadings(r.id)).toBe(false);
  });

  it('stores and returns baseline event days', async () => {
    const meter = await createMeter(t.api, admin, []);
    const r = await createRegister(t.api, admin, meter.id);
    const put = await t.api.put(`/api/admin/registers/${r.id}/event-days`, { days: ['2024-01-03', '2024-01-02'] }, admin);
    expect(put.body).toEqual({ days: ['2024-01-02', '2024-01-03'] });
    expect((await t.api.get(`/api/admin/registers/${r.id}/event-days`, admin)).body.days).toEqual(['2024-01-02', '2024-01-03']);
    expect((await t.api.put(`/api/admin/registers/${r.id}/event-days`, { days: ['2024-13-01'] }, admin)).status).toBe(400);
  });
});

describe('GET /api/meter', () => {
  it('lists the meters shared with the organization and their registers', async () => {
    const client = await createOrgClient(t.api, admin, { permissions: ['Meter.Organization.Read'] });
    const mine = await createMeter(t.api, admin, [client.organizationId]);
    const reg = await createRegister(t.api, admin, mine.id);
    await createMeter(t.api, admin, [await createOrganization(t.api, admin)]);
    const res = await t.api.get(`/api/meter?organizationId=${client.organizationId}`, client.token);
    expect(res.status).toBe(200);
    expect(res.body.meters.map((m: { id: number }) => m.id)).toEqual([mine.id]);
    expect(res.body.registers.map((r: { id: number }) => r.id)).toEqual([reg.id]);
    expect(res.body.meters[0].organizationsIds).toEqual([client.organizationId]);
  });

  it('needs organizationId unless global administrator, and the permission', async () => {
    const client = await createOrgClient(t.api, admin, { permissions: ['Meter.Organization.Read'] });
    const missing = await t.api.get('/api/meter', client.token);
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].path).toBe('query.organizationId');
    const all = await t.api.get('/api/meter', admin);
    expect(all.status).toBe(200);
    expect(all.body.meters.length).toBeGreaterThan(1);
    const other = await createOrgClient(t.api, admin, { permissions: ['Order.Organization.Read'] });
    expect((await t.api.get(`/api/meter?organizationId=${other.organizationId}`, other.token)).status).toBe(403);
  });
});
