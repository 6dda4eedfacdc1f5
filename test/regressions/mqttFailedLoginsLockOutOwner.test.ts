// Regression: failed MQTT CONNECTs were counted per client id given as user name, so anyone who
// knew a client id (VTN objects show it as `clientName`, /notifiers tells clients to use it as
// their user name) could send a few bad CONNECTs naming it and lock its owner out of the broker
// for the rest of the minute, from anywhere. Failures now count per (user name, address) and per
// address: a correct token from an address that did not fail is never refused because of others'
// failures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connackCode } from '../support/mqtt.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { VEN_SCOPES, vtnClient, type VtnClient } from '../support/vtn.ts';

const LIMIT = 3;

describe('failed MQTT logins naming another client', () => {
  let t: TestApp;
  let victim: VtnClient;

  beforeAll(async () => {
    // The quotas are per minute, aligned to the clock: do not start in the last seconds of one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    t = await startTestApp({ RATE_LIMIT_TOKEN_PER_MINUTE: String(LIMIT), RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE: String(LIMIT * 2) });
    victim = await vtnClient(t.api, t.adminToken, VEN_SCOPES);
  }, 90_000);
  afterAll(async () => {
    await t?.close();
  });

  it('do not refuse the owner’s correct token from its own address', async () => {
    const port = t.app.mqttPort;
    const attacker = '127.0.0.2';
    for (let i = 0; i < LIMIT; i++) expect(await connackCode(port, { username: victim.clientId, password: `guess-${i}`, localAddress: attacker }), `attempt ${i + 1}`).toBe(4);
    expect(await connackCode(port, { username: victim.clientId, password: 'guess', localAddress: attacker })).toBe(3);
    // The owner, from an address that did not fail, whatever user name it gives (or none).
    expect(await connackCode(port, { username: victim.clientId, password: victim.token, localAddress: '127.0.0.1' })).toBe(0);
    expect(await connackCode(port, { username: 'anything', password: victim.token, localAddress: '127.0.0.5' })).toBe(0);
  });
});
