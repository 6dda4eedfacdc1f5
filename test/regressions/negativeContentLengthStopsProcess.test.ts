// Regression: `Content-Length: -1` on any route, without a token, ended the
// process (RangeError [ERR_OUT_OF_RANGE] from Buffer.allocUnsafe(-1) in BodyReader, thrown inside
// the uWebSockets.js handler). Now the length is checked first (digits only) and answered with 400;
// the process keeps serving, on either HTTP server.
import { afterAll, describe, expect, it } from 'vitest';
import { startFlexProcess, type FlexProcess } from '../support/flexProcess.ts';
import { availableServerKinds, rawExchange } from '../support/rawHttp.ts';
import { createTestDatabase } from '../support/testApp.ts';

const started: FlexProcess[] = [];
afterAll(async () => {
  for (const flex of started) {
    flex.child.kill('SIGKILL');
    await flex.exited;
  }
});

describe('Content-Length: -1', async () => {
  for (const kind of await availableServerKinds()) {
    it(`answers 400 and the ${kind} server's process keeps serving`, async () => {
      const flex = await startFlexProcess({ HTTP_SERVER: kind, DATABASE_URL: await createTestDatabase(), ADMIN_TOKEN: `flex_pat_${'c'.repeat(40)}` });
      started.push(flex);
      for (const request of [
        'GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
        'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: -1\r\n\r\nab',
        'POST /api/readings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -5\r\n\r\n{}',
      ]) {
        const res = await rawExchange(flex.port, request);
        // node:http answers 400; uWebSockets.js closes the connection without a status.
        if (kind === 'node') expect(res.statuses).toEqual([400]);
        expect(res.statuses.filter((s) => s >= 500)).toEqual([]);
        expect(res.closed).toBe(true);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(flex.child.exitCode).toBeNull();
      expect((await fetch(`${flex.baseUrl}/health`)).status).toBe(200);
      expect(flex.output()).not.toMatch(/ERR_OUT_OF_RANGE|RangeError/);
    });
  }
});
