// How the console's files are served (through the route table, so every server adapter serves
// them alike): hashed assets immutable for a year, the pages revalidated (ETag → 304), gzip or
// brotli chosen from Accept-Encoding with Vary, a Content-Security-Policy that keeps the pages
// same-origin, and nothing but the built files reachable.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let scriptPath: string;

/** node:http, not fetch: fetch decodes bodies and hides Content-Encoding handling. */
function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${t.url}${path}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

beforeAll(async () => {
  t = await startTestApp();
  const page = await get('/console');
  scriptPath = /src="(\/console\/assets\/index-[^"]+\.js)"/.exec(page.body.toString())![1]!;
});
afterAll(() => t?.close());

describe('the console files', () => {
  it('serves the page for revalidation and its hashed script immutable', async () => {
    const page = await get('/console');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const script = await get(scriptPath);
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.headers.vary).toBe('Accept-Encoding');
    expect(script.headers['content-encoding']).toBeUndefined();
  });

  it('sends brotli or gzip as the client accepts, the same bytes once decoded', async () => {
    const plain = await get(scriptPath);
    const br = await get(scriptPath, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.body.length).toBeLessThan(plain.body.length / 2);
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    const gz = await get(scriptPath, { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);
    const refused = await get(scriptPath, { 'accept-encoding': 'br;q=0, gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(new Set([plain.headers.etag, br.headers.etag, gz.headers.etag]).size).toBe(3);
  });

  it('answers 304 to a matching If-None-Match, per encoding', async () => {
    const first = await get('/docs', { 'accept-encoding': 'br' });
    expect(first.status).toBe(200);
    const again = await get('/docs', { 'accept-encoding': 'br', 'if-none-match': first.headers.etag! });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(first.headers.etag);
    // The script exists as brotli and gzip: an ETag names one encoding's bytes.
    const br = await get(scriptPath, { 'accept-encoding': 'br' });
    expect((await get(scriptPath, { 'accept-encoding': 'br', 'if-none-match': `W/${br.headers.etag}` })).status).toBe(304);
    expect((await get(scriptPath, { 'accept-encoding': 'gzip', 'if-none-match': br.headers.etag! })).status).toBe(200);
  });

  it('serves a page of links at /', async () => {
    const root = await get('/');
    expect(root.status).toBe(200);
    expect(root.body.toString()).toContain('href="/console"');
    expect(root.body.toString()).toContain('href="/docs"');
  });

  it('finds nothing but built files: unknown names 404, odd names 400, never a path outside', async () => {
    expect((await get('/console/assets/nope-123.js')).status).toBe(404);
    const traversal = await get('/console/assets/..%2F..%2Fpackage.json');
    expect(traversal.status).toBe(400);
    expect([400, 404]).toContain((await get('/console/assets/%2e%2e')).status);
    expect((await get('/console/assets/.build-stamp')).status).toBe(400);
    const missing = await get('/console/assets/index.html');
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toBe('application/problem+json');
  });
});
