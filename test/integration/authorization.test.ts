// Authentication (401) and authorization (403) through the one shared check, and the client and
// VTN credential lifecycles with revocation of issued tokens.
import pg from 'pg';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient, createOrganization, createRole, fetchToken } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
const ORG_ADMIN = ['Organization.Organization.ReadWrite'];

beforeAll(async () => {
  // AUTH_CACHE_MS=0: revocation is checked on every request, so the lifecycle test needs no waiting.
  t = await startTestApp({ AUTH_CACHE_MS: '0' });
});
afterAll(() => t?.close());

async function signingKey(): Promise<Uint8Array> {
  const db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  const { rows } = await db.query("SELECT secret FROM signing_keys WHERE id = 'default'");
  await db.end();
  return new Uint8Array(rows[0].secret);
}

describe('401 Unauthorized', () => {
  const path = '/api/openadr/vtn/credential?organizationId=1';

  it('without a token', async () => {
    const res = await t.api.get(path);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(res.body).toMatchObject({ status: 401, type: 'urn:flex:error:unauthorized' });
  });

  it('with a garbage token', async () => {
    for (const token of ['garbage', 'a.b.c', 'flex_pat_not-a-real-token-xxxxxxxxxxxxxxxx']) {
      const res = await t.api.get(path, token);
      expect(res.status).toBe(401);
      expect(res.body.type).toBe('urn:flex:error:invalid_token');
    }
    const basic = await t.api.request('GET', path, { headers: { authorization: 'Basic abc' } });
    expect(basic.status).toBe(401);
  });

  it('with an expired token', async () => {
    const client = await createOrgClient(t.api, t.adminToken, { features: ['OpenADR'], permissions: ORG_ADMIN });
    const expired = await new SignJWT({ org: client.organizationId, typ: 'client', cid: client.id, ver: 1, perm: ORG_ADMIN })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('flex')
      .setSubject(client.clientId)
      .setAudience('flex-api')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 90_000)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(await signingKey());
    const res = await t.api.get(`/api/openadr/vtn/credential?organizationId=${client.organizationId}`, expired);
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/expired/);
    // The same claims, not expired, are accepted: the refusal above is about expiry only.
    const fresh = await new SignJWT({ org: client.organizationId, typ: 'client', cid: client.id, ver: 1, perm: ORG_ADMIN })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('flex')
      .setSubject(client.clientId)
      .setAudience('flex-api')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(await signingKey());
    expect((await t.api.get(`/api/openadr/vtn/credential?organizationId=${client.organizationId}`, fresh)).status).toBe(200);
  });

  it('with a token signed by another key', async () => {
    const forged = await new SignJWT({ org: 1, typ: 'client', cid: 1, ver: 1, perm: ORG_ADMIN })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('flex')
      .setSubject('x')
      .setAudience('flex-api')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('not-the-key-not-the-key-not-the-key'));
    expect((await t.api.get(path, forged)).status).toBe(401);
  });
});

describe('403 Forbidden', () => {
  it('for a missing permission', async () => {
    const reader = await createOrgClient(t.api, t.adminToken, { features: ['OpenADR'], permissions: ['Organization.Organization.Read'] });
    const res = await t.api.post(`/api/organization/${reader.organizationId}/client`, { clientName: 'x', rolesIds: [] }, reader.token);
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain('Organization.Organization.ReadWrite');
  });

  it('for a disabled feature', async () => {
    const noOpenAdr = await createOrgClient(t.api, t.adminToken, { features: ['Grid'], permissions: ORG_ADMIN });
    const res = await t.api.get(`/api/openadr/vtn/credential?organizationId=${noOpenAdr.organizationId}`, noOpenAdr.token);
    expect(res.status).toBe(403);
    expect(res.body.type).toBe('urn:flex:error:feature_disabled');
  });

  it('for another organization', async () => {
    const a = await createOrgClient(t.api, t.adminToken, { features: ['OpenADR'], permissions: ORG_ADMIN });
    const b = await createOrganization(t.api, t.adminToken, ['OpenADR']);
    for (const res of [
      await t.api.get(`/api/openadr/vtn/credential?organizationId=${b}`, a.token),
      await t.api.post(`/api/organization/${b}/client`, { clientName: 'x' }, a.token),
      await t.api.post('/api/openadr/vtn/credential', { organizationId: b, name: 'x', scopes: ['read_all'] }, a.token),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.type).toBe('urn:flex:error:organization_forbidden');
    }
  });

  it('when granting permissions the caller does not hold', async () => {
    const admin = await createOrgClient(t.api, t.adminToken, { permissions: ORG_ADMIN });
    const powerful = await createRole(t.api, t.adminToken, ['Meter.Organization.ReadWrite']);
    const res = await t.api.post(`/api/organization/${admin.organizationId}/client`, { clientName: 'x', rolesIds: [powerful] }, admin.token);
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain('Meter.Organization.ReadWrite');
  });

  it('for the admin API with a client token or a non-administrator user', async () => {
    const admin = await createOrgClient(t.api, t.adminToken, { permissions: ORG_ADMIN });
    expect((await t.api.get('/api/admin/organizations', admin.token)).status).toBe(403);
    const user = await t.api.post('/api/admin/users', { name: 'plain', organizationId: admin.organizationId, roleIds: [admin.roleId] }, t.adminToken);
    expect(user.status).toBe(201);
    expect((await t.api.get('/api/admin/organizations', user.body.token)).status).toBe(403);
    // The user's personal access token works where its role allows.
    expect((await t.api.get(`/api/organization/${admin.organizationId}/client`, user.body.token)).status).toBe(200);
  });
});

describe('organization client lifecycle', () => {
  it('create → token works → rotate → old secret and old token refused → delete → refused', async () => {
    const owner = await createOrgClient(t.api, t.adminToken, { permissions: ORG_ADMIN });
    const org = owner.organizationId;
    const created = await t.api.post(`/api/organization/${org}/client`, { clientName: 'meter gateway', rolesIds: [owner.roleId] }, owner.token);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ organizationId: org, clientName: 'meter gateway', roleIds: [owner.roleId] });
    expect(created.body.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(created.body.hint).toBe(`${created.body.clientSecret.slice(0, 4)}…`);
    const { id, clientId, clientSecret } = created.body;

    const listed = await t.api.get(`/api/organization/${org}/client`, owner.token);
    const entry = listed.body.find((c: any) => c.id === id);
    expect(entry.clientSecret).toBeNull();
    expect(JSON.stringify(listed.body)).not.toContain(clientSecret);

    const oldToken = await fetchToken(t.api, clientId, clientSecret);
    const probe = `/api/organization/${org}/client`;
    expect((await t.api.get(probe, oldToken)).status).toBe(200);

    const rotated = await t.api.put(`/api/organization/${org}/client/${id}/secret`, undefined, owner.token);
    expect(rotated.status).toBe(200);
    expect(rotated.body.clientSecret).not.toBe(clientSecret);
    expect(rotated.body.clientId).toBe(clientId);
    const oldSecret = await t.api.request('POST', '/oauth/token', { form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, audience: 'flex-api' } });
    expect(oldSecret.status).toBe(401);
    expect((await t.api.get(probe, oldToken)).status).toBe(401);

    const newToken = await fetchToken(t.api, clientId, rotated.body.clientSecret);
    expect((await t.api.get(probe, newToken)).status).toBe(200);

    expect((await t.api.delete(`/api/organization/${org}/client/${id}`, owner.token)).status).toBe(204);
    expect((await t.api.get(probe, newToken)).status).toBe(401);
    const afterDelete = await t.api.request('POST', '/oauth/token', { form: { grant_type: 'client_credentials', client_id: clientId, client_secret: rotated.body.clientSecret, audience: 'flex-api' } });
    expect(afterDelete.status).toBe(401);
    expect((await t.api.delete(`/api/organization/${org}/client/${id}`, owner.token)).status).toBe(404);
  });

  it('validates the body and the roles', async () => {
    const owner = await createOrgClient(t.api, t.adminToken, { permissions: ORG_ADMIN });
    const org = owner.organizationId;
    const missing = await t.api.post(`/api/organization/${org}/client`, { rolesIds: [] }, owner.token);
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toContainEqual({ path: 'clientName', message: 'is required' });
    const unknownRole = await t.api.post(`/api/organization/${org}/client`, { clientName: 'x', rolesIds: [999999] }, owner.token);
    expect(unknownRole.status).toBe(400);
    expect(unknownRole.body.errors[0].path).toBe('rolesIds[0]');
    const badId = await t.api.post('/api/organization/abc/client', { clientName: 'x' }, t.adminToken);
    expect(badId.status).toBe(400);
    expect((await t.api.post('/api/organization/999999/client', { clientName: 'x' }, t.adminToken)).status).toBe(404);
    expect((await t.api.put(`/api/organization/${org}/client/999999/secret`, undefined, owner.token)).status).toBe(404);
  });

  it('revokes tokens of clients whose role loses permissions', async () => {
    const owner = await createOrgClient(t.api, t.adminToken, { permissions: ORG_ADMIN });
    const probe = `/api/organization/${owner.organizationId}/client`;
    expect((await t.api.get(probe, owner.token)).status).toBe(200);
    const changed = await t.api.put(`/api/admin/roles/${owner.roleId}`, { name: 'reduced', permissions: ['Organization.Organization.Read'] }, t.adminToken);
    expect(changed.status).toBe(200);
    expect((await t.api.get(probe, owner.token)).status).toBe(401);
    const reissued = await fetchToken(t.api, owner.clientId, owner.clientSecret);
    expect((await t.api.get(probe, reissued)).status).toBe(403);
  });
});

describe('VTN credential lifecycle', () => {
  it('create → list without secret → token with scopes → rotate → delete', async () => {
    const owner = await createOrgClient(t.api, t.adminToken, { features: ['OpenADR'], permissions: ORG_ADMIN });
    const org = owner.organizationId;
    const created = await t.api.post('/api/openadr/vtn/credential', { organizationId: org, name: 'ven-1', scopes: ['read_all', 'write_reports'] }, owner.token);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ organizationId: org, clientName: 'ven-1', scopes: ['read_all', 'write_reports'] });
    expect(created.body.clientSecret).toHaveLength(43);
    const { id, clientId, clientSecret } = created.body;

    const list = await t.api.get(`/api/openadr/vtn/credential?organizationId=${org}`, owner.token);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([expect.objectContaining({ id, clientId, clientSecret: null, scopes: ['read_all', 'write_reports'] })]);

    const tokenRes = await t.api.request('POST', '/oauth/token', { form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, audience: 'flex-api' } });
    expect(tokenRes.status).toBe(200);
    expect(tokenRes.body.scope).toBe('read_all write_reports');
    const narrowed = await fetchToken(t.api, clientId, clientSecret, { scope: 'read_all' });
    const claims = JSON.parse(Buffer.from(narrowed.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({ typ: 'vtn', scope: 'read_all', org });
    // A VTN token carries scopes, not permissions: it cannot manage credentials.
    expect((await t.api.get(`/api/openadr/vtn/credential?organizationId=${org}`, tokenRes.body.access_token)).status).toBe(403);

    const rotated = await t.api.put(`/api/openadr/vtn/credential/${id}/secret?organizationId=${org}`, undefined, owner.token);
    expect(rotated.status).toBe(200);
    expect(rotated.body.clientSecret).not.toBe(clientSecret);
    const stale = await t.api.request('POST', '/oauth/token', { form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, audience: 'flex-api' } });
    expect(stale.status).toBe(401);

    expect((await t.api.delete(`/api/openadr/vtn/credential/${id}?organizationId=${org}`, owner.token)).status).toBe(204);
    expect((await t.api.delete(`/api/openadr/vtn/credential/${id}?organizationId=${org}`, owner.token)).status).toBe(404);
    expect((await t.api.get(`/api/openadr/vtn/credential?organizationId=${org}`, owner.token)).body).toEqual([]);
  });

  it('requires the OpenADR feature, known scopes and the organizationId', async () => {
    const noFeature = await createOrgClient(t.api, t.adminToken, { features: [], permissions: ORG_ADMIN });
    const refused = await t.api.post('/api/openadr/vtn/credential', { organizationId: noFeature.organizationId, name: 'x', scopes: ['read_all'] }, noFeature.token);
    expect(refused.status).toBe(403);
    expect(refused.body.type).toBe('urn:flex:error:feature_disabled');

    const owner = await createOrgClient(t.api, t.adminToken, { features: ['OpenADR'], permissions: ORG_ADMIN });
    const badScope = await t.api.post('/api/openadr/vtn/credential', { organizationId: owner.organizationId, name: 'x', scopes: ['root'] }, owner.token);
    expect(badScope.status).toBe(400);
    expect(badScope.body.errors[0].path).toBe('scopes[0]');
    const noOrg = await t.api.get('/api/openadr/vtn/credential', owner.token);
    expect(noOrg.status).toBe(400);
    expect(noOrg.body.errors).toContainEqual({ path: 'query.organizationId', message: 'is required' });
    const otherOrgsCredential = await t.api.delete(`/api/openadr/vtn/credential/1?organizationId=${owner.organizationId}`, owner.token);
    expect(otherOrgsCredential.status).toBe(404);
  });
});

describe('revocation with the default cache', () => {
  it('stops a deleted client’s tokens within AUTH_CACHE_MS', async () => {
    const cached = await startTestApp({ AUTH_CACHE_MS: '300' });
    try {
      const owner = await createOrgClient(cached.api, cached.adminToken, { permissions: ORG_ADMIN });
      const probe = `/api/organization/${owner.organizationId}/client`;
      expect((await cached.api.get(probe, owner.token)).status).toBe(200);
      expect((await cached.api.delete(`/api/organization/${owner.organizationId}/client/${owner.id}`, cached.adminToken)).status).toBe(204);
      // Once AUTH_CACHE_MS has passed the token is refused (a loaded machine waiting longer can
      // only make that surer: no upper bound on time is asserted).
      await new Promise((resolve) => setTimeout(resolve, 300 + 50));
      expect((await cached.api.get(probe, owner.token)).status).toBe(401);
    } finally {
      await cached.close();
    }
  });
});
