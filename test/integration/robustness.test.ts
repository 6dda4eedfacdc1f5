// Hostile input against every route in the table: random bytes, truncated and invalid UTF-8
// bodies, odd path parameters, huge headers and query strings. The server must keep serving and
// answer client errors with 4xx, never 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let clientToken: string;

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_TOKEN_PER_MINUTE: '100000', RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE: '100000' });
  clientToken = (await createOrgClient(t.api, t.adminToken, { features: ['Grid', 'OpenADR'], permissions: ['Organization.Organization.ReadWrite'] })).token;
});
afterAll(() => t?.close());

/** Deterministic pseudo-random bytes (xorshift), so a failure can be replayed. */
function randomBytes(seed: number, length: number): Buffer {
  let x = seed || 1;
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i += 1) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const PARAM_VALUES = ['1', '0', '-1', '2147483648', 'abc', '%ff', '%00', 'x'.repeat(2000), '1e3', ' '];

async function send(method: string, path: string, init: { body?: Buffer | string; headers?: Record<string, string> }) {
  try {
    const res = await fetch(t.url + path, { method, body: init.body, headers: init.headers });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0; // the server may close a connection on a protocol violation
  }
}

describe('robustness', () => {
  it('answers every route’s hostile inputs without a 5xx and keeps serving', async () => {
    const failures: string[] = [];
    let seed = 7;
    for (const route of t.app.router.routes) {
      const { method } = route.def;
      for (const value of PARAM_VALUES) {
        const path = route.def.path.replace(/:[A-Za-z0-9_]+/g, value.includes('%') ? value : encodeURIComponent(value));
        for (const token of [undefined, t.adminToken, clientToken]) {
          const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
          const bodies: { body?: Buffer | string; headers: Record<string, string> }[] = [
            { headers: { ...auth } },
            { body: randomBytes(seed++, 512), headers: { ...auth, 'content-type': 'application/json' } },
            { body: '{"name": "trunc', headers: { ...auth, 'content-type': 'application/json' } },
            { body: Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]), headers: { ...auth, 'content-type': 'application/json' } },
            { body: randomBytes(seed++, 300), headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' } },
            { body: '[1,2,3]', headers: { ...auth, 'content-type': 'application/json' } },
            { body: 'null', headers: { ...auth, 'content-type': 'application/json' } },
          ];
          for (const variant of method === 'GET' || method === 'DELETE' ? bodies.slice(0, 1) : bodies) {
            const status = await send(method, path, variant);
            if (status >= 500) failures.push(`${method} ${path.slice(0, 80)} → ${status}`);
          }
        }
      }
      const query = `?organizationId=${'9'.repeat(40)}&${'a=%E0%A4%A&'.repeat(200)}`;
      const status = await send(method, route.def.path.replace(/:[A-Za-z0-9_]+/g, '1') + query, { headers: { authorization: `Bearer ${t.adminToken}` } });
      if (status >= 500) failures.push(`${method} ${route.def.path} with a hostile query → ${status}`);
      const hugeHeader = await send(method, route.def.path.replace(/:[A-Za-z0-9_]+/g, '1'), { headers: { 'x-filler': 'h'.repeat(64 * 1024), authorization: `Bearer ${t.adminToken}` } });
      if (hugeHeader >= 500) failures.push(`${method} ${route.def.path} with a huge header → ${hugeHeader}`);
      const hugeQuery = await send(method, `${route.def.path.replace(/:[A-Za-z0-9_]+/g, '1')}?q=${'z'.repeat(200_000)}`, {});
      if (hugeQuery >= 500) failures.push(`${method} ${route.def.path} with a huge query → ${hugeQuery}`);
    }
    expect(failures).toEqual([]);
    const health = await fetch(`${t.url}/health`);
    expect(health.status).toBe(200);
  }, 120_000);
});
