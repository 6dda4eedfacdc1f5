// The HTTP layer over a real socket: problem documents, 400/404/405/413, request ids, the
// operational endpoints and the OpenAPI document.
import { Agent, request as httpRequest } from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_BODY_BYTES } from '../../src/http/body.ts';
import { createOrgClient } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ BODY_LIMIT_BYTES: '4096' });
});
afterAll(() => t?.close());

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, type: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.body).toMatchObject({ status, type: `urn:flex:error:${type}` });
  expect(typeof res.body.title).toBe('string');
  expect(res.body.requestId).toBe(res.headers.get('x-request-id'));
}

/** Sends raw bytes and returns the raw response text (the connection is closed by us). */
/** POST a JSON body sent in chunks (no Content-Length) as the admin. */
function postChunked(path: string, chunks: Buffer[]): Promise<Response> {
  const body = new ReadableStream({
    pull(controller) {
      const next = chunks.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
  return fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
    body,
    duplex: 'half',
  } as RequestInit);
}

function rawRequest(port: number, data: Buffer | string, waitMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    const done = () => {
      socket.destroy();
      resolve(received);
    };
    socket.on('data', (d) => {
      received += d.toString('latin1');
    });
    socket.on('close', done);
    socket.on('error', done);
    socket.write(data);
    setTimeout(done, waitMs);
  });
}

describe('errors', () => {
  it('400 for malformed JSON', async () => {
    const res = await t.api.request('POST', '/api/admin/organizations', { token: t.adminToken, body: '{"name": "x",', headers: { 'content-type': 'application/json' } });
    expectProblem(res, 400, 'malformed_json');
  });

  it('400 for invalid UTF-8 in a JSON body', async () => {
    const res = await t.api.request('POST', '/api/admin/organizations', {
      token: t.adminToken,
      body: Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(res, 400, 'malformed_json');
  });

  it('400 for a wrong or missing content type', async () => {
    const wrong = await t.api.request('POST', '/api/admin/organizations', { token: t.adminToken, body: 'name=x', headers: { 'content-type': 'text/plain' } });
    expectProblem(wrong, 400, 'unsupported_content_type');
    const none = await t.api.request('POST', '/api/admin/organizations', { token: t.adminToken, body: '{"name":"x"}' });
    expect(none.status).toBe(400);
    const withCharset = await t.api.request('POST', '/api/admin/organizations', {
      token: t.adminToken,
      body: JSON.stringify({ name: 'charset org' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(withCharset.status).toBe(201);
  });

  it('400 listing each invalid field with its path', async () => {
    const res = await t.api.post('/api/admin/users', { name: '', roleIds: ['a', 2], globalAdmin: 'yes' }, t.adminToken);
    expectProblem(res, 400, 'validation_failed');
    const paths = res.body.errors.map((e: any) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['name', 'roleIds[0]', 'globalAdmin']));
  });

  it('404 for an unknown route, 405 with Allow for a wrong method', async () => {
    expectProblem(await t.api.get('/api/nothing-here', t.adminToken), 404, 'route_not_found');
    const wrong = await t.api.request('PATCH', '/api/admin/organizations', { token: t.adminToken });
    expectProblem(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.get('allow')).toBe('GET, HEAD, POST');
    const wrongItem = await t.api.request('POST', '/api/admin/organizations/1', { token: t.adminToken, json: {} });
    expect(wrongItem.status).toBe(405);
    expect(wrongItem.headers.get('allow')).toBe('GET, HEAD, PUT, DELETE');
  });

  it('413 for a body over the route limit, declared or chunked, and keeps serving', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(JSON_BODY_BYTES) });
    expectProblem(await t.api.request('POST', '/api/admin/organizations', { token: t.adminToken, body: big, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');

    const half = JSON_BODY_BYTES / 2 + 1;
    const res = await postChunked('/api/admin/organizations', [Buffer.from('{"name":"'), Buffer.alloc(half, 0x61), Buffer.alloc(half, 0x61), Buffer.from('"}')]);
    expect(res.status).toBe(413);
    // BODY_LIMIT_BYTES (4096 here) is the limit of reading batches.
    const batch = await t.api.request('POST', '/api/readings', { token: t.adminToken, body: `{"meters":[${' '.repeat(5000)}]}`, headers: { 'content-type': 'application/json' } });
    expectProblem(batch, 413, 'payload_too_large');
    expect((await t.api.get('/health')).status).toBe(200);
  });

  it('a request refused before its body is read leaves its connection usable', async () => {
    // 401 (no token) and 403 (no right) come before the body is read; the body, small or large,
    // is then read and dropped, and the next request on the same connection is served.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, path: string, body?: string, token?: string) =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: t.app.port, method, path, agent, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end(body);
      });
    // fetch (undici) with a client token refused on its rights (403): the whole small body had
    // come before the refusal, and uWebSockets.js, paused until admission, must read on.
    const reader = await createOrgClient(t.api, t.adminToken, { permissions: ['Organization.Organization.Read'] });
    for (let i = 0; i < 3; i += 1) {
      expect((await t.api.post('/api/admin/organizations', { name: 'refused' }, reader.token)).status).toBe(403);
      expect((await t.api.get('/health')).status).toBe(200);
    }
    try {
      expect((await send('GET', '/health')).status).toBe(200);
      expect(await send('POST', '/api/admin/organizations', '{"name":"refused"}')).toEqual({ status: 401, reused: true });
      expect(await send('POST', '/api/admin/organizations', JSON.stringify({ name: 'x'.repeat(300_000) }))).toEqual({ status: 401, reused: true });
      expect(await send('GET', '/health')).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  });

  it('accepts a chunked body under the limit', async () => {
    const res = await postChunked('/api/admin/organizations', [Buffer.from('{"name":'), Buffer.from('"chunked org"}')]);
    expect(res.status).toBe(201);
  });

  it('400 for a bad percent-encoding in the query', async () => {
    const res = await t.api.get('/api/openadr/vtn/credential?organizationId=%zz', t.adminToken);
    expectProblem(res, 400, 'malformed_request');
  });
});

describe('request ids', () => {
  it('generates one per request and echoes a well-formed incoming one', async () => {
    const a = await t.api.get('/health');
    const b = await t.api.get('/health');
    expect(a.headers.get('x-request-id')).toBeTruthy();
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
    const echoed = await t.api.request('GET', '/health', { headers: { 'x-request-id': 'trace-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-123');
    const refused = await t.api.request('GET', '/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(refused.headers.get('x-request-id')).not.toBe('bad id with spaces');
  });
});

describe('operations', () => {
  it('GET /health answers with the database state', async () => {
    const res = await t.api.get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', database: 'ok' });
  });

  it('GET /metrics exposes request counters, latency and pool gauges', async () => {
    await t.api.get('/api/nothing');
    const res = await t.api.get('/metrics', t.adminToken);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/http_requests_total\{method="GET",route="\/health",status="200"\} \d+/);
    expect(res.text).toMatch(/http_requests_total\{method="GET",route="unmatched",status="404"\}/);
    expect(res.text).toContain('http_request_duration_seconds_bucket');
    expect(res.text).toContain('db_pool_connections');
    expect(res.text).toContain('process_cpu_user_seconds_total');
  });

  it('GET /api/openapi.json documents every route the server answers', async () => {
    const res = await t.api.get('/api/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    for (const route of t.app.router.routes) {
      const path = route.def.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      expect(doc.paths[path]?.[route.def.method.toLowerCase()], `${route.def.method} ${path}`).toBeDefined();
    }
    expect(doc.paths['/api/admin/users'].post.responses['201']).toBeDefined();
    expect(doc.paths['/oauth/token'].post.requestBody.content['application/x-www-form-urlencoded']).toBeDefined();
    expect(doc.components.schemas.Problem).toBeDefined();
    expect(doc.components.schemas.OrganizationClient.properties.roleIds).toBeDefined();
    expect(doc.components.schemas.OrganizationClientInput.properties.rolesIds).toBeDefined();
  });
});

describe('raw protocol abuse', () => {
  it('survives garbage, truncated requests and oversized headers', async () => {
    const port = t.app.port;
    await rawRequest(port, Buffer.from([0, 1, 2, 3, 255, 254, 13, 10, 13, 10]), 300);
    await rawRequest(port, 'POST /api/admin/organizations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na', 300);
    const huge = await rawRequest(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(200_000)}\r\n\r\n`, 1000);
    expect(huge).not.toMatch(/^HTTP\/1\.1 5/);
    const longQuery = await rawRequest(port, `GET /health?${'q=1&'.repeat(50_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 1000);
    expect(longQuery).not.toMatch(/^HTTP\/1\.1 5/);
    expect((await t.api.get('/health')).status).toBe(200);
  });
});
