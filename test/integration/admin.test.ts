// The admin API: organizations, roles and users (with personal access tokens).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let admin: string;

beforeAll(async () => {
  // AUTH_CACHE_MS=0 so a rotated personal access token is refused on the very next request.
  t = await startTestApp({ AUTH_CACHE_MS: '0' });
  admin = t.adminToken;
});
afterAll(() => t?.close());

describe('/api/admin/organizations', () => {
  it('creates (201 with id), lists, gets, updates and deletes', async () => {
    const created = await t.api.post('/api/admin/organizations', { name: 'Grid Operator A', features: ['Grid', 'Settlements'] }, admin);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Grid Operator A', features: ['Grid', 'Settlements'] });
    expect(Number.isInteger(created.body.id)).toBe(true);
    const id = created.body.id;

    const list = await t.api.get('/api/admin/organizations', admin);
    expect(list.status).toBe(200);
    expect(list.body.map((o: any) => o.id)).toContain(id);

    expect((await t.api.get(`/api/admin/organizations/${id}`, admin)).body.name).toBe('Grid Operator A');

    const updated = await t.api.put(`/api/admin/organizations/${id}`, { name: 'Grid Operator B', features: ['OpenADR'] }, admin);
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id, name: 'Grid Operator B', features: ['OpenADR'] });
    expect(new Date(updated.body.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(created.body.updatedAt).getTime());

    expect((await t.api.delete(`/api/admin/organizations/${id}`, admin)).status).toBe(204);
    expect((await t.api.get(`/api/admin/organizations/${id}`, admin)).status).toBe(404);
    expect((await t.api.delete(`/api/admin/organizations/${id}`, admin)).status).toBe(404);
    expect((await t.api.put(`/api/admin/organizations/${id}`, { name: 'x' }, admin)).status).toBe(404);
  });

  it('refuses unknown features, unknown fields, duplicates and deleting an organization in use', async () => {
    const bad = await t.api.post('/api/admin/organizations', { name: 'X', features: ['Teleport'] }, admin);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ path: 'features[0]' });
    expect(bad.body.errors[0].message).toContain('"Grid"');

    const typo = await t.api.post('/api/admin/organizations', { name: 'X', feature: [] }, admin);
    expect(typo.status).toBe(400);
    expect(typo.body.errors).toContainEqual({ path: 'feature', message: 'is not a known property' });

    expect((await t.api.post('/api/admin/organizations', { name: 'Unique Org' }, admin)).status).toBe(201);
    const dup = await t.api.post('/api/admin/organizations', { name: 'unique org' }, admin);
    expect(dup.status).toBe(409);
    expect(dup.body.type).toBe('urn:flex:error:conflict');

    const org = await t.api.post('/api/admin/organizations', { name: 'In Use' }, admin);
    await t.api.post(`/api/organization/${org.body.id}/client`, { clientName: 'c' }, admin);
    const del = await t.api.delete(`/api/admin/organizations/${org.body.id}`, admin);
    expect(del.status).toBe(409);
    expect((await t.api.get(`/api/admin/organizations/${org.body.id}`, admin)).status).toBe(200);
  });

  it('pages with limit and offset', async () => {
    for (let i = 0; i < 3; i += 1) await t.api.post('/api/admin/organizations', { name: `Paged ${i}` }, admin);
    const all = (await t.api.get('/api/admin/organizations', admin)).body;
    const page = await t.api.get('/api/admin/organizations?limit=2&offset=1', admin);
    expect(page.body.map((o: any) => o.id)).toEqual(all.slice(1, 3).map((o: any) => o.id));
    expect((await t.api.get('/api/admin/organizations?limit=0', admin)).status).toBe(400);
    expect((await t.api.get('/api/admin/organizations?bogus=1', admin)).status).toBe(400);
  });
});

describe('/api/admin/roles', () => {
  it('creates, updates and deletes roles with known permissions only', async () => {
    const created = await t.api.post('/api/admin/roles', { name: 'Meter reader', permissions: ['Meter.Organization.Read'] }, admin);
    expect(created.status).toBe(201);
    expect(created.body.permissions).toEqual(['Meter.Organization.Read']);
    const updated = await t.api.put(`/api/admin/roles/${created.body.id}`, { name: 'Meter writer', permissions: ['Meter.Organization.ReadWrite'] }, admin);
    expect(updated.body).toMatchObject({ name: 'Meter writer', permissions: ['Meter.Organization.ReadWrite'] });
    const bad = await t.api.post('/api/admin/roles', { name: 'Bad', permissions: ['Everything.ReadWrite'] }, admin);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('permissions[0]');
    expect((await t.api.delete(`/api/admin/roles/${created.body.id}`, admin)).status).toBe(204);
  });

  it('refuses to delete a role that is in use', async () => {
    const role = await t.api.post('/api/admin/roles', { name: 'Used role', permissions: [] }, admin);
    const org = await t.api.post('/api/admin/organizations', { name: 'Role user org' }, admin);
    await t.api.post(`/api/organization/${org.body.id}/client`, { clientName: 'c', rolesIds: [role.body.id] }, admin);
    expect((await t.api.delete(`/api/admin/roles/${role.body.id}`, admin)).status).toBe(409);
  });
});

describe('/api/admin/users', () => {
  it('creates a user with a personal access token shown once, and rotates it', async () => {
    const org = await t.api.post('/api/admin/organizations', { name: 'Users org', features: ['OpenADR'] }, admin);
    const role = await t.api.post('/api/admin/roles', { name: 'Org admins', permissions: ['Organization.Organization.ReadWrite'] }, admin);
    const created = await t.api.post('/api/admin/users', { name: 'Ada', organizationId: org.body.id, roleIds: [role.body.id], globalAdmin: false }, admin);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Ada', organizationId: org.body.id, roleIds: [role.body.id], globalAdmin: false });
    expect(created.body.token).toMatch(/^flex_pat_/);
    const got = await t.api.get(`/api/admin/users/${created.body.id}`, admin);
    expect(got.body.token).toBeUndefined();
    expect(JSON.stringify((await t.api.get('/api/admin/users', admin)).body)).not.toContain(created.body.token);

    const probe = `/api/openadr/vtn/credential?organizationId=${org.body.id}`;
    expect((await t.api.get(probe, created.body.token)).status).toBe(200);
    const rotated = await t.api.put(`/api/admin/users/${created.body.id}/token`, undefined, admin);
    expect(rotated.status).toBe(200);
    expect((await t.api.get(probe, created.body.token)).status).toBe(401);
    expect((await t.api.get(probe, rotated.body.token)).status).toBe(200);
  });

  it('makes global administrators, validates organization and roles, protects the bootstrap administrator', async () => {
    const root = await t.api.post('/api/admin/users', { name: 'Root', globalAdmin: true }, admin);
    expect(root.status).toBe(201);
    expect(root.body.organizationId).toBeNull();
    expect((await t.api.get('/api/admin/organizations', root.body.token)).status).toBe(200);

    const noOrg = await t.api.post('/api/admin/users', { name: 'Nobody' }, admin);
    expect(noOrg.status).toBe(400);
    expect(noOrg.body.errors[0].path).toBe('organizationId');
    const unknownOrg = await t.api.post('/api/admin/users', { name: 'Lost', organizationId: 999999 }, admin);
    expect(unknownOrg.status).toBe(400);
    const org = await t.api.post('/api/admin/organizations', { name: 'Roles check org' }, admin);
    const unknownRole = await t.api.post('/api/admin/users', { name: 'Lost', organizationId: org.body.id, roleIds: [999999] }, admin);
    expect(unknownRole.status).toBe(400);
    expect(unknownRole.body.errors[0].path).toBe('roleIds[0]');

    const bootstrap = (await t.api.get('/api/admin/users', admin)).body.find((u: any) => u.name === 'Bootstrap administrator');
    expect(bootstrap.globalAdmin).toBe(true);
    expect((await t.api.delete(`/api/admin/users/${bootstrap.id}`, admin)).status).toBe(409);
  });

  it('answers 401 without a token', async () => {
    expect((await t.api.get('/api/admin/users')).status).toBe(401);
  });
});
