// Regression: two requests in one TCP write (HTTP/1.1 pipelining) to a route that
// awaits the database got no answer at all: uWebSockets.js closes the connection when a request
// arrives before the previous response is written. The default server (node:http) answers them in
// order; uWebSockets.js stays available as HTTP_SERVER=uws with that limit documented.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { parseResponses, rawExchange } from '../support/rawHttp.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
beforeAll(async () => {
  // What a user gets without setting HTTP_SERVER.
  t = await startTestApp({ HTTP_SERVER: loadConfig({}).httpServer });
});
afterAll(() => t?.close());

describe('pipelined requests on the default server', () => {
  it('answers every request of one write, in order, on database-backed routes', async () => {
    const auth = `Authorization: Bearer ${t.adminToken}\r\n`;
    const requests = [
      'GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: r1\r\n\r\n',
      `GET /api/me HTTP/1.1\r\nHost: x\r\n${auth}X-Request-Id: r2\r\n\r\n`,
      `GET /api/admin/organizations HTTP/1.1\r\nHost: x\r\n${auth}X-Request-Id: r3\r\n\r\n`,
      'GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: r4\r\nConnection: close\r\n\r\n',
    ];
    const res = await rawExchange(t.app.port, requests.join(''), 5000);
    const responses = parseResponses(res.text);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(responses.map((r) => r.headers['x-request-id'])).toEqual(['r1', 'r2', 'r3', 'r4']);
  });

  it('answers 100 pipelined requests on one connection', async () => {
    const one = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';
    const res = await rawExchange(t.app.port, one.repeat(99) + 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 10_000);
    expect(parseResponses(res.text).filter((r) => r.status === 200)).toHaveLength(100);
  });
});
