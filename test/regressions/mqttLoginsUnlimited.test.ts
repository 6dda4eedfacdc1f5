// Regression: the embedded MQTT broker accepted any number of
// CONNECTs with bad credentials (each one a token verification and database read), while the
// token endpoint limits requests per client id, or per address for unknown ids. Failed CONNECTs
// now count against the same quotas (RATE_LIMIT_TOKEN_PER_MINUTE per client id given as
// username, RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE per address otherwise; counters of their own):
// over the quota, CONNECT is refused with return code 3 (server unavailable: MQTT 3.1.1 has no
// rate code) until the window resets, even with a good token for that client id.
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { VEN_SCOPES, vtnClient, type VtnClient } from '../support/vtn.ts';

const LIMIT = 3;

async function connackCode(port: number, username: string | undefined, password: string): Promise<number> {
  try {
    const c = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { username, password, reconnectPeriod: 0, connectTimeout: 5000 });
    await c.endAsync(true);
    return 0;
  } catch (err) {
    return (err as { code: number }).code;
  }
}

describe('failed MQTT logins', () => {
  let t: TestApp;
  let ven: VtnClient;
  let other: VtnClient;

  beforeAll(async () => {
    // The quotas are per minute, aligned to the clock: do not start in the last seconds of one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    t = await startTestApp({ RATE_LIMIT_TOKEN_PER_MINUTE: String(LIMIT + 2), RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE: String(LIMIT) });
    ven = await vtnClient(t.api, t.adminToken, VEN_SCOPES);
    other = await vtnClient(t.api, t.adminToken, VEN_SCOPES, ven.organizationId);
  }, 90_000);
  afterAll(async () => {
    await t?.close();
  });

  it('are limited per client id like the token endpoint, then refused with return code 3', async () => {
    const port = t.app.mqttPort;
    for (let i = 0; i < LIMIT + 2; i++) expect(await connackCode(port, ven.clientId, `not-a-token-${i}`), `attempt ${i + 1}`).toBe(4);
    expect(await connackCode(port, ven.clientId, 'not-a-token')).toBe(3);
    // Blocked whatever the password (no token is looked at until the window resets).
    expect(await connackCode(port, ven.clientId, ven.token)).toBe(3);
    // Another client id is not affected.
    expect(await connackCode(port, other.clientId, other.token)).toBe(0);
  });

  it('are limited per address when the username is not a client id', async () => {
    const port = t.app.mqttPort;
    for (let i = 0; i < LIMIT; i++) expect(await connackCode(port, `nobody-${i}`, 'not-a-token'), `attempt ${i + 1}`).toBe(4);
    expect(await connackCode(port, 'nobody-else', 'not-a-token')).toBe(3);
    // Good logins are not counted, and a known client id has its own quota.
    expect(await connackCode(port, other.clientId, other.token)).toBe(0);
  });
});
