// Regression: an MQTT session on the embedded broker kept its
// subscriptions, and kept receiving its VEN's events, after the access token it connected with
// was revoked (credential deleted, secret rotated: token_version bumped) or expired; the token
// was checked only at CONNECT and SUBSCRIBE. The broker now re-checks every open session's token
// every AUTH_CACHE_MS (one query for all) and disconnects the ones that no longer authenticate.
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator } from '../../src/auth/authenticator.ts';
import { clientAccessMany } from '../../src/auth/clientStore.ts';
import { loadSigningKey, TokenSigner } from '../../src/auth/tokens.ts';
import { MemoryRateLimitStore } from '../../src/http/rateLimit.ts';
import { EmbeddedBroker } from '../../src/vtn/mqttBroker.ts';
import { createOrganization, fetchToken } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, VEN_SCOPES, vtnClient, waitFor } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';
const AUTH_CACHE_MS = 300;

interface Credential {
  id: number;
  clientId: string;
  token: string;
}

async function connectVen(port: number, credential: Credential, venId: string, organizationId: number) {
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { username: credential.clientId, password: credential.token, reconnectPeriod: 0, connectTimeout: 5000 });
  const state = { client, closed: false, messages: [] as string[] };
  client.on('close', () => (state.closed = true));
  client.on('message', (_topic, payload) => state.messages.push((JSON.parse(payload.toString()) as { object: { id: string } }).object.id));
  const [grant] = await client.subscribeAsync(`openadr3/${organizationId}/vens/${venId}/events/+`, { qos: 1 });
  expect(grant!.qos).toBe(1);
  return state;
}

describe('an open MQTT session after its token is revoked or expires', () => {
  let t: TestApp;
  let org: number;
  let blToken: string;
  let programId: string;
  const clients: MqttClient[] = [];

  const credential = async (): Promise<Credential> => {
    const created = await expectStatus(t.api.post('/api/openadr/vtn/credential', { organizationId: org, name: 'ven gateway', scopes: VEN_SCOPES }, t.adminToken), 200);
    return { id: created.id, clientId: created.clientId, token: await fetchToken(t.api, created.clientId, created.clientSecret) };
  };
  const ven = async (c: Credential, name: string): Promise<string> => (await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'VEN_VEN_REQUEST', venName: name }, c.token), 201)).id;

  beforeAll(async () => {
    t = await startTestApp({ VTN_DISPATCH_POLL_MS: '50', AUTH_CACHE_MS: String(AUTH_CACHE_MS) });
    org = await createOrganization(t.api, t.adminToken, ['OpenADR']);
    blToken = (await vtnClient(t.api, t.adminToken, BL_SCOPES, org)).token;
    programId = (await expectStatus(t.api.post(`${V31}/programs`, { programName: 'revocation' }, blToken), 201)).id;
  });
  afterAll(async () => {
    for (const c of clients) await c.endAsync(true).catch(() => undefined);
    await t?.close();
  });

  it('disconnects a session whose credential is deleted or whose secret is rotated; others keep theirs', async () => {
    const rotated = await credential();
    const deleted = await credential();
    const kept = await credential();
    const [venRotated, venDeleted, venKept] = [await ven(rotated, 'ven-rotated'), await ven(deleted, 'ven-deleted'), await ven(kept, 'ven-kept')];
    const sRotated = await connectVen(t.app.mqttPort, rotated, venRotated, org);
    const sDeleted = await connectVen(t.app.mqttPort, deleted, venDeleted, org);
    const sKept = await connectVen(t.app.mqttPort, kept, venKept, org);
    clients.push(sRotated.client, sDeleted.client, sKept.client);

    // All three hear an untargeted event.
    const first = await expectStatus(t.api.post(`${V31}/events`, { programID: programId, eventName: 'before' }, blToken), 201);
    await waitFor('the first event everywhere', () => [sRotated, sDeleted, sKept].every((s) => s.messages.includes(first.id)), 5000);

    await expectStatus(t.api.put(`/api/openadr/vtn/credential/${rotated.id}/secret?organizationId=${org}`, undefined, t.adminToken), 200);
    await expectStatus(t.api.delete(`/api/openadr/vtn/credential/${deleted.id}?organizationId=${org}`, t.adminToken), 204);
    // Within the auth-cache window (plus the time of one check), both are disconnected.
    await waitFor('the revoked sessions to be closed', () => sRotated.closed && sDeleted.closed, 10 * AUTH_CACHE_MS + 2000);

    const second = await expectStatus(t.api.post(`${V31}/events`, { programID: programId, eventName: 'after' }, blToken), 201);
    await waitFor('the second event on the kept session', () => sKept.messages.includes(second.id), 5000);
    expect(sKept.closed).toBe(false);
    expect(sRotated.messages).not.toContain(second.id);
    expect(sDeleted.messages).not.toContain(second.id);

    // The revoked token cannot come back either.
    await expect(mqtt.connectAsync(`mqtt://127.0.0.1:${t.app.mqttPort}`, { username: rotated.clientId, password: rotated.token, reconnectPeriod: 0, connectTimeout: 3000 })).rejects.toMatchObject({ code: 4 });
  });

  it('disconnects a session whose token expires while it is connected', async () => {
    // A broker beside the app's, over the same database and signing key, whose authenticator's
    // clock can be moved past the token's expiry (tokens live at least 60 s).
    const c = await credential();
    const venId = await ven(c, 'ven-expiring');
    const { key, keyId } = await loadSigningKey(t.app.pool, undefined);
    let skew = 0;
    const authenticator = new Authenticator(t.app.pool, new TokenSigner(key, keyId, 'flex', 86400), ['flex-api'], AUTH_CACHE_MS, () => Date.now() + skew);
    const store = new MemoryRateLimitStore();
    const broker = await EmbeddedBroker.start({
      host: '127.0.0.1',
      port: 0,
      pool: t.app.pool,
      auth: { authenticate: authenticator.authenticate, recheck: (tokens) => authenticator.recheck(tokens), credentials: (ids) => clientAccessMany(t.app.pool, ids) },
      limits: { store, perClient: [{ seconds: 60, max: 30 }], perAddress: [{ seconds: 60, max: 30 }] },
      recheckMs: AUTH_CACHE_MS,
      log: t.app.log,
    });
    try {
      const s = await connectVen(broker.port, c, venId, org);
      clients.push(s.client);
      await new Promise((resolve) => setTimeout(resolve, 3 * AUTH_CACHE_MS));
      expect(s.closed).toBe(false);
      skew = 86_400_000 + 1000;
      await waitFor('the expired session to be closed', () => s.closed, 10 * AUTH_CACHE_MS + 2000);
    } finally {
      await broker.close();
      store.close();
    }
  });
});
