// The HTTP server layer (node:http or uWebSockets.js, as HTTP_SERVER says) with routes made for the test: large responses under backpressure,
// unexpected errors (500 without internals), aborted requests, and draining on close.
import net from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpMetrics } from '../../src/http/metrics.ts';
import { MemoryRateLimitStore } from '../../src/http/rateLimit.ts';
import { Router } from '../../src/http/router.ts';
import { createHttpServer, type HttpServer } from '../../src/http/server.ts';
import type { RouteDef } from '../../src/http/types.ts';

const BIG = Buffer.alloc(20 * 1024 * 1024, 0x61);
let release: (() => void) | undefined;
let started: (() => void) | undefined;
const logged: unknown[] = [];

const routes: RouteDef[] = [
  {
    method: 'GET',
    path: '/big',
    summary: 'big',
    tags: [],
    auth: 'public',
    responses: { 200: { description: 'big' } },
    handler: () => ({ status: 200, raw: BIG, contentType: 'application/octet-stream' }),
  },
  {
    method: 'GET',
    path: '/boom',
    summary: 'boom',
    tags: [],
    auth: 'public',
    responses: { 200: { description: 'never' } },
    handler: () => {
      throw new Error('secret internal detail: password=hunter2');
    },
  },
  {
    method: 'POST',
    path: '/slow',
    summary: 'slow',
    tags: [],
    auth: 'public',
    bodyKind: 'raw',
    responses: { 200: { description: 'echo length', schema: { type: 'object', properties: { length: { type: 'integer' } } } } },
    handler: async (req) => {
      started?.();
      await new Promise<void>((resolve) => (release = resolve));
      return { status: 200, body: { length: req.rawBody!.length } };
    },
  },
];

let server: HttpServer;
let base: string;

beforeAll(async () => {
  const log = pino({ level: 'error' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
  const router = new Router(routes, { authenticate: async () => { throw new Error('no auth in this test'); }, rateLimits: new MemoryRateLimitStore(), log });
  ({ server } = createHttpServer(router, { host: '127.0.0.1', port: 0, bodyLimit: 1 << 20, trustProxy: false, log, metrics: new HttpMetrics() }));
  base = `http://127.0.0.1:${await server.listen()}`;
});
afterAll(() => server?.close(1000));

describe(`HTTP server layer (HTTP_SERVER=${process.env.HTTP_SERVER ?? 'node'})`, () => {
  it('streams a 20 MiB body to a slow reader completely (backpressure)', async () => {
    const received = await new Promise<number>((resolve, reject) => {
      const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
      let bytes = 0;
      let headerDone = false;
      let buffer = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        socket.pause();
        setTimeout(() => socket.resume(), 1); // a slow consumer
        if (!headerDone) {
          buffer = Buffer.concat([buffer, chunk]);
          const end = buffer.indexOf('\r\n\r\n');
          if (end === -1) return;
          headerDone = true;
          bytes += buffer.length - end - 4;
        } else bytes += chunk.length;
        if (bytes >= BIG.length) {
          socket.destroy();
          resolve(bytes);
        }
      });
      socket.on('error', reject);
      socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(received).toBe(BIG.length);
  });

  it('answers 500 without internals and logs the error with the request id', async () => {
    const res = await fetch(`${base}/boom`);
    expect(res.status).toBe(500);
    const body = (await res.json()) as { type: string; detail: string };
    const id = res.headers.get('x-request-id');
    expect(body.type).toBe('urn:flex:error:internal_error');
    expect(JSON.stringify(body)).not.toContain('hunter2');
    expect(body.detail).toContain(id);
    expect(logged.some((l: any) => l.requestId === id && l.msg === 'unhandled error')).toBe(true);
  });

  it('drains an in-flight request on close and refuses new connections', async () => {
    const inHandler = new Promise<void>((resolve) => (started = resolve));
    const pending = fetch(`${base}/slow`, { method: 'POST', body: 'abc' });
    await inHandler;
    let closed = false;
    const closing = server.close(5000).then((drained) => {
      closed = true;
      return drained;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(false);
    // A new connection is refused (keep-alive connections still get an answer, then are closed).
    const refused = await new Promise<string>((resolve) => {
      const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
      socket.on('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    release!();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ length: 3 });
    expect(await closing).toBe(true);
  });
});
