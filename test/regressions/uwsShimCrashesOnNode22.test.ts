// Regression: on Node 22 the @trufflesuite uWebSockets.js package has no native binary
// and its entry point falls back to a JavaScript imitation that prints "listening" and crashes on
// the first request (TypeError: Invalid URL). The loader now requires the `.node` binaries
// themselves: a build either loads natively or is reported unusable with the reason, and then the
// node:http server runs. (CI also runs the whole suite on Node 22 and 24.)
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { HttpMetrics } from '../../src/http/metrics.ts';
import { MemoryRateLimitStore } from '../../src/http/rateLimit.ts';
import { Router } from '../../src/http/router.ts';
import { createHttpServer, HttpServerUnavailable } from '../../src/http/server.ts';
import { loadUws, UWS_BUILD } from '../../src/http/uwsLoader.ts';

const NODE_22_ABI = '127';

describe('uWebSockets.js on a Node release without a matching binary', () => {
  it('never loads the JavaScript fallback: the native binary or a reason', () => {
    const result = loadUws(UWS_BUILD, NODE_22_ABI);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(new RegExp(`^uWebSockets\\.js \\(uWebSockets\\.js v20\\.30\\.0\\): no binary for Node ABI 127 on ${process.platform}-${process.arch}`));
  });

  it('on this Node: HTTP_SERVER=auto runs uWS natively or node:http, HTTP_SERVER=uws stops the start with the reasons', () => {
    const log = pino({ level: 'silent' });
    const router = new Router([], { authenticate: async () => Promise.reject(new Error('none')), rateLimits: new MemoryRateLimitStore(), log });
    const options = { host: '127.0.0.1', port: 0, bodyLimit: 1024, trustProxy: false, log, metrics: new HttpMetrics() };
    const loaded = loadUws();
    const auto = createHttpServer(router, options, 'auto');
    expect(auto.server.kind).toBe(loaded.ok ? 'uws' : 'node');
    expect(auto.reason).toMatch(loaded.ok ? /\.node loads/ : /uWebSockets\.js does not load here/);
    if (loaded.ok) expect(createHttpServer(router, options, 'uws').server.kind).toBe('uws');
    else expect(() => createHttpServer(router, options, 'uws')).toThrow(HttpServerUnavailable);
    expect(createHttpServer(router, options, 'node').server.kind).toBe('node');
  });
});
