// Regression: U+0000 in any text field answered 500 on 32 routes (22021
// "invalid byte sequence for encoding UTF8: 0x00" from PostgreSQL): admin creates and updates,
// client and credential names, meter/register ids in POST /api/readings, VTN names, target
// values and list filters. Now every such request is a 400 naming the field, and stores nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../support/fixtures.ts';
import { createMeter, createRegister } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, VTN, vtnClient, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
let organizationId: number;

beforeAll(async () => {
  t = await startTestApp();
  bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
  organizationId = await createOrganization(t.api, t.adminToken, ['Grid', 'OpenADR']);
});
afterAll(() => t?.close());

const NUL = '\u0000';

function expectFieldError(res: { status: number; text: string; body: any }, path: string) {
  expect(res.status, res.text).toBe(400);
  expect(res.body.errors, res.text).toContainEqual({ path, message: expect.stringContaining('U+0000') });
}

describe('U+0000 in text', () => {
  it('is refused in admin creates and updates', async () => {
    expectFieldError(await t.api.post('/api/admin/organizations', { name: `a${NUL}b`, features: [] }, t.adminToken), 'name');
    expectFieldError(await t.api.put(`/api/admin/organizations/${organizationId}`, { name: `a${NUL}b`, features: [] }, t.adminToken), 'name');
    expectFieldError(await t.api.post('/api/admin/roles', { name: NUL, permissions: [] }, t.adminToken), 'name');
    expectFieldError(await t.api.post('/api/admin/users', { name: `u${NUL}` }, t.adminToken), 'name');
    const orgs = await t.api.get('/api/admin/organizations', t.adminToken);
    expect(orgs.body.some((o: any) => String(o.name).includes(NUL))).toBe(false);
  });

  it('is refused in client and credential names', async () => {
    expectFieldError(await t.api.post(`/api/organization/${organizationId}/client`, { clientName: `c${NUL}`, rolesIds: [] }, t.adminToken), 'clientName');
    expectFieldError(await t.api.post('/api/openadr/vtn/credential', { organizationId, name: `n${NUL}`, scopes: ['read_all'] }, t.adminToken), 'name');
  });

  it('is refused in meter and register ids of POST /api/readings', async () => {
    const meter = await createMeter(t.api, t.adminToken, [organizationId]);
    await createRegister(t.api, t.adminToken, meter.id);
    const values = [{ timestamp: '2024-01-01T00:00:00Z', value: 1, resolution: 900 }];
    expectFieldError(await t.api.post('/api/readings', { meters: [{ id: `m${NUL}`, registers: [{ id: 'r', values }] }] }, t.adminToken), 'meters[0].id');
    expectFieldError(await t.api.post('/api/readings', { meters: [{ id: meter.externalId, registers: [{ id: `r${NUL}`, values }] }] }, t.adminToken), 'meters[0].registers[0].id');
  });

  it('is refused in VTN names, target values and list filters', async () => {
    expectFieldError(await t.api.post(`${VTN}/vens`, { venName: `v${NUL}` }, bl.token), 'venName');
    expectFieldError(await t.api.post(`${VTN}/programs`, { programName: 'p', targets: [{ type: 'GROUP', values: [NUL] }] }, bl.token), 'targets[0].values[0]');
    expectFieldError(await t.api.get(`${VTN}/vens?venName=%00`, bl.token), 'query.venName');
    expectFieldError(await t.api.get(`${VTN}/programs?targetType=GROUP&targetValues=a%00`, bl.token), 'query.targetValues[0]');
    expectFieldError(await t.api.get(`${VTN}/reports?clientName=%00`, bl.token), 'query.clientName');
  });

  it('is refused in the token request, form or HTTP Basic', async () => {
    const form = await t.api.request('POST', '/oauth/token', { form: { grant_type: 'client_credentials', client_id: `x${NUL}`, client_secret: 's', audience: 'flex-api' } });
    expect(form.status, form.text).toBeGreaterThanOrEqual(400);
    expect(form.status, form.text).toBeLessThan(500);
    const basic = await t.api.request('POST', '/oauth/token', {
      form: { grant_type: 'client_credentials', audience: 'flex-api' },
      headers: { authorization: `Basic ${Buffer.from('x%00y:secret').toString('base64')}` },
    });
    expect(basic.status, basic.text).toBeGreaterThanOrEqual(400);
    expect(basic.status, basic.text).toBeLessThan(500);
  });
});
