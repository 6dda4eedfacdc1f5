// Regression: `POST /oauth/token` answered 400 "Missing required parameter: audience" to VTN
// credentials, which OpenADR clients use without an audience (the ElaadNL 3.0.1 VEN factory sends
// none). A VTN credential's token now defaults to the first TOKEN_AUDIENCES entry, as
// `/api/openadr/3.1.0/auth/token` already did; organization clients still name one, and the
// missing audience is said only after the client authenticated (no hint of which ids exist).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createOrganization } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { VTN } from '../support/vtn.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

it('gives a VTN credential a token without audience, usable on the VTN', async () => {
  const org = await createOrganization(t.api, t.adminToken, ['OpenADR']);
  const cred = (await t.api.post('/api/openadr/vtn/credential', { organizationId: org, name: 'no-audience', scopes: ['read_all'] }, t.adminToken)).body;
  const res = await t.api.request('POST', '/oauth/token', { form: { grant_type: 'client_credentials', client_id: cred.clientId, client_secret: cred.clientSecret } });
  expect(res.status, res.text).toBe(200);
  expect((await t.api.get(`${VTN}/programs`, res.body.access_token)).status).toBe(200);
  const unknown = await t.api.request('POST', '/oauth/token', { form: { grant_type: 'client_credentials', client_id: 'no-such-client', client_secret: 'x' } });
  expect(unknown.status).toBe(401);
  expect(unknown.body.error).toBe('invalid_client');
});
