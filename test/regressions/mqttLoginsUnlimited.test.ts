// Regression: the embedded MQTT broker accepted any number of CONNECTs with bad credentials (each
// one a token verification and database read). Failed CONNECTs now count against the token
// endpoint's quotas, in counters of their own: RATE_LIMIT_TOKEN_PER_MINUTE per (user name,
// address) and RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE per address. Over a quota, CONNECT is refused
// with return code 3 (server unavailable: MQTT 3.1.1 has no rate code) until the window resets,
// whatever the password, for that user name from that address, or for anything from that address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connackCode } from '../support/mqtt.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { VEN_SCOPES, vtnClient, type VtnClient } from '../support/vtn.ts';

const PER_NAME = 3;
const PER_ADDRESS = 7;

describe('failed MQTT logins', () => {
  let t: TestApp;
  let ven: VtnClient;
  let other: VtnClient;

  beforeAll(async () => {
    // The quotas are per minute, aligned to the clock: do not start in the last seconds of one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    t = await startTestApp({ RATE_LIMIT_TOKEN_PER_MINUTE: String(PER_NAME), RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE: String(PER_ADDRESS) });
    ven = await vtnClient(t.api, t.adminToken, VEN_SCOPES);
    other = await vtnClient(t.api, t.adminToken, VEN_SCOPES, ven.organizationId);
  }, 90_000);
  afterAll(async () => {
    await t?.close();
  });

  it('are limited per (user name, address), then refused with return code 3 whatever the password', async () => {
    const port = t.app.mqttPort;
    const from = '127.0.0.11';
    for (let i = 0; i < PER_NAME; i++) expect(await connackCode(port, { username: ven.clientId, password: `not-a-token-${i}`, localAddress: from }), `attempt ${i + 1}`).toBe(4);
    expect(await connackCode(port, { username: ven.clientId, password: 'not-a-token', localAddress: from })).toBe(3);
    // No token is looked at until the window resets.
    expect(await connackCode(port, { username: ven.clientId, password: ven.token, localAddress: from })).toBe(3);
    // Another user name from that address, and that user name from another address, are not held.
    expect(await connackCode(port, { username: other.clientId, password: other.token, localAddress: from })).toBe(0);
    expect(await connackCode(port, { username: ven.clientId, password: ven.token, localAddress: '127.0.0.13' })).toBe(0);
  });

  it('are limited per address, whatever the user names', async () => {
    const port = t.app.mqttPort;
    const from = '127.0.0.12';
    for (let i = 0; i < PER_ADDRESS; i++) expect(await connackCode(port, { username: `nobody-${i}`, password: 'not-a-token', localAddress: from }), `attempt ${i + 1}`).toBe(4);
    expect(await connackCode(port, { username: 'someone-else', password: 'not-a-token', localAddress: from })).toBe(3);
    expect(await connackCode(port, { username: other.clientId, password: other.token, localAddress: from })).toBe(3);
    // Good logins are not counted; other addresses are not held.
    expect(await connackCode(port, { username: other.clientId, password: other.token, localAddress: '127.0.0.14' })).toBe(0);
  });
});
