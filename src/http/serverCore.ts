// What both HTTP servers share (uwsServer.ts on uWebSockets.js, nodeServer.ts on node:http): the
// route table, request ids, in-flight accounting with metrics and logs, the two-step run of a
// request through the Router, and draining on shutdown. The adapters only move bytes: they read
// the request line, headers and body from their socket and write the Outgoing the core returns.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { BodyBudget, BodyReader } from './body.ts';
import { HttpError } from './errors.ts';
import type { HttpMetrics } from './metrics.ts';
import type { CompiledRoute, Outgoing, RequestHead, Router } from './router.ts';
import type { HttpMethod } from './types.ts';

export type HttpServerKind = 'uws' | 'node';

export interface ServerOptions {
  host: string;
  port: number;
  /** The limit of `large` routes (reading batches): BODY_LIMIT_BYTES. */
  bodyLimit: number;
  /** Body bytes held at once by all other routes (BODY_BUDGET_BYTES); default DEFAULT_BODY_BUDGET_BYTES. */
  bodyBudget?: number;
  trustProxy: boolean;
  log: Logger;
  metrics: HttpMetrics;
  /** Request line plus headers; more gets 431 (or 414 when the request line alone is too long). */
  maxHeaderBytes?: number;
  /** Request target (path and query); longer gets 414. */
  maxUrlBytes?: number;
}

export const DEFAULT_MAX_HEADER_BYTES = 32 * 1024;
export const DEFAULT_BODY_BUDGET_BYTES = 32 * 1024 * 1024;
export const DEFAULT_MAX_URL_BYTES = 16 * 1024;

/** One HTTP front, whichever library serves it. */
export interface HttpServer {
  readonly kind: HttpServerKind;
  /** What runs, for the start-up log: library and version. */
  readonly description: string;
  port: number;
  listen(): Promise<number>;
  /** Stops accepting connections and waits (up to timeoutMs) for in-flight requests to finish. */
  close(timeoutMs: number): Promise<boolean>;
  readonly activeRequests: number;
  /** Body bytes held now by routes other than reading batches (within BODY_BUDGET_BYTES). */
  readonly bodyBytesHeld: number;
}

/** The request headers handlers may read. A fixed set read by name keeps every headers object
 * the same shape (copying all headers built dictionary-mode objects, measurably slower per
 * request on uWebSockets.js). Add a name here when a route needs another header. */
export const READ_HEADERS = [
  'authorization',
  'content-type',
  'content-length',
  'transfer-encoding',
  'x-request-id',
  'x-forwarded-for',
  'accept',
  'accept-encoding',
  'if-none-match',
  'user-agent',
  'origin',
  'access-control-request-method',
  'access-control-request-headers',
  'host',
  'x-forwarded-proto',
  'x-forwarded-host',
] as const;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface Exchange {
  aborted: boolean;
  finished: boolean;
  /** Close the connection after responding (body not consumed, or shutting down). */
  closeAfter: boolean;
  /** Created only when a handler asks for `req.signal` (an AbortController per request costs). */
  controller: AbortController | undefined;
  started: number;
  method: string;
  route: string;
  requestId: string;
}

/** A request's declared body length: a number, none, or a value no client may send. */
export function parseContentLength(value: string | undefined): number | undefined | 'invalid' {
  if (value === undefined || value === '') return undefined;
  if (!/^[0-9]{1,15}$/.test(value)) return 'invalid';
  return Number(value);
}

export interface RouteMatch {
  route: CompiledRoute;
  params: string[];
}

interface PatternNode {
  routes: Map<string, CompiledRoute>;
  segments: (string | null)[];
}

/** Method and path → route, for fronts that do not route themselves (node:http). Matches as
 * uWebSockets.js does: literal segments exactly, `:name` one whole non-empty segment. */
export class RouteTable {
  private readonly patterns: PatternNode[] = [];

  constructor(routes: readonly CompiledRoute[]) {
    const byPath = new Map<string, PatternNode>();
    for (const route of routes) {
      let node = byPath.get(route.def.path);
      if (!node) {
        node = { routes: new Map(), segments: route.def.path.split('/').map((s) => (s.startsWith(':') ? null : s)) };
        byPath.set(route.def.path, node);
        this.patterns.push(node);
      }
      node.routes.set(route.def.method, route);
    }
    // Literal segments win over parameters (`/x/new` before `/x/:id`), as in uWebSockets.js.
    this.patterns.sort((a, b) => specificity(b) - specificity(a));
  }

  /** The route for method and path; `allow` lists the methods of a path that exists. */
  match(method: string, path: string): RouteMatch | { allow: string } | undefined {
    const segments = path.split('/');
    let allow: string | undefined;
    for (const node of this.patterns) {
      if (node.segments.length !== segments.length) continue;
      const params = matchSegments(node.segments, segments);
      if (!params) continue;
      const route = node.routes.get(method === 'HEAD' ? 'GET' : method);
      if (route) return { route, params };
      allow ??= allowOf(node.routes);
    }
    return allow === undefined ? undefined : { allow };
  }
}

function specificity(node: PatternNode): number {
  let score = 0;
  for (const segment of node.segments) score = score * 2 + (segment === null ? 0 : 1);
  return score;
}

function matchSegments(pattern: (string | null)[], segments: string[]): string[] | undefined {
  const params: string[] = [];
  for (let i = 0; i < pattern.length; i += 1) {
    const expected = pattern[i];
    const actual = segments[i]!;
    if (expected === null) {
      if (actual === '') return undefined;
      params.push(actual);
    } else if (expected !== actual) return undefined;
  }
  return params;
}

export function allowOf(routes: Map<string, CompiledRoute> | readonly CompiledRoute[]): string {
  const methods: string[] = Array.isArray(routes) ? routes.map((r) => r.def.method) : [...(routes as Map<string, CompiledRoute>).keys()];
  const get = methods.indexOf('GET');
  if (get !== -1) methods.splice(get + 1, 0, 'HEAD');
  return methods.join(', ');
}

export function methodNotAllowed(method: string, allow: string): HttpError {
  return new HttpError('method_not_allowed', `${method} is not allowed here; allowed: ${allow}`, { headers: { Allow: allow } });
}

export function routeNotFound(method: string, path: string): HttpError {
  return new HttpError('route_not_found', `No route for ${method} ${path}`);
}

/** The body, read once the request is admitted (BodyReader#start); undefined when there is none. */
export type BodySource = BodyReader | undefined;

export class ServerCore {
  private inFlight = 0;
  private draining = false;
  private drained: (() => void) | undefined;
  private readonly bootId = randomBytes(4).toString('hex');
  private sequence = 0;
  readonly maxHeaderBytes: number;
  readonly maxUrlBytes: number;
  /** Shared by the bodies of every route but reading batches (body.ts). */
  readonly bodyBudget: BodyBudget;

  constructor(
    readonly router: Router,
    readonly options: ServerOptions,
  ) {
    this.maxHeaderBytes = options.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES;
    this.maxUrlBytes = options.maxUrlBytes ?? DEFAULT_MAX_URL_BYTES;
    this.bodyBudget = new BodyBudget(options.bodyBudget ?? DEFAULT_BODY_BUDGET_BYTES);
  }

  /** The body limit of a route in bytes. */
  bodyLimitOf(route: CompiledRoute): number {
    return route.bodyLimit === 'large' ? this.options.bodyLimit : route.bodyLimit;
  }

  /** A reader for a request's body, limited and budgeted as its route says; `begin` lets the body
   * flow once the request is admitted. */
  bodyReader(route: CompiledRoute, declared: number | undefined, begin: () => void): BodyReader {
    return new BodyReader(this.bodyLimitOf(route), declared, route.bodyLimit === 'large' ? undefined : this.bodyBudget, begin);
  }

  get isDraining(): boolean {
    return this.draining;
  }

  get activeRequests(): number {
    return this.inFlight;
  }

  nextRequestId(incoming: string | undefined): string {
    if (incoming && REQUEST_ID.test(incoming)) return incoming;
    this.sequence += 1;
    return `${this.bootId}-${this.sequence.toString(36)}`;
  }

  begin(method: string, route: string, requestId: string): Exchange {
    this.inFlight += 1;
    return {
      aborted: false,
      finished: false,
      closeAfter: this.draining,
      controller: undefined,
      started: performance.now(),
      method,
      route,
      requestId,
    };
  }

  abort(ex: Exchange): void {
    ex.aborted = true;
    ex.controller?.abort();
    this.end(ex, 499);
  }

  end(ex: Exchange, status: number): void {
    if (ex.finished) return;
    ex.finished = true;
    this.inFlight -= 1;
    const seconds = (performance.now() - ex.started) / 1000;
    this.options.metrics.observe(ex.method, ex.route, status, seconds);
    const fields = { requestId: ex.requestId, method: ex.method, route: ex.route, status, ms: Math.round(seconds * 1000) };
    if (status >= 500 && status !== 503) this.options.log.warn(fields, 'request failed');
    else this.options.log.debug(fields, 'request');
    if (this.inFlight === 0 && this.draining) this.drained?.();
  }

  /** Runs a routed request: admit (auth, quota), then the body, then the handler; never throws. */
  async run(ex: Exchange, route: CompiledRoute, head: RequestHead, body: BodySource): Promise<Outgoing> {
    try {
      const admitted = await this.router.admit(route, head);
      const bytes = body ? await body.start() : undefined;
      const reply = await this.router.complete(route, head, admitted, bytes, {
        get signal() {
          ex.controller ??= new AbortController();
          if (ex.aborted) ex.controller.abort();
          return ex.controller.signal;
        },
      });
      return await this.router.finish(route, head, reply);
    } catch (err) {
      // Answered without (all of) its body. A bounded body of declared length is read and
      // dropped after the answer, holding nothing (a lingering close, as nginx does): the client
      // finishes its upload and reads the answer instead of meeting a reset mid-upload, and may
      // keep the connection. A chunked body (no end known) or a reading batch (up to
      // BODY_LIMIT_BYTES) is not read: the connection closes after the answer.
      if (body && !body.complete) {
        if (route.bodyLimit !== 'large' && body.declaredLength !== undefined && !ex.aborted) void body.discard();
        else ex.closeAfter = true;
      }
      return this.router.encodeError(err, ex.requestId, route, head.headers['origin']);
    }
  }

  /** An error answer; `origin` (the request's Origin header) adds the CORS headers it is allowed. */
  errorOutgoing(error: HttpError, requestId: string, route?: CompiledRoute, origin?: string): Outgoing {
    return this.router.encodeError(error, requestId, route, origin);
  }

  /** What a path without the request's method answers: a CORS preflight's answer for OPTIONS when
   * CORS is configured (router.preflight), else 405 with Allow. */
  fallbackAnswer(method: string, headers: Readonly<Record<string, string>>, allow: string): HttpError | Outgoing {
    // HEAD (answered wherever GET is) is a CORS-safelisted method: preflights list the route methods.
    const preflight = method === 'OPTIONS' ? this.router.preflight(headers, allow.split(', ').filter((m) => m !== 'HEAD')) : undefined;
    return preflight ?? methodNotAllowed(method, allow);
  }

  /** Marks the server as draining; resolves true once no request is in flight (or false on timeout). */
  drain(timeoutMs: number): Promise<boolean> {
    this.draining = true;
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.drained = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }
}

export class TakenPortError extends Error {
  constructor(host: string, port: number, detail: string) {
    super(`Port ${port} on ${host} is already in use (${detail}): stop the other process or choose another PORT`);
    this.name = 'TakenPortError';
  }
}

export type { HttpMethod };

/** The request line and headers as both fronts hand them to the router. The peer address is read
 * on demand (few routes need it) through `peer`, which each front supplies from its socket. */
export class Head implements RequestHead {
  private address: string | undefined;

  constructor(
    readonly method: HttpMethod,
    readonly path: string,
    readonly rawQuery: string,
    readonly headers: Record<string, string>,
    readonly rawParams: string[],
    readonly requestId: string,
    private readonly peer: () => string,
    private readonly trustProxy: boolean,
  ) {}

  get remoteAddress(): string {
    if (this.address === undefined) {
      const forwarded = this.trustProxy ? this.headers['x-forwarded-for'] : undefined;
      this.address = forwarded ? forwarded.split(',')[0]!.trim() : this.peer();
    }
    return this.address;
  }
}
