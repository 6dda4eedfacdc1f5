// Regression: answers were never compressed, whatever Accept-Encoding said: a
// register-year of 15-minute readings is 5 MB of JSON. Large text answers are now compressed with
// the best coding the client accepts (q-values honoured), say so in Vary, and decompress to the
// very bytes of the uncompressed answer. Read with node:http so the bytes on the wire are seen.
import http from 'node:http';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZSTD_AVAILABLE, chooseEncoding } from '../../src/http/compression.ts';
import { createOrgClient } from '../support/fixtures.ts';
import { batch, createMeter, createRegister, readingsUrl, series } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let token: string;
let url: string;

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function rawGet(path: string, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    http
      .get(t.url + path, { headers: { authorization: `Bearer ${token}`, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

beforeAll(async () => {
  t = await startTestApp({ READINGS_MAX_POINTS: '100000' });
  const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
  token = client.token;
  const meter = await createMeter(t.api, t.adminToken, [client.organizationId]);
  const register = await createRegister(t.api, t.adminToken, meter.id);
  const year = series('2024-01-01T00:00:00Z', 366 * 96, 900, (i) => (i % 97) / 8);
  for (let i = 0; i < year.length; i += 10_000) {
    const res = await t.api.post('/api/readings', batch(meter.externalId, { [register.externalId]: year.slice(i, i + 10_000) }), token);
    expect(res.status).toBe(204);
    await new Promise((r) => setTimeout(r, 250)); // under the per-second quota
  }
  url = readingsUrl(client.organizationId, [register.id], '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z');
}, 120_000);
afterAll(() => t?.close());

describe('compressed answers', () => {
  it('a register-year read: gzip and brotli decompress to the identity bytes, far smaller', async () => {
    const identity = await rawGet(url, {});
    expect(identity.status).toBe(200);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers['vary']).toBe('Accept-Encoding');
    expect(identity.body.length).toBeGreaterThan(4_000_000);
    expect(JSON.parse(identity.body.toString())[0].readings).toHaveLength(366 * 96);

    const gzip = await rawGet(url, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers['vary']).toBe('Accept-Encoding');
    expect(gzip.body.length).toBeLessThan(identity.body.length / 5);
    expect(zlib.gunzipSync(gzip.body).equals(identity.body)).toBe(true);

    const br = await rawGet(url, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.body).equals(identity.body)).toBe(true);
  });

  it('honours q-values and refusals', async () => {
    expect((await rawGet(url, { 'accept-encoding': 'br;q=0.5, gzip' })).headers['content-encoding']).toBe('gzip');
    expect((await rawGet(url, { 'accept-encoding': 'gzip;q=0, br;q=0' })).headers['content-encoding']).toBeUndefined();
    expect((await rawGet(url, { 'accept-encoding': 'identity' })).headers['content-encoding']).toBeUndefined();
    expect((await rawGet(url, { 'accept-encoding': '*' })).headers['content-encoding']).toBe(ZSTD_AVAILABLE ? 'zstd' : 'br');
  });

  it('leaves small answers and errors alone', async () => {
    const small = await rawGet('/api/me', { 'accept-encoding': 'gzip' });
    expect(small.status).toBe(200);
    expect(small.headers['content-encoding']).toBeUndefined();
    const error = await rawGet('/api/readings?organizationId=x', { 'accept-encoding': 'gzip' });
    expect(error.status).toBe(400);
    expect(error.headers['content-encoding']).toBeUndefined();
  });

  it('chooses by q-value, then by the configured order', () => {
    const all = ['zstd', 'br', 'gzip'] as const;
    expect(chooseEncoding('gzip, br, zstd', all)).toBe('zstd');
    expect(chooseEncoding('gzip, br', all)).toBe('br');
    expect(chooseEncoding('gzip;q=1, br;q=0.9', all)).toBe('gzip');
    expect(chooseEncoding('*;q=0.1, gzip;q=0', ['gzip', 'br'])).toBe('br');
    expect(chooseEncoding('GZIP', all)).toBe('gzip');
    expect(chooseEncoding('gzip;q=2', all)).toBeUndefined(); // not a q-value: treated as 0
    expect(chooseEncoding('', all)).toBeUndefined();
    expect(chooseEncoding(undefined, all)).toBeUndefined();
  });
});
