// How OpenADR clients get their tokens: a 3.1.0 client discovers the token endpoint through
// `GET /auth/server` and posts its client credentials there without an audience; a 3.0.1 client
// posts to `/oauth/token`, also without one. Either token then works on both surfaces.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SURFACES, V31 } from '../../support/openAdrClients.ts';
import { createOrganization } from '../../support/fixtures.ts';
import { startTestApp, type TestApp } from '../../support/testApp.ts';

let t: TestApp;
let credential: { clientId: string; clientSecret: string };
beforeAll(async () => {
  t = await startTestApp();
  const org = await createOrganization(t.api, t.adminToken, ['OpenADR']);
  credential = (await t.api.post('/api/openadr/vtn/credential', { organizationId: org, name: 'openadr-client', scopes: ['read_all', 'write_programs'] }, t.adminToken)).body;
});
afterAll(() => t?.close());

async function tokenAt(url: string): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: credential.clientId, client_secret: credential.clientSecret }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { access_token: string; token_type: string };
  expect(body.token_type).toBe('Bearer');
  return body.access_token;
}

describe.each(SURFACES)('tokens used on $name', (s) => {
  it('works with a token found through /auth/server, without audience', async () => {
    const { tokenURL } = (await t.api.get(`${V31}/auth/server`)).body;
    expect(tokenURL).toBe(`${t.url}${V31}/auth/token`);
    expect((await t.api.get(`${s.base}/programs`, await tokenAt(tokenURL))).status).toBe(200);
  });

  it('works with a token from /oauth/token, without audience', async () => {
    expect((await t.api.get(`${s.base}/programs`, await tokenAt(`${t.url}/oauth/token`))).status).toBe(200);
  });
});

// The broker's side (a token as the MQTT password with no user name, as the ElaadNL MQTT client
// logs in) belongs with the broker's tests; `mqttSubscriber(port, client, filters, { username:
// null })` in test/support/openAdrClients.ts logs in that way.
it.todo('accepts an MQTT login with the token as password and no user name');
