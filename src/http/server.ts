// The only module that touches uWebSockets.js: it registers the compiled routes, tracks aborts
// (onAborted before any await), reads bodies with a limit, writes corked responses, streams large
// bodies with backpressure (tryEnd + onWritable), answers 404/405, and drains in-flight requests
// on shutdown. Everything else happens in the Router, which never sees a socket.
import { STATUS_CODES } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import uWS, { type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';
import { BodyReader } from './body.ts';
import { HttpError } from './errors.ts';
import type { HttpMetrics } from './metrics.ts';
import type { CompiledRoute, Outgoing, RequestHead, Router } from './router.ts';
import type { HttpMethod } from './types.ts';

export interface ServerOptions {
  host: string;
  port: number;
  bodyLimit: number;
  trustProxy: boolean;
  log: Logger;
  metrics: HttpMetrics;
}

/** Bodies above this size are sent with tryEnd/onWritable instead of one end() copy. */
const STREAM_THRESHOLD = 64 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const METHODS: Record<HttpMethod, 'get' | 'post' | 'put' | 'patch' | 'del'> = {
  GET: 'get',
  POST: 'post',
  PUT: 'put',
  PATCH: 'patch',
  DELETE: 'del',
};

interface Exchange {
  res: HttpResponse;
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

export class HttpServer {
  private readonly app: TemplatedApp = uWS.App();
  private listenSocket: us_listen_socket | undefined;
  private inFlight = 0;
  private draining = false;
  private drained: (() => void) | undefined;
  private readonly bootId = randomBytes(4).toString('hex');
  private sequence = 0;
  port = 0;

  constructor(
    private readonly router: Router,
    private readonly options: ServerOptions,
  ) {
    const byPattern = new Map<string, CompiledRoute[]>();
    for (const route of router.routes) {
      const list = byPattern.get(route.def.path) ?? [];
      list.push(route);
      byPattern.set(route.def.path, list);
    }
    for (const [pattern, routes] of byPattern) {
      for (const route of routes) this.app[METHODS[route.def.method]](pattern, (res, req) => this.onRequest(res, req, route));
      const methods = routes.map((r) => r.def.method);
      const allow = methods.join(', ');
      this.app.any(pattern, (res, req) =>
        this.onFallback(
          res,
          req,
          (req.getMethod() === 'options' ? this.router.preflight(readHeaders(req), methods) : undefined) ??
            new HttpError('method_not_allowed', `${req.getCaseSensitiveMethod()} is not allowed here; allowed: ${allow}`, { headers: { Allow: allow } }),
          pattern,
        ),
      );
    }
    this.app.any('/*', (res, req) => this.onFallback(res, req, new HttpError('route_not_found', `No route for ${req.getCaseSensitiveMethod()} ${req.getUrl()}`), 'unmatched'));
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(this.options.host, this.options.port, (socket) => {
        if (!socket) return reject(new Error(`Cannot listen on ${this.options.host}:${this.options.port}`));
        this.listenSocket = socket;
        this.port = uWS.us_socket_local_port(socket as never);
        resolve(this.port);
      });
    });
  }

  /** Stops accepting connections and waits (up to timeoutMs) for in-flight requests to finish. */
  async close(timeoutMs: number): Promise<boolean> {
    this.draining = true;
    if (this.listenSocket) uWS.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
    if (this.inFlight === 0) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.drained = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }

  get activeRequests(): number {
    return this.inFlight;
  }

  private nextRequestId(incoming: string): string {
    if (incoming && REQUEST_ID.test(incoming)) return incoming;
    this.sequence += 1;
    return `${this.bootId}-${this.sequence.toString(36)}`;
  }

  private begin(res: HttpResponse, method: string, route: string, requestId: string): Exchange {
    const ex: Exchange = {
      res,
      aborted: false,
      finished: false,
      closeAfter: this.draining,
      controller: undefined,
      started: performance.now(),
      method,
      route,
      requestId,
    };
    this.inFlight += 1;
    res.onAborted(() => {
      ex.aborted = true;
      ex.controller?.abort();
      this.end(ex, 499);
    });
    return ex;
  }

  private end(ex: Exchange, status: number): void {
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

  /** Unroutable requests (404, 405) and CORS preflights (an Outgoing from the router). */
  private onFallback(res: HttpResponse, req: HttpRequest, error: HttpError | Outgoing, label: string): void {
    const origin = req.getHeader('origin');
    const ex = this.begin(res, req.getMethod().toUpperCase(), label, this.nextRequestId(req.getHeader('x-request-id')));
    // Drop any body the client sends with an unroutable request and close afterwards.
    if (hasBody(req)) {
      ex.closeAfter = true;
      res.onData(() => undefined);
    }
    this.write(ex, error instanceof HttpError ? this.router.encodeError(error, ex.requestId, undefined, origin) : error);
  }

  private onRequest(res: HttpResponse, req: HttpRequest, route: CompiledRoute): void {
    const head = this.readHead(res, req, route);
    const ex = this.begin(res, route.def.method, route.def.path, head.requestId);
    const length = head.headers['content-length'];
    const bodyPresent = length !== undefined ? length !== '0' : head.headers['transfer-encoding'] !== undefined;
    let reader: BodyReader | undefined;
    if (bodyPresent) {
      const declared = head.headers['content-length'];
      const length = declared === undefined ? undefined : Number(declared);
      if (length !== undefined && length > this.options.bodyLimit) {
        ex.closeAfter = true;
        res.onData(() => undefined);
        const tooLarge = new HttpError('payload_too_large', `The request body exceeds the limit of ${this.options.bodyLimit} bytes`);
        this.write(ex, this.router.encodeError(tooLarge, ex.requestId, route, head.headers['origin']));
        return;
      }
      reader = new BodyReader(res, this.options.bodyLimit, length !== undefined && Number.isSafeInteger(length) ? length : undefined);
    }
    void this.process(ex, route, head, reader);
  }

  private async process(ex: Exchange, route: CompiledRoute, head: RequestHead, reader: BodyReader | undefined): Promise<void> {
    let out: Outgoing;
    try {
      const admitted = await this.router.admit(route, head);
      const body = reader ? await reader.done : undefined;
      if (ex.aborted) return;
      const reply = await this.router.complete(route, head, admitted, body, {
        get signal() {
          ex.controller ??= new AbortController();
          if (ex.aborted) ex.controller.abort();
          return ex.controller.signal;
        },
      });
      out = await this.router.finish(route, head, reply);
    } catch (err) {
      // Answering before the whole body arrived: the connection cannot be reused.
      if (reader && !reader.complete) ex.closeAfter = true;
      out = this.router.encodeError(err, ex.requestId, route, head.headers['origin']);
    }
    this.write(ex, out);
  }

  private readHead(res: HttpResponse, req: HttpRequest, route: CompiledRoute): RequestHead {
    const headers = readHeaders(req);
    const params = route.paramNames.length === 0 ? NO_PARAMS : route.paramNames.map((_, i) => req.getParameter(i));
    return new Head(route.def.method, req.getUrl(), req.getQuery() ?? '', headers, params, this.nextRequestId(headers['x-request-id'] ?? ''), res, this.options.trustProxy);
  }

  private write(ex: Exchange, out: Outgoing): void {
    if (ex.aborted || ex.finished) return;
    const { res } = ex;
    const body = out.body;
    const close = ex.closeAfter || this.draining;
    if (body !== undefined && body.length > STREAM_THRESHOLD && !close) {
      this.stream(ex, out, typeof body === 'string' ? Buffer.from(body) : body);
      return;
    }
    res.cork(() => {
      this.writeHead(res, out, ex.requestId);
      if (body === undefined) res.endWithoutBody(0, close);
      else res.end(body, close);
    });
    this.end(ex, out.status);
  }

  private writeHead(res: HttpResponse, out: Outgoing, requestId: string): void {
    res.writeStatus(statusLine(out.status));
    res.writeHeader(X_REQUEST_ID, requestId);
    const headers = out.headers;
    for (const name in headers) res.writeHeader(headerName(name), headerValue(headers[name]!));
  }

  /** Large bodies: write what the socket takes, continue on writable (backpressure). */
  private stream(ex: Exchange, out: Outgoing, body: Buffer): void {
    const { res } = ex;
    const total = body.length;
    let startOffset = 0;
    let done = false;
    res.cork(() => {
      this.writeHead(res, out, ex.requestId);
      startOffset = res.getWriteOffset();
      [, done] = res.tryEnd(body, total);
    });
    if (done) return this.end(ex, out.status);
    res.onWritable((offset) => {
      const [ok, finished] = res.tryEnd(body.subarray(offset - startOffset), total);
      if (finished) this.end(ex, out.status);
      return ok;
    });
  }
}

const NO_PARAMS: string[] = [];

/** The request headers handlers may read. A fixed set read by name keeps every headers object
 * the same shape (copying all headers with forEach built dictionary-mode objects, measurably
 * slower per request). Add a name here when a route needs another header. */
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
] as const;

// uWS converts every JS string argument to UTF-8; header names pre-encoded once skip that.
const READ_HEADER_BYTES = READ_HEADERS.map((name) => Buffer.from(name));
const X_REQUEST_ID = Buffer.from('X-Request-Id');

const STATUS_LINES = new Map<number, Buffer>();
function statusLine(status: number): Buffer {
  let line = STATUS_LINES.get(status);
  if (!line) {
    line = Buffer.from(`${status} ${STATUS_CODES[status] ?? ''}`);
    STATUS_LINES.set(status, line);
  }
  return line;
}

// Response header names are a small closed set; common values too (content types).
const HEADER_BYTES = new Map<string, Buffer>();
function headerName(name: string): Buffer {
  let bytes = HEADER_BYTES.get(name);
  if (!bytes) {
    bytes = Buffer.from(name);
    if (HEADER_BYTES.size < 256) HEADER_BYTES.set(name, bytes);
  }
  return bytes;
}
const COMMON_VALUES = new Map(['application/json', 'application/problem+json', 'text/plain; charset=utf-8', 'no-store', 'no-cache'].map((v) => [v, Buffer.from(v)]));
function headerValue(value: string): string | Buffer {
  return COMMON_VALUES.get(value) ?? value;
}

function readHeaders(req: HttpRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < READ_HEADERS.length; i += 1) {
    const value = req.getHeader(READ_HEADER_BYTES[i]!);
    if (value !== '') headers[READ_HEADERS[i]!] = value;
  }
  return headers;
}

/** The request line and headers, read synchronously while uWS's HttpRequest is valid. */
class Head implements RequestHead {
  private address: string | undefined;

  constructor(
    readonly method: HttpMethod,
    readonly path: string,
    readonly rawQuery: string,
    readonly headers: Record<string, string>,
    readonly rawParams: string[],
    readonly requestId: string,
    private readonly res: HttpResponse,
    private readonly trustProxy: boolean,
  ) {}

  /** Read on demand (few routes need it); the response object stays valid until it is ended. */
  get remoteAddress(): string {
    if (this.address === undefined) {
      const forwarded = this.trustProxy ? this.headers['x-forwarded-for'] : undefined;
      this.address = forwarded ? forwarded.split(',')[0]!.trim() : Buffer.from(this.res.getRemoteAddressAsText()).toString();
    }
    return this.address;
  }
}

function hasBody(req: HttpRequest): boolean {
  const length = req.getHeader('content-length');
  if (length !== '') return length !== '0';
  return req.getHeader('transfer-encoding') !== '';
}
