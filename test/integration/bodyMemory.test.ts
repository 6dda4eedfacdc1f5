// Memory under many maximum-size request bodies at once, measured on a Flex process of its own
// (its resident set read from /proc): 50 concurrent bodies at the limit of the token endpoint
// (unauthenticated, 16 KiB of `a&a&…`, the form that cost ~12× its size to parse), 50 at the
// limit of a VTN route (4 MiB of empty objects, the JSON that costs most to parse), and 50 that
// declare 256 MiB. The growth stays within the budget docs/security.md states ("Request bodies"),
// /health answers throughout, and every request gets its status (400, 413, or the body budget's
// 503), never a reset.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BYTES_PER_JSON_VALUE, DOCUMENT_BODY_BYTES, SMALL_BODY_BYTES } from '../../src/http/body.ts';
import { startFlexProcess, type FlexProcess } from '../support/flexProcess.ts';
import { rawExchange } from '../support/rawHttp.ts';
import { createTestDatabase } from '../support/testApp.ts';

/** The growth docs/security.md ("Request bodies") states for these loads. */
const BUDGET_MIB = 192;
const ADMIN = `flex_pat_${'m'.repeat(40)}`;
const CONCURRENT = 50;

let flex: FlexProcess;
let token: string;

const rssMiB = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${flex.child.pid}/status`, 'utf8'))![1]) / 1024;

async function call(method: string, path: string, init: { token?: string; body?: string | Buffer; type?: string } = {}): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.type) headers['content-type'] = init.type;
  const res = await fetch(`${flex.baseUrl}${path}`, { method, headers, body: init.body });
  const text = await res.text();
  return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

/** Runs `load` while sampling the resident set and asking /health; the peak growth and the
 * statuses of the load and of /health. */
async function underLoad(load: () => Promise<number[]>): Promise<{ growthMiB: number; statuses: number[]; health: number[] }> {
  const before = rssMiB();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB())), 10);
  const health: number[] = [];
  let loading = true;
  const asking = (async () => {
    while (loading) health.push((await call('GET', '/health')).status);
  })();
  const statuses = await load().finally(() => (loading = false));
  await asking;
  clearInterval(sampler);
  peak = Math.max(peak, rssMiB());
  return { growthMiB: peak - before, statuses, health };
}

beforeAll(async () => {
  flex = await startFlexProcess({ DATABASE_URL: await createTestDatabase(), ADMIN_TOKEN: ADMIN, ...(process.env.HTTP_SERVER ? { HTTP_SERVER: process.env.HTTP_SERVER } : {}) });
  const org = (await call('POST', '/api/admin/organizations', { token: ADMIN, type: 'application/json', body: JSON.stringify({ name: 'memory', features: ['OpenADR'] }) })).body.id;
  const credential = (await call('POST', '/api/openadr/vtn/credential', { token: ADMIN, type: 'application/json', body: JSON.stringify({ organizationId: org, name: 'bl', scopes: ['read_all', 'write_programs'] }) })).body;
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: credential.clientId, client_secret: credential.clientSecret, audience: 'flex-api' }).toString();
  token = (await call('POST', '/oauth/token', { type: 'application/x-www-form-urlencoded', body: form })).body.access_token;
  // Warm up: every path once, so what follows measures the bodies, not first-use compilation.
  await call('POST', '/api/openadr/v1/programs', { token, type: 'application/json', body: '[0,0]' });
  await call('POST', '/oauth/token', { type: 'application/x-www-form-urlencoded', body: 'a&a' });
}, 120_000);
afterAll(async () => {
  flex?.child.kill('SIGTERM');
  await flex?.exited;
});

describe(`${CONCURRENT} concurrent maximum-size bodies (${process.env.HTTP_SERVER ?? 'node'} server)`, () => {
  it('on the token endpoint: bounded memory, answers throughout', async () => {
    const body = 'a&'.repeat(SMALL_BODY_BYTES / 2);
    const result = await underLoad(() => Promise.all(Array.from({ length: CONCURRENT }, async () => (await call('POST', '/oauth/token', { type: 'application/x-www-form-urlencoded', body })).status)));
    console.log(`token endpoint: ${CONCURRENT} × ${SMALL_BODY_BYTES} B, RSS +${result.growthMiB.toFixed(1)} MiB, statuses ${[...new Set(result.statuses)].join(',')}`);
    expect(result.statuses.every((s) => s < 500 || s === 503)).toBe(true);
    expect(result.health.every((s) => s === 200)).toBe(true);
    expect(result.growthMiB).toBeLessThan(BUDGET_MIB);
  });

  it('on a VTN route: bounded memory, answers throughout', async () => {
    // Empty objects, as many as the route's JSON value count admits (one per 8 bytes of its
    // limit: `{},` counts twice): they cost JSON.parse the most per byte.
    const unit = '{},'.padEnd(2 * BYTES_PER_JSON_VALUE, ' ');
    const text = `[${unit.repeat(Math.floor((DOCUMENT_BODY_BYTES - 2) / unit.length))}`;
    const body = Buffer.from(`${text.slice(0, -1)}${' '.repeat(DOCUMENT_BODY_BYTES - text.length)}]`);
    expect(body.length).toBe(DOCUMENT_BODY_BYTES);
    const result = await underLoad(() =>
      Promise.all(Array.from({ length: CONCURRENT }, async () => (await call('POST', '/api/openadr/v1/programs', { token, type: 'application/json', body })).status)),
    );
    console.log(`VTN route: ${CONCURRENT} × ${DOCUMENT_BODY_BYTES} B, RSS +${result.growthMiB.toFixed(1)} MiB, statuses ${[...new Set(result.statuses)].join(',')}`);
    expect(result.statuses.every((s) => s === 400 || s === 503)).toBe(true);
    expect(result.health.every((s) => s === 200)).toBe(true);
    expect(result.growthMiB).toBeLessThan(BUDGET_MIB);
  });

  it('bodies declaring 256 MiB: 413 at once, nothing allocated', async () => {
    const result = await underLoad(() =>
      Promise.all(
        Array.from({ length: CONCURRENT }, async (_, i) => {
          const path = i % 2 === 0 ? '/oauth/token' : '/api/openadr/v1/programs';
          const res = await rawExchange(flex.port, `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${256 * 1024 * 1024}\r\n\r\n[0,`, 3000);
          return res.statuses[0] ?? 0;
        }),
      ),
    );
    console.log(`declared 256 MiB: RSS +${result.growthMiB.toFixed(1)} MiB`);
    expect(result.statuses).toEqual(Array(CONCURRENT).fill(413));
    expect(result.growthMiB).toBeLessThan(BUDGET_MIB);
  });
});
