// Regression: every JSON route took bodies up to BODY_LIMIT_BYTES (256 MiB), and JSON.parse plus
// the stored-text check cost ≥ 32× the body's size: one VEN credential's 24 MiB `[0,0,…]` to
// /api/openadr/v1/reports killed an instance with a 384 MiB heap. Each route now has its limit
// (platform JSON 1 MiB, OpenADR objects 4 MiB; reading batches keep BODY_LIMIT_BYTES and their own
// streaming parser), and a JSON body holding more values than one per 8 bytes of its route's
// limit is refused before it is parsed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_BODY_BYTES, JSON_BODY_BYTES } from '../../src/http/body.ts';
import { startVtnApp, VTN, type VtnClient } from '../support/vtn.ts';
import type { TestApp } from '../support/testApp.ts';

let t: TestApp;
let ven: VtnClient;
beforeAll(async () => {
  ({ t, ven } = await startVtnApp({}));
});
afterAll(() => t?.close());

const json = (token: string, body: string | Buffer) => ({ token, body, headers: { 'content-type': 'application/json' } });
/** `[0,0,…]` of exactly `bytes` bytes. */
const zeros = (bytes: number) => Buffer.from(`[${'0,'.repeat(Math.floor(bytes / 2) - 1)}0`.padEnd(bytes - 1, ' ') + ']');

describe('JSON bodies', () => {
  it('413 for an OpenADR object above 4 MiB', async () => {
    const res = await t.api.request('POST', `${VTN}/reports`, json(ven.token, zeros(DOCUMENT_BODY_BYTES + 2)));
    expect(res.status).toBe(413);
    expect(res.body.type).toBe('urn:flex:error:payload_too_large');
  });

  it('413 for a platform JSON body above 1 MiB', async () => {
    const res = await t.api.request('POST', '/api/admin/organizations', json(t.adminToken, JSON.stringify({ name: 'x'.repeat(JSON_BODY_BYTES) })));
    expect(res.status).toBe(413);
  });

  it('413, unparsed, for a body within the byte limit holding a value every 2 bytes', async () => {
    const res = await t.api.request('POST', `${VTN}/reports`, json(ven.token, zeros(3 << 20)));
    expect(res.status).toBe(413);
    expect(res.body.detail).toMatch(/JSON values/);
    // The server is unharmed and an ordinary body still passes.
    expect((await t.api.get('/health')).status).toBe(200);
    expect((await t.api.request('POST', `${VTN}/reports`, json(ven.token, '[0,0]'))).status).toBe(400);
  });
});
