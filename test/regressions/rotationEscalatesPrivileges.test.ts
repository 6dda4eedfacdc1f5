// Regression: creating an organization client was limited to roles whose permissions the caller
// holds, but rotating or deleting one was not: a client holding only
// Organization.Organization.ReadWrite rotated a trader's client (PUT …/client/{id}/secret) → 200
// with the new secret → a token with Meter…ReadWrite and Order…ReadWrite. Rotating and deleting
// now follow the creation rule (or a global administrator), VTN credentials keep one rule for all
// three, and every create, rotate and delete of a credential is in the audit log administrators
// read (who, when, which; never the secret).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, createRole, fetchToken } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let org: number;
let trader: { id: number; clientId: string; clientSecret: string };
let orgAdmin: { id: number; clientId: string; token: string };
let orgAdminRole: number;

async function client(roleIds: number[], token = t.adminToken) {
  const res = await t.api.post(`/api/organization/${org}/client`, { clientName: `c${roleIds.join('-')}`, rolesIds: roleIds }, token);
  expect(res.status).toBe(200);
  return res.body as { id: number; clientId: string; clientSecret: string };
}

beforeAll(async () => {
  t = await startTestApp();
  org = await createOrganization(t.api, t.adminToken, ['OpenADR']);
  orgAdminRole = await createRole(t.api, t.adminToken, ['Organization.Organization.ReadWrite']);
  const traderRole = await createRole(t.api, t.adminToken, ['Meter.Organization.ReadWrite', 'Order.Organization.ReadWrite']);
  trader = await client([traderRole]);
  const admin = await client([orgAdminRole]);
  orgAdmin = { ...admin, token: await fetchToken(t.api, admin.clientId, admin.clientSecret) };
});
afterAll(() => t?.close());

describe('rotating and deleting organization clients', () => {
  it('are refused over a client whose roles grant what the caller does not hold', async () => {
    const rotate = await t.api.put(`/api/organization/${org}/client/${trader.id}/secret`, undefined, orgAdmin.token);
    expect(rotate.status).toBe(403);
    expect(rotate.text).not.toMatch(/clientSecret/);
    expect((await t.api.delete(`/api/organization/${org}/client/${trader.id}`, orgAdmin.token)).status).toBe(403);
    // The trader's secret still works.
    await fetchToken(t.api, trader.clientId, trader.clientSecret);
  });

  it('are allowed over clients within the caller’s permissions, and to global administrators', async () => {
    const peer = await client([orgAdminRole], orgAdmin.token);
    expect((await t.api.put(`/api/organization/${org}/client/${peer.id}/secret`, undefined, orgAdmin.token)).status).toBe(200);
    expect((await t.api.delete(`/api/organization/${org}/client/${peer.id}`, orgAdmin.token)).status).toBe(204);
    expect((await t.api.put(`/api/organization/${org}/client/${trader.id}/secret`, undefined, t.adminToken)).status).toBe(200);
  });
});

describe('VTN credentials', () => {
  it('are created, rotated and deleted under one rule', async () => {
    const created = await t.api.post('/api/openadr/vtn/credential', { organizationId: org, name: 'ven', scopes: ['read_all', 'write_reports'] }, orgAdmin.token);
    expect(created.status).toBe(200);
    const reader = await client([await createRole(t.api, t.adminToken, ['Organization.Organization.Read'])]);
    const readerToken = await fetchToken(t.api, reader.clientId, reader.clientSecret);
    const id = created.body.id;
    for (const [method, path] of [
      ['POST', '/api/openadr/vtn/credential'],
      ['PUT', `/api/openadr/vtn/credential/${id}/secret?organizationId=${org}`],
      ['DELETE', `/api/openadr/vtn/credential/${id}?organizationId=${org}`],
    ] as const) {
      const res = await t.api.request(method, path, { token: readerToken, json: method === 'POST' ? { organizationId: org, name: 'x', scopes: ['read_all'] } : undefined });
      expect([method, res.status]).toEqual([method, 403]);
    }
    expect((await t.api.put(`/api/openadr/vtn/credential/${id}/secret?organizationId=${org}`, undefined, orgAdmin.token)).status).toBe(200);
    expect((await t.api.delete(`/api/openadr/vtn/credential/${id}?organizationId=${org}`, orgAdmin.token)).status).toBe(204);
  });
});

describe('the credential audit log', () => {
  it('shows who created, rotated and deleted which credential, never a secret, to administrators only', async () => {
    const user = await t.api.post('/api/admin/users', { name: 'audited user', organizationId: org }, t.adminToken);
    expect((await t.api.put(`/api/admin/users/${user.body.id}/token`, undefined, t.adminToken)).status).toBe(200);
    expect((await t.api.delete(`/api/admin/users/${user.body.id}`, t.adminToken)).status).toBe(204);

    expect((await t.api.get('/api/admin/credential-events', orgAdmin.token)).status).toBe(403);
    const res = await t.api.get(`/api/admin/credential-events?organizationId=${org}&limit=100`, t.adminToken);
    expect(res.status).toBe(200);
    const events = res.body as { action: string; credentialKind: string; credentialName: string; actor: string; requestId: string; at: string }[];
    const seen = new Set(events.map((e) => `${e.credentialKind}:${e.action}`));
    for (const kind of ['organization_client', 'vtn_credential', 'personal_access_token']) for (const action of ['create', 'rotate', 'delete']) expect(seen).toContain(`${kind}:${action}`);
    const refused = events.filter((e) => e.credentialName === trader.clientId && e.actor === orgAdmin.clientId);
    expect(refused).toEqual([]);
    const peerCreate = events.find((e) => e.credentialKind === 'organization_client' && e.action === 'create' && e.actor === orgAdmin.clientId);
    expect(peerCreate?.requestId).toBeTruthy();
    expect(Number(res.headers.get('x-total-count'))).toBe(events.length);
    expect(res.text).not.toContain(trader.clientSecret);
    expect(res.text).not.toMatch(/secret|hint|flex_pat_/i);
  });
});
