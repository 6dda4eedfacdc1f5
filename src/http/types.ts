// The route table's vocabulary. Domains describe their endpoints with these types; the HTTP
// layer (router.ts, server.ts) turns them into validated, authenticated, rate-limited handlers.
// Nothing here knows uWebSockets.js, so handlers are plain functions testable without a socket.
import type { Feature, Permission, VtnScope } from '../auth/catalogue.ts';
import type { HttpError } from './errors.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A JSON Schema object (draft 2020-12 / OpenAPI 3.1 subset that Ajv and fast-json-stringify share). */
export type JsonSchema = Record<string, unknown>;

/** Who is calling, resolved from the bearer token by the authenticator handed to the router. */
export interface Principal {
  kind: 'client' | 'vtn' | 'user';
  /** Stable id for logs: the OAuth client id or `user:<id>`. Never a secret. */
  subject: string;
  /** Organization the caller belongs to; null only for global administrators without one. */
  organizationId: number | null;
  permissions: ReadonlySet<string>;
  /** OpenADR scopes of a VTN credential token; empty for other callers. */
  scopes: ReadonlySet<string>;
  /** Enabled features of the caller's organization, looked up live (short cache). */
  features: ReadonlySet<string>;
  globalAdmin: boolean;
  /** Rate-limit key for OAuth applications; null = unrestricted (personal access tokens). */
  rateLimitKey: string | null;
  /** Numeric id of the API client (organization client or VTN credential), or null for users. */
  clientRowId: number | null;
}

/** Where a route reads the organization whose permission and feature are checked. */
export type OrganizationSource =
  | { in: 'path' | 'query' | 'body'; name: string; optionalForGlobalAdmin?: boolean }
  | { in: 'principal' };

export interface AuthRequirement {
  /** Permission that must be held (ReadWrite implies Read). */
  permission?: Permission;
  /** Feature that must be enabled in the organization. */
  feature?: Feature;
  /** At least one of these OpenADR scopes (VTN credential tokens). */
  anyScope?: readonly VtnScope[];
  /** Only global administrators (the admin API). */
  globalAdmin?: boolean;
  /** Which organization the permission and feature apply to. Default: the caller's own. */
  organization?: OrganizationSource;
}

export interface RateLimitWindow {
  /** Window length in seconds (fixed windows aligned to the epoch). */
  seconds: number;
  max: number;
}

export interface RouteRateLimit {
  /** Quota name, used in the 429 text and in the store key. */
  name: string;
  windows: readonly RateLimitWindow[];
  /** Whose quota: the authenticated OAuth client (default) or a key the route computes itself. */
  key?: 'client' | 'custom';
}

export interface CustomRateLimitKey {
  key: string;
  windows?: readonly RateLimitWindow[];
}

export type BodyKind = 'none' | 'json' | 'form' | 'raw';

/** The largest request body a route reads: a number of bytes, or `large` for BODY_LIMIT_BYTES
 * (reading batches, which have their own streaming parser). Defaults by body kind: body.ts. */
export type BodyLimit = number | 'large';

/** What a route may look at before its body is read (RouteDef#screen). */
export interface RequestHeadView {
  readonly headers: Readonly<Record<string, string>>;
  readonly remoteAddress: string;
}

export interface ApiRequest<P = Record<string, any>, Q = Record<string, any>, B = unknown> {
  method: HttpMethod;
  /** Path without the query string, as sent (not decoded). */
  path: string;
  params: P;
  query: Q;
  body: B;
  /** The body bytes as received (for `raw` and `form` routes; undefined for others). */
  rawBody: Buffer | undefined;
  /** Lower-cased header names. */
  headers: Readonly<Record<string, string>>;
  principal: Principal | undefined;
  requestId: string;
  remoteAddress: string;
  /** Aborted when the client goes away before the response is written. */
  signal: AbortSignal;
}

export interface ApiReply {
  status: number;
  /** Serialized with the route's response schema for this status. */
  body?: unknown;
  headers?: Record<string, string>;
  /** A body already encoded (text, CSV, JSON built elsewhere). Skips the serializer. Pieces are
   * sent in order; compressed, they are fed to the compressor one by one (never concatenated). */
  raw?: string | Buffer | (string | Buffer)[];
  contentType?: string;
  /** Called once the body has been handed to the socket (never when the client left first): the
   * memory of `raw` may then be used again (GET /api/readings lends kept memory, readingJson.ts). */
  written?: () => void;
}

export interface ResponseSpec {
  description: string;
  schema?: JsonSchema;
  contentType?: string;
  /** Response headers documented in the OpenAPI document (e.g. X-Total-Count of paged lists). */
  headers?: Readonly<Record<string, { description: string; schema: JsonSchema }>>;
}

export interface RouteDef {
  method: HttpMethod;
  /** uWebSockets.js pattern: `/api/organization/:organizationId/client`. */
  path: string;
  /** Short OpenAPI summary and grouping. */
  summary: string;
  description?: string;
  tags: readonly string[];
  /** `public`: no token needed. */
  auth: 'public' | AuthRequirement;
  /** A public route that checks a bearer token of its own (GET /metrics: METRICS_TOKEN or a global
   * administrator's token); the OpenAPI document then shows the bearer requirement. */
  ownBearer?: boolean;
  params?: JsonSchema;
  query?: JsonSchema;
  bodyKind?: BodyKind;
  /** Schema of the body: validated for `json` and `form`, documentation only for `raw`. */
  body?: JsonSchema;
  /** Rewrites a parsed JSON body before it is validated (e.g. OpenADR's nulls for absent members). */
  prepareBody?: (body: unknown) => unknown;
  /** Media type documented for a `raw` body (default application/json). */
  bodyMediaType?: string;
  /** A realistic request body for the OpenAPI document (validated against `body` by a test). */
  bodyExample?: unknown;
  /** Responses by status code. Errors are added to the OpenAPI document automatically. */
  responses: Readonly<Record<number, ResponseSpec>>;
  rateLimit?: RouteRateLimit;
  /** Largest body read (413 beyond, before anything is allocated); default by `bodyKind` (body.ts). */
  bodyLimit?: BodyLimit;
  /** Runs before the body is read (after the token check): quotas that need only the address or
   * the headers (the token endpoint's failed-attempt limits). Throws to refuse the request. */
  screen?: (head: RequestHeadView) => Promise<void> | void;
  /** Status for a wrong request content type: 400 on the platform API, 415 where a standard asks. */
  contentTypeErrorStatus?: 400 | 415;
  /** For `key: 'custom'` quotas (the token endpoint): whose quota, and optionally other windows. */
  rateLimitKey?: (req: ApiRequest<any, any, any>) => Promise<CustomRateLimitKey> | CustomRateLimitKey;
  /** Re-shapes errors of this route, where a standard prescribes its own error format (RFC 6749). */
  mapError?: (err: HttpError) => HttpError;
  handler: (req: ApiRequest<any, any, any>) => Promise<ApiReply> | ApiReply;
}
