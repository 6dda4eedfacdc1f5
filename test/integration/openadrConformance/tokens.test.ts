// How OpenADR clients get their tokens: a 3.1.0 client discovers the token endpoint through
// `GET /auth/server` and posts its client credentials there without an audience; a 3.0.1 client
// posts to `/oauth/token`, also without one. Either token then works on both surfaces.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SURFACES, V31 } from '../../support/openAdrClients.ts';
import { connectPacket, rawSession, subscribePacket } from '../../support/mqtt.ts';
import { BL_SCOPES, expectStatus, vtnClient } from '../../support/vtn.ts';
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

// The ElaadNL MQTT client logs in with the token as password and no user name (which MQTT 3.1.1
// forbids, and paho sends anyway; the `mqtt` package refuses to, so this test speaks raw MQTT):
// the broker takes the token whatever the user name, and a business-logic client then reads its
// organization's program notifications.
it('accepts an MQTT login with the token as password and no user name, and delivers to it', async () => {
  const app = await startTestApp({ VTN_DISPATCH_POLL_MS: '50' });
  const bl = await vtnClient(app.api, app.adminToken, BL_SCOPES);
  const mqtt = await rawSession(app.app.mqttPort);
  try {
    mqtt.write(connectPacket({ clientId: 'paho-like', password: bl.token }));
    // CONNACK accepted: type 2, length 2, no session present, return code 0.
    const connack = await mqtt.until('CONNACK', (r) => r.length >= 4);
    expect([...connack.subarray(0, 4)]).toEqual([0x20, 2, 0, 0]);
    mqtt.write(subscribePacket(1, [`openadr3/${bl.organizationId}/programs/+`]));
    // SUBACK granting QoS 1: type 9, length 3, packet id 1, code 1.
    const suback = await mqtt.until('SUBACK', (r) => r.length >= 9);
    expect([...suback.subarray(4, 9)]).toEqual([0x90, 3, 0, 1, 1]);
    const program = await expectStatus(app.api.post(`${V31}/programs`, { programName: 'no-user-name' }, bl.token), 201);
    await mqtt.until('the program notification', (r) => r.includes(Buffer.from(`"id":"${program.id}"`)));
  } finally {
    mqtt.close();
    await app.close();
  }
});
