// POST /oauth/token: success, every RFC 6749 error, HTTP Basic, and the rate limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient, type OrgClient } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let client: OrgClient;

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_TOKEN_PER_MINUTE: '1000', RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE: '1000' });
  client = await createOrgClient(t.api, t.adminToken, { features: ['Grid'], permissions: ['Organization.Organization.Read'] });
});
afterAll(() => t?.close());

const token = (form: Record<string, string>, headers: Record<string, string> = {}) => t.api.request('POST', '/oauth/token', { form, headers });
const valid = () => ({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, audience: 'flex-api' });

function expectOAuthError(res: { status: number; headers: Headers; body: any }, status: number, error: string) {
  expect(res.status).toBe(status);
  expect(res.body.error).toBe(error);
  expect(typeof res.body.error_description).toBe('string');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  // RFC 7807 members ride along.
  expect(res.body.status).toBe(status);
  expect(res.body.type).toBe('urn:flex:error:oauth_error');
}

describe('POST /oauth/token', () => {
  it('issues a Bearer token valid for 86400 seconds', async () => {
    const res = await token(valid());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 86400 });
    expect(res.body.access_token.split('.')).toHaveLength(3);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const claims = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ org: client.organizationId, sub: client.clientId, aud: 'flex-api', typ: 'client', perm: ['Organization.Organization.Read'] });
    expect(claims.exp - claims.iat).toBe(86400);
    const use = await t.api.get(`/api/organization/${client.organizationId}/client`, res.body.access_token);
    expect(use.status).toBe(403); // authenticated, but Read does not allow managing clients
  });

  it('accepts HTTP Basic client authentication (form-urlencoded parts)', async () => {
    const basic = Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64');
    const res = await token({ grant_type: 'client_credentials', audience: 'flex-api' }, { authorization: `Basic ${basic}` });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
  });

  it('refuses two client authentication methods at once', async () => {
    const basic = Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64');
    expectOAuthError(await token(valid(), { authorization: `Basic ${basic}` }), 400, 'invalid_request');
  });

  it.each(['grant_type', 'client_id', 'client_secret', 'audience'])('answers invalid_request when %s is missing', async (field) => {
    const form: Record<string, string> = valid();
    delete form[field];
    const res = await token(form);
    expectOAuthError(res, 400, 'invalid_request');
    expect(res.body.error_description).toContain(field);
  });

  it('answers unsupported_grant_type for other grants', async () => {
    expectOAuthError(await token({ ...valid(), grant_type: 'password' }), 400, 'unsupported_grant_type');
  });

  it('answers invalid_client for a wrong secret and an unknown client', async () => {
    expectOAuthError(await token({ ...valid(), client_secret: 'wrong-secret' }), 401, 'invalid_client');
    expectOAuthError(await token({ ...valid(), client_id: 'oc_unknown' }), 401, 'invalid_client');
  });

  it('answers invalid_client with a Basic challenge when Basic credentials are wrong', async () => {
    const basic = Buffer.from(`${client.clientId}:nope`).toString('base64');
    const res = await token({ grant_type: 'client_credentials', audience: 'flex-api' }, { authorization: `Basic ${basic}` });
    expectOAuthError(res, 401, 'invalid_client');
    expect(res.headers.get('www-authenticate')).toContain('Basic');
  });

  it('answers invalid_target for an unknown audience', async () => {
    expectOAuthError(await token({ ...valid(), audience: 'someone-else' }), 400, 'invalid_target');
  });

  it('answers invalid_scope for a scope the client does not hold, and narrows to a held one', async () => {
    expectOAuthError(await token({ ...valid(), scope: 'Order.Organization.ReadWrite' }), 400, 'invalid_scope');
    const ok = await token({ ...valid(), scope: 'Organization.Organization.Read' });
    expect(ok.status).toBe(200);
    expect(ok.body.scope).toBe('Organization.Organization.Read');
  });

  it('answers invalid_request for a JSON body (the endpoint takes a form)', async () => {
    const res = await t.api.request('POST', '/oauth/token', { json: valid() });
    expectOAuthError(res, 400, 'invalid_request');
  });

  it('answers invalid_request for a repeated parameter', async () => {
    const res = await t.api.request('POST', '/oauth/token', {
      body: 'grant_type=client_credentials&grant_type=client_credentials&client_id=a&client_secret=b&audience=flex-api',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectOAuthError(res, 400, 'invalid_request');
  });
});

describe('token endpoint rate limit', () => {
  let limited: TestApp;
  let c: OrgClient;
  beforeAll(async () => {
    limited = await startTestApp({ RATE_LIMIT_TOKEN_PER_MINUTE: '3', RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE: '2' });
    c = await createOrgClient(limited.api, limited.adminToken, { permissions: ['Organization.Organization.Read'] });
  });
  afterAll(() => limited?.close());

  it('limits per client_id with headers, then 429 with Retry-After and a plain-text body', async () => {
    const form = { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret, audience: 'flex-api' };
    // createOrgClient used one request of the quota already. Windows are fixed minutes, so a
    // boundary may reset the count once: keep asking until refused.
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 10 && last?.status !== 429; i += 1) {
      last = await limited.api.request('POST', '/oauth/token', { form });
      statuses.push(last.status);
      if (last.status === 200) {
        expect(Number(last.headers.get('x-rate-limit-limit'))).toBe(3);
        expect(last.headers.get('x-rate-limit-remaining')).toMatch(/^\d+$/);
        expect(last.headers.get('x-rate-limit-reset')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      }
    }
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(6);
    expect(last!.status).toBe(429);
    const retryAfter = Number(last!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(last!.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(last!.text).toContain('quota "token"');
    expect(last!.text).toContain(`${retryAfter} second`);
  });

  it('limits unknown client ids per address, separately', async () => {
    const form = { grant_type: 'client_credentials', client_id: 'oc_nobody', client_secret: 'x', audience: 'flex-api' };
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 10 && last?.status !== 429; i += 1) {
      last = await limited.api.request('POST', '/oauth/token', { form });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 2)).toEqual([401, 401]);
    expect(last!.status).toBe(429);
    expect(last!.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
