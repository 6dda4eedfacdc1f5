// Chooses the HTTP front: uWebSockets.js where one of its native builds loads here (uwsLoader.ts),
// else node:http, as HTTP_SERVER says. Both serve the same Router through ServerCore.
import { NodeHttpServer } from './nodeServer.ts';
import type { Router } from './router.ts';
import type { HttpServer, HttpServerKind, ServerOptions } from './serverCore.ts';
import { loadUws } from './uwsLoader.ts';
import { UwsHttpServer } from './uwsServer.ts';

export type { HttpServer, HttpServerKind, ServerOptions } from './serverCore.ts';
export { TakenPortError } from './serverCore.ts';

/** `node`: always node:http; `uws`: uWebSockets.js or a start error; `auto`: uWS where it loads. */
export type HttpServerChoice = 'auto' | HttpServerKind;

export class HttpServerUnavailable extends Error {}

/** Why this server runs, for the start-up log. */
export interface HttpServerSelection {
  server: HttpServer;
  reason: string;
}

export function createHttpServer(router: Router, options: ServerOptions, choice: HttpServerChoice = envChoice()): HttpServerSelection {
  if (choice === 'node') {
    return { server: new NodeHttpServer(router, options), reason: 'HTTP_SERVER=node (the default: answers pipelined requests, every Node release)' };
  }
  const loaded = loadUws();
  if (loaded.ok) {
    const skipped = loaded.skipped.length > 0 ? `; skipped ${loaded.skipped.join('; ')}` : '';
    return { server: new UwsHttpServer(router, options, loaded.uws, loaded.build), reason: `HTTP_SERVER=${choice}: ${loaded.binary} loads${skipped}` };
  }
  if (choice === 'uws') {
    throw new HttpServerUnavailable(`HTTP_SERVER=uws, but no uWebSockets.js build loads on Node ${process.versions.node} here: ${loaded.reasons.join('; ')}. Use HTTP_SERVER=node or auto.`);
  }
  return { server: new NodeHttpServer(router, options), reason: `HTTP_SERVER=auto: no uWebSockets.js build loads (${loaded.reasons.join('; ')})` };
}

/** For code without a Config (tests, benchmarks): HTTP_SERVER from the environment, default node. */
export function envChoice(env: NodeJS.ProcessEnv = process.env): HttpServerChoice {
  const value = env.HTTP_SERVER;
  return value === 'uws' || value === 'auto' ? value : 'node';
}
