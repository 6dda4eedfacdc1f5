// Regression: failed token requests were counted per claimed client_id, so anyone who knew a
// client id (VTN objects show it as clientName; MQTT clients use it as their user name) could send
// 31 bad secrets naming it and the owner's correct secret got 429 for the rest of the minute.
// Failures now count per address and per (client id, address): a correct secret from an address
// that did not fail is never refused for someone else's failures, and an address over its limit
// is refused before its body is read. Addresses are given here through X-Forwarded-For (TRUST_PROXY).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressKey } from '../../src/http/failedAttempts.ts';
import { createOrgClient, type OrgClient } from '../support/fixtures.ts';
import { rawExchange } from '../support/rawHttp.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let victim: OrgClient;
beforeAll(async () => {
  t = await startTestApp({ TRUST_PROXY: 'true', RATE_LIMIT_TOKEN_PER_MINUTE: '3', RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE: '6' });
  victim = await createOrgClient(t.api, t.adminToken, { permissions: ['Organization.Organization.Read'] });
});
afterAll(() => t?.close());

const tokenRequest = (from: string, clientId: string, secret: string) =>
  t.api.request('POST', '/oauth/token', {
    form: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret, audience: 'flex-api' },
    headers: { 'x-forwarded-for': from },
  });

/** Sends until refused (429); the statuses. Windows are fixed minutes: a boundary in between
 * resets the counts once, so up to twice the limit may pass. */
async function untilRefused(send: () => Promise<{ status: number }>, limit: number): Promise<number[]> {
  const statuses: number[] = [];
  while (statuses.length <= 2 * limit + 1 && statuses.at(-1) !== 429) statuses.push((await send()).status);
  return statuses;
}

/** `check` right after `exhaust`; once more if a minute boundary reset the counts in between. */
async function whileExhausted(exhaust: () => Promise<unknown>, check: () => Promise<void>): Promise<void> {
  await exhaust();
  try {
    await check();
  } catch {
    await exhaust();
    await check();
  }
}

describe('failed token requests', () => {
  it('do not lock the owner out: another address with the right secret still gets its token', async () => {
    await whileExhausted(
      async () => {
        // (client id, address): 3 failures, then 429.
        const statuses = await untilRefused(() => tokenRequest('203.0.113.66', victim.clientId, 'wrong'), 3);
        expect(statuses.at(-1)).toBe(429);
        expect(statuses.slice(0, -1).every((s) => s === 401)).toBe(true);
      },
      async () => {
        expect((await tokenRequest('203.0.113.66', victim.clientId, 'wrong')).status).toBe(429);
        expect((await tokenRequest('198.51.100.7', victim.clientId, victim.clientSecret)).status).toBe(200);
      },
    );
  });

  it('limit an address across client ids, before its body is read', async () => {
    const from = '203.0.113.99';
    let i = 0;
    await whileExhausted(
      async () => {
        const statuses = await untilRefused(() => tokenRequest(from, `oc_nobody_${(i += 1)}`, 'x'), 6);
        expect(statuses.at(-1)).toBe(429);
        expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(6);
      },
      async () => {
        // Its next request is refused on its headers alone: the body it announces never comes.
        const early = await rawExchange(t.app.port, `POST /oauth/token HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${from}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n`, 1500);
        expect(early.statuses).toEqual([429]);
        expect(early.text).toMatch(/Retry-After: \d+/i);
        expect(early.text).toMatch(/failed attempts from this address/);
        // Even the owner's right secret from that address waits; from elsewhere it works.
        expect((await tokenRequest(from, victim.clientId, victim.clientSecret)).status).toBe(429);
        expect((await tokenRequest('192.0.2.10', victim.clientId, victim.clientSecret)).status).toBe(200);
      },
    );
  });

  it('count an IPv6 network by its /64, and an IPv4-mapped address as IPv4', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe(addressKey('2001:db8:1:2:ffff::2'));
    expect(addressKey('2001:db8:1:2::1')).not.toBe(addressKey('2001:db8:1:3::1'));
    expect(addressKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
  });
});
