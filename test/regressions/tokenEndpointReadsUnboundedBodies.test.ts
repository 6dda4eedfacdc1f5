// Regression: the unauthenticated token endpoints (POST /oauth/token and OpenADR 3.1's
// POST …/auth/token) accepted bodies up to BODY_LIMIT_BYTES (256 MiB), read and parsed them at
// ~12× their size before any rate limit, and every route allocated a buffer of the declared
// Content-Length before the request was admitted (a declared length, with nothing sent after it,
// held that memory and left the request unanswered). Form routes now take 16 KiB; a longer
// declared length is refused at once with 413, and a body is read only after admission.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMALL_BODY_BYTES } from '../../src/http/body.ts';
import { rawExchange } from '../support/rawHttp.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

const PATHS = ['/oauth/token', '/api/openadr/3.1.0/auth/token'];

describe('bodies of the token endpoints', () => {
  for (const path of PATHS) {
    it(`${path}: 413 for a form longer than ${SMALL_BODY_BYTES} bytes, sent or only declared`, async () => {
      const sent = await t.api.request('POST', path, { body: 'a&'.repeat(SMALL_BODY_BYTES), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(sent.status).toBe(413);
      expect(sent.body).toMatchObject({ error: 'invalid_request' });
      // 64 MiB declared and never sent: answered at once, nothing allocated for it.
      const declared = await rawExchange(t.app.port, `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${64 << 20}\r\n\r\na&a`, 3000);
      expect(declared.statuses).toEqual([413]);
      expect(declared.closed).toBe(true);
    });
  }

  it('a form at the limit is still read and answered', async () => {
    const form = `grant_type=client_credentials&client_id=nobody&client_secret=x&audience=flex-api&pad=${'p'.repeat(SMALL_BODY_BYTES - 100)}`;
    expect(form.length).toBeLessThanOrEqual(SMALL_BODY_BYTES);
    const res = await t.api.request('POST', '/oauth/token', { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(401);
  });
});
