// Regression: two requests in one TCP write (HTTP/1.1 pipelining) to a route that awaits the
// database got no answer at all, and the connection stayed open: uWebSockets.js closes the
// connection when a request arrives before the previous response is written, and the front did
// not say so. Now each front does one of two things a client can rely on: node:http answers every
// request in order; uWebSockets.js (the default where its trusted build loads) answers in order
// what it answers and closes the connection promptly, so the client retries the rest on a new
// connection (RFC 9112 §9.3.2). Both fronts are run here where they load.
import { afterAll, describe, expect, it } from 'vitest';
import { availableServerKinds, parseResponses, rawExchange } from '../support/rawHttp.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const apps: TestApp[] = [];
afterAll(async () => {
  for (const t of apps) await t.close();
});

describe('pipelined requests', async () => {
  for (const kind of await availableServerKinds()) {
    it(`${kind}: every request of one write answered in order, or the answered ones in order and a prompt close`, async () => {
      const t = await startTestApp({ HTTP_SERVER: kind });
      apps.push(t);
      const auth = `Authorization: Bearer ${t.adminToken}\r\n`;
      const ids = ['r1', 'r2', 'r3', 'r4'];
      const requests = [
        'GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: r1\r\n\r\n',
        `GET /api/me HTTP/1.1\r\nHost: x\r\n${auth}X-Request-Id: r2\r\n\r\n`,
        `GET /api/admin/organizations HTTP/1.1\r\nHost: x\r\n${auth}X-Request-Id: r3\r\n\r\n`,
        // No Connection: close: a close is the server's own doing.
        'GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: r4\r\n\r\n',
      ];
      const res = await rawExchange(t.app.port, requests.join(''), 3000);
      const responses = parseResponses(res.text);
      expect(responses.every((r) => r.status === 200)).toBe(true);
      expect(responses.map((r) => r.headers['x-request-id'])).toEqual(ids.slice(0, responses.length));
      if (kind === 'node') expect(responses).toHaveLength(4);
      else expect(responses.length === 4 || res.closed).toBe(true);

      const one = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';
      const many = await rawExchange(t.app.port, one.repeat(99) + 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 10_000);
      const answered = parseResponses(many.text);
      expect(answered.every((r) => r.status === 200)).toBe(true);
      if (kind === 'node') expect(answered).toHaveLength(100);
      expect(many.closed).toBe(true);
    });
  }
});
