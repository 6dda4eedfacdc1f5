// The uWebSockets.js front: registers the compiled routes, tracks aborts (onAborted before any
// await), reads bodies with a limit, writes corked responses, streams large bodies with
// backpressure (tryEnd + onWritable), answers 404/405, and drains in-flight requests on shutdown.
// Everything else happens in ServerCore and the Router, which never see a socket.
//
// Known limits, by uWebSockets.js's design (v20.30, the trusted build): a request pipelined behind
// one whose response is still pending (any route that awaits the database) makes uWS close the
// connection after the answers already written, in order; the client retries the rest (RFC 9112
// §9.3.2). node:http answers them all in order. Requests its parser refuses (no Host, bare LF, a
// header without a colon) get no status. docs/architecture.md, "HTTP server", compares the fronts.
import { STATUS_CODES } from 'node:http';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { tooLarge, type BodyReader } from './body.ts';
import { HttpError } from './errors.ts';
import { bodyLength, isPieces, type CompiledRoute, type Outgoing, type RequestHead, type Router } from './router.ts';
import {
  READ_HEADERS,
  Head,
  ServerCore,
  TakenPortError,
  allowOf,
  parseContentLength,
  routeNotFound,
  type Exchange,
  type HttpServer,
  type ServerOptions,
} from './serverCore.ts';
import type { HttpMethod } from './types.ts';
import type { Uws, UwsBuild } from './uwsLoader.ts';

/** ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT: no SO_REUSEPORT. */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;
/** Bodies above this size are sent with tryEnd/onWritable instead of one end() copy. */
const STREAM_THRESHOLD = 64 * 1024;
const METHODS: Record<HttpMethod, 'get' | 'post' | 'put' | 'patch' | 'del'> = {
  GET: 'get',
  POST: 'post',
  PUT: 'put',
  PATCH: 'patch',
  DELETE: 'del',
};

interface UwsExchange extends Exchange {
  res: HttpResponse;
  /** HEAD: headers (with the GET body's length) and no body. */
  head: boolean;
  /** The request's body, failed when the client goes away (uWS has one abort handler). */
  reader?: BodyReader;
}

export class UwsHttpServer implements HttpServer {
  readonly kind = 'uws' as const;
  readonly description: string;
  private readonly app: TemplatedApp;
  private readonly core: ServerCore;
  private listenSocket: us_listen_socket | undefined;
  port = 0;

  constructor(
    router: Router,
    private readonly options: ServerOptions,
    private readonly uws: Uws,
    build: UwsBuild,
  ) {
    this.description = `uWebSockets.js v${build.version} (${build.dependency})`;
    this.core = new ServerCore(router, options);
    this.app = uws.App();
    const byPattern = new Map<string, CompiledRoute[]>();
    for (const route of router.routes) {
      const list = byPattern.get(route.def.path) ?? [];
      list.push(route);
      byPattern.set(route.def.path, list);
    }
    for (const [pattern, routes] of byPattern) {
      for (const route of routes) {
        this.app[METHODS[route.def.method]](pattern, (res, req) => this.guard(res, req, () => this.onRequest(res, req, route, false)));
        if (route.def.method === 'GET') this.app.head(pattern, (res, req) => this.guard(res, req, () => this.onRequest(res, req, route, true)));
      }
      const allow = allowOf(routes);
      this.app.any(pattern, (res, req) =>
        this.guard(res, req, () => {
          const method = req.getCaseSensitiveMethod();
          this.onFallback(res, req, this.core.fallbackAnswer(method, method === 'OPTIONS' ? readHeaders(req) : {}, allow), pattern);
        }),
      );
    }
    this.app.any('/*', (res, req) => this.guard(res, req, () => this.onFallback(res, req, routeNotFound(req.getCaseSensitiveMethod(), req.getUrl()), 'unmatched')));
  }

  listen(): Promise<number> {
    const { host, port } = this.options;
    return new Promise((resolve, reject) => {
      // Exclusive: without it uWS sets SO_REUSEPORT and a second instance would share the port.
      // The native listen takes (host, port, options, callback); the typings omit that overload.
      const listen = this.app.listen as unknown as (host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => void;
      listen.call(this.app, host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
        if (!socket) return reject(new TakenPortError(host, port, 'or the address cannot be bound'));
        this.listenSocket = socket;
        this.port = this.uws.us_socket_local_port(socket as never);
        resolve(this.port);
      });
    });
  }

  async close(timeoutMs: number): Promise<boolean> {
    const drained = this.core.drain(timeoutMs);
    if (this.listenSocket) this.uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
    return drained;
  }

  get activeRequests(): number {
    return this.core.activeRequests;
  }

  get bodyBytesHeld(): number {
    return this.core.bodyBudget.held;
  }

  /** A handler that throws synchronously must not reach uWS (it would end the process). */
  private guard(res: HttpResponse, req: HttpRequest, handle: () => void): void {
    try {
      handle();
    } catch (err) {
      this.options.log.error({ err, url: req.getUrl() }, 'request handler threw');
      try {
        res.cork(() => res.writeStatus('500 Internal Server Error').end('', true));
      } catch {
        // The response was already written or the socket is gone.
      }
    }
  }

  private begin(res: HttpResponse, method: string, route: string, requestId: string, head: boolean): UwsExchange {
    const ex = this.core.begin(method, route, requestId) as UwsExchange;
    ex.res = res;
    ex.head = head;
    res.onAborted(() => {
      ex.reader?.fail(new HttpError('malformed_request', 'The connection closed'));
      this.core.abort(ex);
    });
    return ex;
  }

  /** Unroutable requests (404, 405) and CORS preflights (an Outgoing from the router). */
  private onFallback(res: HttpResponse, req: HttpRequest, error: HttpError | Outgoing, label: string): void {
    const origin = req.getHeader('origin') || undefined;
    const method = req.getCaseSensitiveMethod();
    const ex = this.begin(res, method.toUpperCase(), label, this.core.nextRequestId(req.getHeader('x-request-id')), method === 'HEAD');
    // Drop any body the client sends with an unroutable request and close afterwards.
    if (hasBody(req)) {
      ex.closeAfter = true;
      res.onData(() => undefined);
    }
    this.write(ex, error instanceof HttpError ? this.core.errorOutgoing(error, ex.requestId, undefined, origin) : error);
  }

  private onRequest(res: HttpResponse, req: HttpRequest, route: CompiledRoute, isHead: boolean): void {
    const head = this.readHead(res, req, route);
    const ex = this.begin(res, isHead ? 'HEAD' : route.def.method, route.def.path, head.requestId, isHead);
    const declared = parseContentLength(head.headers['content-length']);
    const chunked = head.headers['transfer-encoding'] !== undefined;
    // uWS reads the first of several Content-Length headers: a proxy reading another would frame
    // the body differently (request smuggling). RFC 9112 §6.3: refuse, and close.
    if (declared !== undefined && declared !== 'invalid' && repeatsContentLength(req)) {
      ex.closeAfter = true;
      res.onData(() => undefined);
      this.write(ex, this.core.errorOutgoing(new HttpError('malformed_request', 'Content-Length must be given once'), ex.requestId, route, head.headers['origin']));
      return;
    }
    if (declared === 'invalid') {
      ex.closeAfter = true;
      res.onData(() => undefined);
      this.write(ex, this.core.errorOutgoing(new HttpError('malformed_request', 'Content-Length must be a non-negative decimal number of bytes'), ex.requestId, route, head.headers['origin']));
      return;
    }
    const limit = this.core.bodyLimitOf(route);
    if (declared !== undefined && declared > limit) {
      ex.closeAfter = true;
      res.onData(() => undefined);
      this.write(ex, this.core.errorOutgoing(tooLarge(limit), ex.requestId, route, head.headers['origin']));
      return;
    }
    let reader: BodyReader | undefined;
    if ((declared !== undefined && declared > 0) || (declared === undefined && chunked)) {
      // Paused until the request is admitted; what the socket already delivered is kept (body.ts).
      const r = (reader = ex.reader = this.core.bodyReader(route, declared, () => res.resume()));
      // The ArrayBuffer is only valid during the callback: the reader copies it.
      res.onData((chunk, isLast) => r.push(new Uint8Array(chunk), isLast, true));
      res.pause();
    }
    void this.core.run(ex, route, head, reader).then((out) => {
      // The handler is done with the body (body.ts, kept memory).
      reader?.release();
      this.write(ex, out);
    });
  }

  private readHead(res: HttpResponse, req: HttpRequest, route: CompiledRoute): RequestHead {
    const headers = readHeaders(req);
    const params = route.paramNames.length === 0 ? NO_PARAMS : route.paramNames.map((_, i) => req.getParameter(i) ?? '');
    // The response object stays valid until it is ended: the address is read from it on demand.
    return new Head(route.def.method, req.getUrl(), req.getQuery() ?? '', headers, params, this.core.nextRequestId(headers['x-request-id']), () => Buffer.from(res.getRemoteAddressAsText()).toString(), this.options.trustProxy);
  }

  private write(ex: UwsExchange, out: Outgoing): void {
    if (ex.aborted || ex.finished) return;
    const { res } = ex;
    // Pieces are joined here: a large answer is streamed from one buffer (tryEnd's offsets).
    const body = isPieces(out.body) ? Buffer.concat(out.body) : out.body;
    // Joined into new memory: the pieces are not read again (Outgoing#written).
    if (body !== out.body) out.written?.();
    const written = body !== out.body ? undefined : out.written;
    const close = ex.closeAfter || this.core.isDraining;
    if (ex.head) {
      const length = bodyLength(body);
      res.cork(() => {
        this.writeHead(res, out, ex.requestId);
        res.endWithoutBody(length, close);
      });
    } else if (body !== undefined && body.length > STREAM_THRESHOLD && !close) {
      this.stream(ex, out, typeof body === 'string' ? Buffer.from(body) : body, written);
      return;
    } else {
      res.cork(() => {
        this.writeHead(res, out, ex.requestId);
        if (body === undefined) res.endWithoutBody(0, close);
        else res.end(body, close);
      });
    }
    // end() copies what the socket does not take at once.
    written?.();
    this.core.end(ex, out.status);
  }

  private writeHead(res: HttpResponse, out: Outgoing, requestId: string): void {
    res.writeStatus(statusLine(out.status));
    res.writeHeader(X_REQUEST_ID, requestId);
    const headers = out.headers;
    for (const name in headers) res.writeHeader(headerName(name), headerValue(headers[name]!));
  }

  /** Large bodies: write what the socket takes, continue on writable (backpressure). */
  private stream(ex: UwsExchange, out: Outgoing, body: Buffer, written: (() => void) | undefined): void {
    const { res } = ex;
    const total = body.length;
    let startOffset = 0;
    let done = false;
    res.cork(() => {
      this.writeHead(res, out, ex.requestId);
      startOffset = res.getWriteOffset();
      [, done] = res.tryEnd(body, total);
    });
    const end = () => {
      written?.();
      this.core.end(ex, out.status);
    };
    if (done) return end();
    res.onWritable((offset) => {
      const [ok, finished] = res.tryEnd(body.subarray(offset - startOffset), total);
      if (finished) end();
      return ok;
    });
  }
}

const NO_PARAMS: string[] = [];

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


function repeatsContentLength(req: HttpRequest): boolean {
  let count = 0;
  req.forEach((name) => {
    if (name === 'content-length') count += 1;
  });
  return count > 1;
}

function hasBody(req: HttpRequest): boolean {
  const length = req.getHeader('content-length');
  if (length !== '') return length !== '0';
  return req.getHeader('transfer-encoding') !== '';
}
