// The node:http front: the same route table and ServerCore as the uWebSockets.js front, on Node's
// own HTTP/1.1 server. Runs on every Node release and C library; answers pipelined requests in
// order; HEAD is GET without the body (Node leaves the body out of HEAD answers). Requests Node's
// parser refuses (bad Content-Length, bare LF, a header without a colon, a missing Host, an
// HTTP/2 preface, an unknown method, oversized headers or request line) get a status from
// `clientError` and the connection closes. A request carrying `Upgrade` (a WebSocket handshake,
// `curl --http2`'s h2c) is served as an ordinary request and its connection then closes: llhttp
// keeps the upgrade flag of that request, and Node reports a parse error only while the flag is
// clear, so a malformed next request on the same connection would get no `clientError` and no
// answer until the headers timeout (docs/architecture.md, "HTTP server").
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tooLarge, type BodyReader } from './body.ts';
import { HttpError, PROBLEM_CONTENT_TYPE, type ErrorCode } from './errors.ts';
import { bodyLength, isPieces, type Outgoing, type Router } from './router.ts';
import {
  READ_HEADERS,
  RouteTable,
  Head,
  ServerCore,
  TakenPortError,
  parseContentLength,
  routeNotFound,
  type Exchange,
  type HttpServer,
  type ServerOptions,
} from './serverCore.ts';

/** Time for a whole request (headers and body) to arrive; slow uploads of large bodies fit. */
const REQUEST_TIMEOUT_MS = 300_000;
/** Time for the request line and headers to arrive. */
const HEADERS_TIMEOUT_MS = 20_000;
/** Idle keep-alive connections close after this (below common load balancers' 60 s). */
const KEEP_ALIVE_TIMEOUT_MS = 55_000;

export class NodeHttpServer implements HttpServer {
  readonly kind = 'node' as const;
  readonly description = `node:http (Node ${process.versions.node})`;
  private readonly core: ServerCore;
  private readonly table: RouteTable;
  private readonly server: Server;
  port = 0;

  constructor(
    router: Router,
    private readonly options: ServerOptions,
  ) {
    this.core = new ServerCore(router, options);
    this.table = new RouteTable(router.routes);
    this.server = createServer(
      {
        maxHeaderSize: this.core.maxHeaderBytes,
        requestTimeout: REQUEST_TIMEOUT_MS,
        headersTimeout: HEADERS_TIMEOUT_MS,
        keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
        requireHostHeader: true,
        insecureHTTPParser: false,
      },
      (req, res) => this.onRequest(req, res),
    );
    this.server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => this.onClientError(err, socket));
  }

  listen(): Promise<number> {
    const { host, port } = this.options;
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        reject(err.code === 'EADDRINUSE' ? new TakenPortError(host, port, 'EADDRINUSE') : new Error(`Cannot listen on ${host}:${port}: ${err.message}`));
      };
      this.server.once('error', onError);
      // exclusive: never share the port (cluster workers, SO_REUSEPORT); a taken port is an error.
      this.server.listen({ host, port, exclusive: true }, () => {
        this.server.off('error', onError);
        const address = this.server.address();
        this.port = typeof address === 'object' && address ? address.port : port;
        resolve(this.port);
      });
    });
  }

  async close(timeoutMs: number): Promise<boolean> {
    const drained = this.core.drain(timeoutMs);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    const ok = await drained;
    this.server.closeAllConnections();
    await closed;
    return ok;
  }

  get activeRequests(): number {
    return this.core.activeRequests;
  }

  get bodyBytesHeld(): number {
    return this.core.bodyBudget.held;
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const rawQuery = queryAt === -1 ? '' : url.slice(queryAt + 1);
    const headers = readHeaders(req);
    const method = req.method ?? 'GET';
    const requestId = this.core.nextRequestId(headers['x-request-id']);
    if (req.httpVersionMajor !== 1) {
      return this.reject(req, res, method, 'unmatched', requestId, new HttpError('malformed_request', 'Only HTTP/1.0 and HTTP/1.1 requests are served'), true);
    }
    if (url.length > this.core.maxUrlBytes) {
      return this.reject(req, res, method, 'unmatched', requestId, new HttpError('uri_too_long', `The request target is longer than ${this.core.maxUrlBytes} bytes`));
    }
    const match = this.table.match(method, path);
    if (!match) return this.reject(req, res, method, 'unmatched', requestId, routeNotFound(method, path));
    if ('allow' in match) return this.reject(req, res, method, path, requestId, this.core.fallbackAnswer(method, headers, match.allow));

    const { route, params } = match;
    const ex = this.begin(res, method === 'HEAD' ? 'HEAD' : route.def.method, route.def.path, requestId);
    const declared = parseContentLength(headers['content-length']);
    // Node's parser already refused malformed lengths; this keeps the rule in one place.
    if (declared === 'invalid') {
      ex.closeAfter = true;
      return this.write(ex, res, this.core.errorOutgoing(new HttpError('malformed_request', 'Content-Length must be a non-negative decimal number of bytes'), requestId, route, headers['origin']));
    }
    const limit = this.core.bodyLimitOf(route);
    if (declared !== undefined && declared > limit) {
      ex.closeAfter = true;
      return this.write(ex, res, this.core.errorOutgoing(tooLarge(limit), requestId, route, headers['origin']));
    }
    let reader: BodyReader | undefined;
    if ((declared !== undefined && declared > 0) || (declared === undefined && headers['transfer-encoding'] !== undefined)) {
      // The body stays in the socket until the request is admitted: with no 'data' listener the
      // request stream is not read, and TCP holds the sender back (body.ts).
      const r = (reader = this.core.bodyReader(route, declared, () => {
        req.on('data', (chunk: Buffer) => r.push(chunk, false, false));
        req.on('end', () => r.finish());
      }));
      req.on('error', () => r.fail(new HttpError('malformed_request', 'The request body could not be read')));
      req.on('aborted', () => r.fail(new HttpError('malformed_request', 'The request body was cut off')));
      res.once('close', () => r.fail(new HttpError('malformed_request', 'The connection closed')));
    }
    const head = new Head(route.def.method, path, rawQuery, headers, params, requestId, () => req.socket.remoteAddress ?? '', this.options.trustProxy);
    void this.core.run(ex, route, head, reader).then((out) => {
      // The handler is done with the body (body.ts, kept memory).
      reader?.release();
      this.write(ex, res, out);
    });
  }

  private begin(res: ServerResponse, method: string, route: string, requestId: string): Exchange {
    const ex = this.core.begin(method, route, requestId);
    // Served as an ordinary request, never kept alive (see the header comment).
    if (res.req.headers.upgrade !== undefined) ex.closeAfter = true;
    res.once('close', () => {
      if (!ex.finished) this.core.abort(ex);
    });
    return ex;
  }

  /** 404, 405, 414 before a route runs: any body sent along is not read, so the connection closes. */
  private reject(req: IncomingMessage, res: ServerResponse, method: string, label: string, requestId: string, error: HttpError | Outgoing, close = false): void {
    const ex = this.begin(res, method.toUpperCase(), label, requestId);
    if (close || (error instanceof HttpError && error.status === 414)) ex.closeAfter = true;
    if (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') ex.closeAfter = true;
    if (req.headers['transfer-encoding'] !== undefined) ex.closeAfter = true;
    this.write(ex, res, error instanceof HttpError ? this.core.errorOutgoing(error, requestId, undefined, req.headers.origin) : error);
  }

  private write(ex: Exchange, res: ServerResponse, out: Outgoing): void {
    if (ex.aborted || ex.finished) return;
    const body = out.body;
    const headers: Record<string, string | number> = { ...out.headers, 'X-Request-Id': ex.requestId };
    headers['Content-Length'] = bodyLength(body);
    if (ex.closeAfter || this.core.isDraining) headers['Connection'] = 'close';
    // 'finish': the last piece's write has completed, so every piece is in the kernel's hands.
    if (out.written) res.once('finish', out.written);
    res.writeHead(out.status, headers);
    // Node writes no body for HEAD requests; the Content-Length above is the GET body's.
    if (body === undefined) res.end();
    else if (isPieces(body)) {
      // Corked: the pieces leave in one writev, without being copied together first.
      res.cork();
      for (const piece of body) res.write(piece);
      res.end();
      res.uncork();
    } else res.end(body);
    this.core.end(ex, out.status);
  }

  /** Bytes Node's parser refuses: a status where one fits, then close. Never an exception. */
  private onClientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket): void {
    const refusal = clientErrorRefusal(err);
    if (!refusal || !socket.writable || (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const requestId = this.core.nextRequestId(undefined);
    const error = new HttpError(refusal.code, refusal.detail);
    const out = this.core.errorOutgoing(error, requestId);
    const body = isPieces(out.body) ? Buffer.concat(out.body) : Buffer.from(out.body ?? '');
    socket.end(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nConnection: close\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
        `Content-Length: ${body.length}\r\nX-Request-Id: ${requestId}\r\n\r\n${body.toString('utf8')}`,
    );
    this.options.metrics.observe('-', 'malformed', error.status, 0);
    this.options.log.debug({ code: err.code, status: error.status, requestId }, 'malformed request refused');
  }
}

/** What to answer a request Node's parser refused; undefined = no answer (the peer is gone). */
function clientErrorRefusal(err: NodeJS.ErrnoException & { rawPacket?: Buffer }): { code: ErrorCode; detail: string } | undefined {
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'request_timeout', detail: 'The request did not arrive in time' };
    case 'HPE_HEADER_OVERFLOW':
      return requestLineOverflows(err.rawPacket)
        ? { code: 'uri_too_long', detail: 'The request line is too long' }
        : { code: 'headers_too_large', detail: 'The request headers are too large' };
    case 'HPE_INVALID_METHOD':
      // A well-formed method token this server does not know: 405; anything else is not HTTP.
      return err.rawPacket && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ \S+ HTTP\/1\.[01]\r?\n/.test(err.rawPacket.subarray(0, 256).toString('latin1'))
        ? { code: 'method_not_allowed', detail: 'The request method is not one this server knows' }
        : { code: 'malformed_request', detail: 'The request is not valid HTTP/1.1 (request line)' };
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { code: 'malformed_request', detail: 'Content-Length must be one non-negative decimal number of bytes' };
    default:
      return { code: 'malformed_request', detail: `The request is not valid HTTP/1.1 (${err.code ?? 'parse error'})` };
  }
}

/** The overflow happened in the request line when the bytes seen hold a method and no line end. */
function requestLineOverflows(raw: Buffer | undefined): boolean {
  if (!raw || raw.length === 0) return false;
  if (raw.indexOf(0x0a) !== -1) return false;
  return /^[A-Z]+ /.test(raw.subarray(0, 32).toString('latin1'));
}

function readHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  const incoming = req.headers;
  for (let i = 0; i < READ_HEADERS.length; i += 1) {
    const name = READ_HEADERS[i]!;
    const value = incoming[name];
    if (value !== undefined && value !== '') headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

