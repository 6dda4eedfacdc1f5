// Regression: a second instance started on the same port started without complaint
// (uWebSockets.js listens with SO_REUSEPORT by default) and the kernel split requests between two
// applications with different databases. Both servers now listen exclusively: a taken port stops
// the start with a message naming the port.
import net from 'node:net';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { HttpMetrics } from '../../src/http/metrics.ts';
import { MemoryRateLimitStore } from '../../src/http/rateLimit.ts';
import { Router } from '../../src/http/router.ts';
import { createHttpServer, TakenPortError, type HttpServer } from '../../src/http/server.ts';
import { startFlexProcess, type FlexProcess } from '../support/flexProcess.ts';
import { availableServerKinds } from '../support/rawHttp.ts';
import { createTestDatabase } from '../support/testApp.ts';

const log = pino({ level: 'silent' });
const router = new Router([], { authenticate: async () => Promise.reject(new Error('none')), rateLimits: new MemoryRateLimitStore(), log });
const open: HttpServer[] = [];
const processes: FlexProcess[] = [];
afterAll(async () => {
  for (const server of open) await server.close(100);
  for (const flex of processes) {
    flex.child.kill('SIGKILL');
    await flex.exited;
  }
});

function server(kind: 'node' | 'uws', port: number): HttpServer {
  const { server } = createHttpServer(router, { host: '127.0.0.1', port, bodyLimit: 1024, trustProxy: false, log, metrics: new HttpMetrics() }, kind);
  return server;
}

describe('one instance per port', async () => {
  const kinds = await availableServerKinds();
  for (const first of kinds) {
    for (const second of kinds) {
      it(`${second} refuses a port ${first} holds, naming the port`, async () => {
        const holder = server(first, 0);
        open.push(holder);
        const port = await holder.listen();
        const error = await server(second, port).listen().then(() => undefined, (err: unknown) => err);
        expect(error).toBeInstanceOf(TakenPortError);
        expect((error as Error).message).toContain(`Port ${port} on 127.0.0.1 is already in use`);
      });
    }
  }

  it('refuses a port another program holds', async () => {
    const other = net.createServer();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const port = (other.address() as net.AddressInfo).port;
    try {
      for (const kind of kinds) await expect(server(kind, port).listen()).rejects.toThrow(`Port ${port} on 127.0.0.1 is already in use`);
    } finally {
      other.close();
    }
  });

  it('a second Flex process on the same port stops with a message naming the port, the first keeps serving', async () => {
    const env = { HOST: '127.0.0.1', ADMIN_TOKEN: `flex_pat_${'p'.repeat(40)}`, DATABASE_URL: await createTestDatabase() };
    const flex = await startFlexProcess(env);
    processes.push(flex);
    const second = startFlexProcess({ ...env, PORT: String(flex.port), DATABASE_URL: await createTestDatabase() });
    await expect(second).rejects.toThrow(new RegExp(`Port ${flex.port} on 127\\.0\\.0\\.1 is already in use`));
    expect((await fetch(`${flex.baseUrl}/health`)).status).toBe(200);
  });
});
