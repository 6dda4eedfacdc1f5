// The request pipeline, independent of the socket: compile the route table once (Ajv validators,
// fast-json-stringify serializers; a broken schema stops the start and names the route), then
// for each request: authenticate → check the token's rights → client rate limit → path and query
// (and the organization they name) → the route's screen → (body read by the server) → parse and
// validate the body → custom rate limit → organization named by the body → handler.
import { isUtf8 } from 'node:buffer';
import type { Logger } from 'pino';
import fastJson from 'fast-json-stringify';
import type { ValidateFunction } from 'ajv';
import { checkCredentials, checkRequestOrganization } from './authorize.ts';
import { BYTES_PER_JSON_VALUE, defaultBodyLimit, jsonValuesExceed } from './body.ts';
import { compressPieces, varyOnAcceptEncoding, type Compression } from './compression.ts';
import type { Cors } from './cors.ts';
import { HttpError, PROBLEM_CONTENT_TYPE, problemSchema, type ErrorCode, type ProblemDetails } from './errors.ts';
import { arrayKeysOf, parseQuery } from './query.ts';
import { consumeQuota, RateLimitedError, type RateLimitStore } from './rateLimit.ts';
import type { ApiReply, ApiRequest, BodyLimit, HttpMethod, Principal, RateLimitWindow, RouteDef } from './types.ts';
import { compile, createValidators, toFieldErrors, unstorableTextErrors, type Validators } from './validation.ts';

export interface RequestHead {
  method: HttpMethod;
  path: string;
  rawQuery: string;
  headers: Record<string, string>;
  /** Undecoded path parameter values in the order of the route pattern. */
  rawParams: string[];
  readonly remoteAddress: string;
  requestId: string;
}

/** What the server writes: status, headers, and an encoded body. */
export interface Outgoing {
  status: number;
  headers: Record<string, string>;
  /** Pieces (a raw answer given as pieces, uncompressed): sent in order as they are, never
   * concatenated (a copy of 11 MB into fresh memory per 100 register-months of hourly averages). */
  body: string | Buffer | readonly Buffer[] | undefined;
  /** ApiReply#written: the server calls it once the body is in the socket's hands. */
  written?: () => void;
}

export interface RouterDeps {
  /** Resolves a bearer token to a principal; throws an HttpError (401) for a bad token. */
  authenticate: (authorization: string) => Promise<Principal>;
  rateLimits: RateLimitStore;
  log: Logger;
  /** Maps storage errors (SQLSTATE) to HTTP errors; undefined = unexpected (500). */
  translateError?: (err: unknown) => HttpError | undefined;
  now?: () => number;
  /** Compression of answers by Accept-Encoding (compression.ts); none when absent. */
  compression?: Compression;
  /** Cross-origin access (cors.ts); none when absent. */
  cors?: Cors;
  /** The limit of `large` routes (BODY_LIMIT_BYTES), for their JSON value count; default 256 MiB. */
  largeBodyLimit?: number;
}

type Body = string | Buffer | (string | Buffer)[] | undefined;

export interface CompiledRoute {
  def: RouteDef;
  paramNames: string[];
  arrayQueryKeys: Set<string>;
  validateParams: ValidateFunction | undefined;
  validateQuery: ValidateFunction | undefined;
  validateBody: ValidateFunction | undefined;
  serializers: Map<number, (value: unknown) => string>;
  /** The route's body limit (RouteDef#bodyLimit or its body kind's default). */
  bodyLimit: BodyLimit;
}

/** State carried from the first step (before the body) to the second. */
export interface Admitted {
  principal: Principal | undefined;
  rateHeaders: Record<string, string> | undefined;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
}

const serializeProblem: (problem: ProblemDetails) => string = fastJson(problemSchema);

/** Whether an Outgoing body is a list of pieces. */
export function isPieces(body: Outgoing['body']): body is readonly Buffer[] {
  return Array.isArray(body);
}

/** The bytes an Outgoing body takes on the wire (its Content-Length). */
export function bodyLength(body: Outgoing['body']): number {
  if (body === undefined) return 0;
  if (typeof body === 'string') return Buffer.byteLength(body);
  return isPieces(body) ? body.reduce((n, piece) => n + piece.length, 0) : body.length;
}

export function compileRoute(def: RouteDef, validators: Validators): CompiledRoute {
  const what = `${def.method} ${def.path}`;
  const paramNames = [...def.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
  const serializers = new Map<number, (value: unknown) => string>();
  for (const [status, spec] of Object.entries(def.responses)) {
    if (!spec.schema) continue;
    try {
      serializers.set(Number(status), fastJson(spec.schema as never) as (value: unknown) => string);
    } catch (err) {
      throw new Error(`Invalid response schema ${status} for ${what}: ${(err as Error).message}`);
    }
  }
  const bodyKind = def.bodyKind ?? (def.body ? 'json' : 'none');
  if ((bodyKind === 'json' || bodyKind === 'form') && !def.body) throw new Error(`${what} reads a ${bodyKind} body but declares no body schema`);
  return {
    def: { ...def, bodyKind },
    paramNames,
    arrayQueryKeys: arrayKeysOf(def.query),
    validateParams: def.params ? compile(validators.input, def.params, `${what} path parameters`) : undefined,
    validateQuery: def.query ? compile(validators.input, def.query, `${what} query`) : undefined,
    validateBody: def.body && bodyKind !== 'raw' ? compile(validators.body, def.body, `${what} body`) : undefined,
    serializers,
    bodyLimit: def.bodyLimit ?? defaultBodyLimit(bodyKind),
  };
}

export { RateLimitedError };

export class Router {
  readonly routes: CompiledRoute[];
  private readonly now: () => number;

  constructor(
    defs: readonly RouteDef[],
    private readonly deps: RouterDeps,
  ) {
    const validators = createValidators();
    const seen = new Set<string>();
    this.routes = defs.map((def) => {
      const key = `${def.method} ${def.path.replace(/:[A-Za-z0-9_]+/g, ':')}`;
      if (seen.has(key)) throw new Error(`Duplicate route ${def.method} ${def.path}`);
      seen.add(key);
      return compileRoute(def, validators);
    });
    this.now = deps.now ?? Date.now;
  }

  /** Step 1, before the body is read: who is calling, may they (and in the organization the path
   * or query names), are they within quota, and the route's own screen (RouteDef#screen). */
  async admit(route: CompiledRoute, head: RequestHead): Promise<Admitted> {
    const { def } = route;
    if (def.auth === 'public') {
      const params = this.parseParams(route, head.rawParams);
      const query = this.parseQueryFor(route, head.rawQuery);
      await def.screen?.(head);
      return { principal: undefined, rateHeaders: undefined, params, query };
    }
    const authorization = head.headers['authorization'];
    const principal = authorization ? await this.deps.authenticate(authorization) : undefined;
    checkCredentials(principal, def.auth);
    let rateHeaders: Record<string, string> | undefined;
    if (def.rateLimit && def.rateLimit.key !== 'custom' && principal?.rateLimitKey) {
      rateHeaders = await this.consume(def.rateLimit.name, principal.rateLimitKey, def.rateLimit.windows);
    }
    const params = this.parseParams(route, head.rawParams);
    const query = this.parseQueryFor(route, head.rawQuery);
    // An organization named by the path or query is checked before any body is read.
    if (def.auth.organization?.in === 'path' || def.auth.organization?.in === 'query') checkRequestOrganization(principal!, def.auth, { params, query, body: undefined });
    await def.screen?.(head);
    return { principal, rateHeaders, params, query };
  }

  /** Step 2, with the body: parse and validate, check the organization, run the handler. */
  async complete(route: CompiledRoute, head: RequestHead, admitted: Admitted, body: Buffer | undefined, abort: { readonly signal: AbortSignal }): Promise<ApiReply> {
    const { def } = route;
    const req = new Request(head, admitted.params, admitted.query, admitted.principal, abort);
    if (def.bodyKind === 'json') req.body = this.parseJsonBody(route, head, body);
    else if (def.bodyKind === 'form') {
      req.rawBody = body;
      req.body = this.parseFormBody(route, head, body);
    } else if (def.bodyKind === 'raw') req.rawBody = body ?? Buffer.alloc(0);

    let rateHeaders = admitted.rateHeaders;
    if (def.rateLimit?.key === 'custom' && def.rateLimitKey) {
      const custom = await def.rateLimitKey(req);
      rateHeaders = await this.consume(def.rateLimit.name, custom.key, custom.windows ?? def.rateLimit.windows);
    }
    if (def.auth !== 'public' && def.auth.organization?.in === 'body' && admitted.principal) checkRequestOrganization(admitted.principal, def.auth, req);
    const reply = await def.handler(req);
    if (rateHeaders) reply.headers = { ...rateHeaders, ...reply.headers };
    return reply;
  }

  /** Both steps for a request whose body is already at hand (tests, benchmarks). */
  async dispatch(route: CompiledRoute, head: RequestHead, body?: Buffer): Promise<Outgoing> {
    try {
      const admitted = await this.admit(route, head);
      return await this.finish(route, head, await this.complete(route, head, admitted, body, new AbortController()));
    } catch (err) {
      return this.encodeError(err, head.requestId, route, head.headers['origin']);
    }
  }

  /** The answer as written: encoded, with CORS headers for an allowed Origin, compressed when the
   * client accepts a configured coding and the answer qualifies (compression.ts). */
  async finish(route: CompiledRoute, head: RequestHead, reply: ApiReply): Promise<Outgoing> {
    const out = this.encodeBody(route, reply);
    const cors = this.deps.cors?.responseHeaders(head.headers['origin']);
    if (cors) addHeaders(out.headers, cors);
    let body = out.body;
    const compression = this.deps.compression;
    if (compression && body !== undefined) {
      const size = Array.isArray(body) ? body.reduce((n, piece) => n + piece.length, 0) : body.length;
      const { encoding, varies } = compression.decide(out.headers, size, head.headers['accept-encoding']);
      if (varies) out.headers['Vary'] = varyOnAcceptEncoding(out.headers['Vary']);
      if (encoding) {
        body = await compressPieces(Array.isArray(body) ? body : [body], encoding);
        out.headers['Content-Encoding'] = encoding;
      }
    }
    return { status: out.status, headers: out.headers, body: Array.isArray(body) ? body.map(toBuffer) : body, written: reply.written };
  }

  /** The answer to an OPTIONS request on a path with these methods when it is a CORS preflight;
   * undefined otherwise (then the path's 405). A refused preflight is an HttpError to encode. */
  preflight(headers: Readonly<Record<string, string>>, methods: readonly string[]): Outgoing | HttpError | undefined {
    try {
      const answer = this.deps.cors?.preflight(headers, methods);
      return answer && { status: answer.status, headers: answer.headers, body: undefined };
    } catch (err) {
      if (err instanceof HttpError) return err;
      throw err;
    }
  }

  encode(route: CompiledRoute, reply: ApiReply): Outgoing {
    const out = this.encodeBody(route, reply);
    // Joined into new memory: what the reply lent may be used again.
    const body = Array.isArray(out.body) ? Buffer.concat(out.body.map(toBuffer)) : out.body;
    reply.written?.();
    return { status: out.status, headers: out.headers, body };
  }

  private encodeBody(route: CompiledRoute, reply: ApiReply): { status: number; headers: Record<string, string>; body: Body } {
    const headers: Record<string, string> = { ...reply.headers };
    if (reply.raw !== undefined) {
      headers['Content-Type'] = reply.contentType ?? 'application/json';
      return { status: reply.status, headers, body: reply.raw };
    }
    if (reply.body === undefined) return { status: reply.status, headers, body: undefined };
    const serialize = route.serializers.get(reply.status);
    headers['Content-Type'] = reply.contentType ?? 'application/json';
    if (!serialize) {
      this.deps.log.warn({ route: route.def.path, status: reply.status }, 'response status has no schema; using JSON.stringify');
      return { status: reply.status, headers, body: JSON.stringify(reply.body) };
    }
    return { status: reply.status, headers, body: serialize(reply.body) };
  }

  /** A problem document for an error; `origin` (the request's Origin header) adds CORS headers. */
  encodeError(err: unknown, requestId: string, route?: CompiledRoute, origin?: string): Outgoing {
    const out = this.encodeProblem(err, requestId, route);
    const cors = this.deps.cors?.responseHeaders(origin);
    if (cors) addHeaders(out.headers, cors);
    return out;
  }

  private encodeProblem(err: unknown, requestId: string, route?: CompiledRoute): Outgoing {
    if (err instanceof RateLimitedError) {
      return { status: 429, headers: { ...err.headers, 'Content-Type': 'text/plain; charset=utf-8' }, body: err.text };
    }
    let httpError = err instanceof HttpError ? err : this.deps.translateError?.(err);
    if (!httpError) {
      this.deps.log.error({ err, requestId }, 'unhandled error');
      httpError = new HttpError('internal_error', `An internal error occurred; quote request id ${requestId} when reporting it`);
    }
    if (route?.def.mapError) httpError = route.def.mapError(httpError);
    return {
      status: httpError.status,
      headers: { ...httpError.headers, 'Content-Type': httpError.contentType ?? PROBLEM_CONTENT_TYPE },
      body: serializeProblem(httpError.toProblem(requestId)),
    };
  }

  private consume(name: string, key: string, windows: readonly RateLimitWindow[]): Promise<Record<string, string>> {
    return consumeQuota(this.deps.rateLimits, name, key, windows, this.now());
  }

  private parseParams(route: CompiledRoute, raw: string[]): Record<string, unknown> {
    const params: Record<string, unknown> = {};
    route.paramNames.forEach((name, i) => {
      const value = raw[i] ?? '';
      try {
        params[name] = decodeURIComponent(value);
      } catch {
        throw new HttpError('malformed_request', `Path parameter ${name} has an invalid percent-encoding`);
      }
    });
    refuseUnstorableText(params, 'path', 'Invalid path parameters');
    if (route.validateParams && !route.validateParams(params)) {
      throw new HttpError('validation_failed', 'Invalid path parameters', { errors: toFieldErrors(route.validateParams.errors, 'path') });
    }
    return params;
  }

  private parseQueryFor(route: CompiledRoute, rawQuery: string): Record<string, unknown> {
    const query: Record<string, unknown> = parseQuery(rawQuery, route.arrayQueryKeys);
    refuseUnstorableText(query, 'query', 'Invalid query parameters');
    if (route.validateQuery && !route.validateQuery(query)) {
      throw new HttpError('validation_failed', 'Invalid query parameters', { errors: toFieldErrors(route.validateQuery.errors, 'query') });
    }
    return query;
  }

  private contentTypeError(route: CompiledRoute, expected: string, got: string | undefined): HttpError {
    const code: ErrorCode = route.def.contentTypeErrorStatus === 415 ? 'unsupported_media_type' : 'unsupported_content_type';
    return new HttpError(code, `Expected Content-Type ${expected}, got ${got ? JSON.stringify(got) : 'none'}`);
  }

  private parseJsonBody(route: CompiledRoute, head: RequestHead, body: Buffer | undefined): unknown {
    const contentType = head.headers['content-type'];
    if (!isJsonContentType(contentType)) throw this.contentTypeError(route, 'application/json', contentType);
    if (!body || body.length === 0) throw new HttpError('malformed_json', 'The request body is empty; a JSON document is required');
    if (!isUtf8(body)) throw new HttpError('malformed_json', 'The request body is not valid UTF-8');
    const limit = route.bodyLimit === 'large' ? (this.deps.largeBodyLimit ?? 256 * 1024 * 1024) : route.bodyLimit;
    const maxValues = Math.floor(limit / BYTES_PER_JSON_VALUE);
    if (jsonValuesExceed(body, maxValues)) throw new HttpError('payload_too_large', `The request body holds more than ${maxValues} JSON values, this route's limit`);
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw new HttpError('malformed_json', `The request body is not valid JSON: ${(err as Error).message}`);
    }
    // Text PostgreSQL cannot store reaches a parsed value only through a \u escape: JSON admits
    // no raw control characters, and valid UTF-8 encodes no lone surrogate. Without one, the walk
    // over every value is skipped.
    if (body.includes('\\u')) refuseUnstorableText(value, '', 'Invalid request body');
    if (route.def.prepareBody) value = route.def.prepareBody(value);
    if (route.validateBody && !route.validateBody(value)) {
      throw new HttpError('validation_failed', 'Invalid request body', { errors: toFieldErrors(route.validateBody.errors, '') });
    }
    return value;
  }

  private parseFormBody(route: CompiledRoute, head: RequestHead, body: Buffer | undefined): unknown {
    const contentType = head.headers['content-type'];
    if (!contentType || contentType.split(';')[0]!.trim().toLowerCase() !== 'application/x-www-form-urlencoded') {
      throw this.contentTypeError(route, 'application/x-www-form-urlencoded', contentType);
    }
    if (body && !isUtf8(body)) throw new HttpError('malformed_request', 'The request body is not valid UTF-8');
    const form: Record<string, string> = {};
    for (const [key, value] of Object.entries(parseQuery(body ? body.toString('utf8') : ''))) {
      if (Array.isArray(value)) {
        throw new HttpError('validation_failed', `Parameter ${key} is repeated`, { errors: [{ path: key, message: 'must not be repeated' }] });
      }
      form[key] = value;
    }
    refuseUnstorableText(form, '', 'Invalid form parameters');
    if (route.validateBody && !route.validateBody(form)) {
      throw new HttpError('validation_failed', 'Invalid form parameters', { errors: toFieldErrors(route.validateBody.errors, '') });
    }
    return form;
  }
}

const toBuffer = (piece: string | Buffer) => (typeof piece === 'string' ? Buffer.from(piece) : piece);

/** Adds headers, joining Vary values. */
function addHeaders(headers: Record<string, string>, extra: Record<string, string>): void {
  for (const [name, value] of Object.entries(extra)) headers[name] = name === 'Vary' && headers['Vary'] ? `${headers['Vary']}, ${value}` : value;
}

/** Text PostgreSQL cannot store (U+0000, unpaired surrogates) is refused here, once for every
 * route and every part of a request, before validation and before any handler sees it. */
function refuseUnstorableText(value: unknown, prefix: string, detail: string): void {
  const errors = unstorableTextErrors(value, prefix);
  if (errors.length > 0) throw new HttpError('validation_failed', detail, { errors });
}

/** What handlers receive. A class, so every request object has the same shape and the lazy
 * properties live on the prototype. */
class Request implements ApiRequest {
  body: unknown = undefined;
  rawBody: Buffer | undefined = undefined;

  constructor(
    private readonly head: RequestHead,
    readonly params: Record<string, any>,
    readonly query: Record<string, any>,
    readonly principal: Principal | undefined,
    private readonly abort: { readonly signal: AbortSignal },
  ) {}

  get method(): HttpMethod {
    return this.head.method;
  }
  get path(): string {
    return this.head.path;
  }
  get headers(): Readonly<Record<string, string>> {
    return this.head.headers;
  }
  get requestId(): string {
    return this.head.requestId;
  }
  get remoteAddress(): string {
    return this.head.remoteAddress;
  }
  get signal(): AbortSignal {
    return this.abort.signal;
  }
}

export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}
