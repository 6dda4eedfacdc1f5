// Regression: HEAD got 405 plus a 161-byte body on every route, which broke
// Node's own HTTP client (HPE_INVALID_CONSTANT on the next response of a kept-alive connection).
// HEAD is now GET without the body (same status and headers, the GET body's Content-Length), and
// 405 where no GET exists, without a body, on both HTTP servers.
import { request, Agent } from 'node:http';
import { describe, expect, it } from 'vitest';
import { availableServerKinds } from '../support/rawHttp.ts';
import { startTestApp } from '../support/testApp.ts';

function send(port: number, agent: Agent, method: string, path: string): Promise<{ status: number; length: string | undefined; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent }, (res) => {
      let bytes = 0;
      res.on('data', (d: Buffer) => (bytes += d.length));
      res.on('end', () => resolve({ status: res.statusCode!, length: res.headers['content-length'], bytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HEAD', async () => {
  for (const kind of await availableServerKinds()) {
    it(`is GET without a body on the ${kind} server, and Node's client keeps working`, async () => {
      const t = await startTestApp({ HTTP_SERVER: kind });
      const agent = new Agent({ keepAlive: kind === 'node', maxSockets: 1 });
      try {
        const get = await send(t.app.port, agent, 'GET', '/api/openapi.json');
        const head = await send(t.app.port, agent, 'HEAD', '/api/openapi.json');
        expect(head).toEqual({ status: 200, length: String(get.bytes), bytes: 0 });
        const notGet = await send(t.app.port, agent, 'HEAD', '/oauth/token');
        expect(notGet.status).toBe(405);
        expect(notGet.bytes).toBe(0);
        const unknown = await send(t.app.port, agent, 'HEAD', '/no/such/route');
        expect([unknown.status, unknown.bytes]).toEqual([404, 0]);
        expect((await send(t.app.port, agent, 'GET', '/health')).status).toBe(200);
      } finally {
        agent.destroy();
        await t.close();
      }
    });
  }
});
