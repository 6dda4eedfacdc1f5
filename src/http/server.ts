// Chooses the HTTP front: uWebSockets.js where its trusted native build loads here (uwsLoader.ts:
// a binary whose sha256 is in the loader's table), else node:http, as HTTP_SERVER says (default
// `auto`, DESIGN.md "HTTP server"). Both serve the same Router through ServerCore.
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
    return { server: new NodeHttpServer(router, options), reason: 'HTTP_SERVER=node' };
  }
  const loaded = loadUws();
  if (loaded.ok) {
    return { server: new UwsHttpServer(router, options, loaded.uws, loaded.build), reason: `HTTP_SERVER=${choice}: ${loaded.binary} loads (sha256 as pinned)` };
  }
  if (choice === 'uws') {
    throw new HttpServerUnavailable(`HTTP_SERVER=uws, but uWebSockets.js does not load on Node ${process.versions.node} here: ${loaded.reason}. Use HTTP_SERVER=node or auto.`);
  }
  return { server: new NodeHttpServer(router, options), reason: `HTTP_SERVER=auto: uWebSockets.js does not load here (${loaded.reason}), so node:http` };
}

/** For code without a Config (tests, benchmarks): HTTP_SERVER from the environment, default auto. */
export function envChoice(env: NodeJS.ProcessEnv = process.env): HttpServerChoice {
  const value = env.HTTP_SERVER;
  return value === 'uws' || value === 'node' ? value : 'auto';
}
