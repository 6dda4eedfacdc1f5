// One error catalogue: every error code the platform answers with, its HTTP status and title.
// Responses are RFC 7807 problem details (`application/problem+json`); `type` is a stable URN
// built from the code so clients can switch on it. test/unit/errors.test.ts checks that every
// code is documented in docs/errors.md.

export const ERROR_CATALOGUE = {
  validation_failed: { status: 400, title: 'Request validation failed' },
  malformed_json: { status: 400, title: 'Malformed JSON body' },
  malformed_request: { status: 400, title: 'Malformed request' },
  oauth_error: { status: 400, title: 'Token request refused (RFC 6749 section 5.2)' },
  unsupported_content_type: { status: 400, title: 'Unsupported content type' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  unauthorized: { status: 401, title: 'Authentication required' },
  invalid_token: { status: 401, title: 'Invalid or expired access token' },
  forbidden: { status: 403, title: 'Not allowed' },
  feature_disabled: { status: 403, title: 'Feature not enabled for the organization' },
  organization_forbidden: { status: 403, title: 'No access to the organization' },
  not_found: { status: 404, title: 'Not found' },
  route_not_found: { status: 404, title: 'No such route' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'Request not received in time' },
  conflict: { status: 409, title: 'Conflict' },
  payload_too_large: { status: 413, title: 'Request body too large' },
  uri_too_long: { status: 414, title: 'Request target too long' },
  unprocessable: { status: 422, title: 'Request cannot be processed' },
  rate_limited: { status: 429, title: 'Rate limit exceeded' },
  headers_too_large: { status: 431, title: 'Request headers too large' },
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface FieldError {
  path: string;
  message: string;
}

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  errors?: FieldError[];
  requestId?: string;
  [extension: string]: unknown;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function problemType(code: ErrorCode): string {
  return `urn:flex:error:${code}`;
}

/** An error a handler throws to answer with a problem document. */
export class HttpError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;
  /** Extension members added to the problem document (RFC 7807 section 3.2). */
  readonly extensions: Record<string, unknown> | undefined;
  /** Overrides `application/problem+json` where a standard prescribes another type (RFC 6749). */
  readonly contentType: string | undefined;

  constructor(
    code: ErrorCode,
    detail?: string,
    options: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      extensions?: Record<string, unknown>;
      status?: number;
      contentType?: string;
    } = {},
  ) {
    // An HttpError is an answer, not a bug: no stack trace (capturing one costs more than the
    // rest of a rejected request; measured with wrk on 401 responses).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail ?? ERROR_CATALOGUE[code].title);
    Error.stackTraceLimit = limit;
    this.name = 'HttpError';
    this.code = code;
    this.status = options.status ?? ERROR_CATALOGUE[code].status;
    this.errors = options.errors;
    this.headers = options.headers;
    this.extensions = options.extensions;
    this.contentType = options.contentType;
  }

  toProblem(requestId?: string): ProblemDetails {
    const problem: ProblemDetails = {
      type: problemType(this.code),
      title: ERROR_CATALOGUE[this.code].title,
      status: this.status,
      detail: this.message,
    };
    if (this.errors) problem.errors = this.errors;
    if (requestId) problem.requestId = requestId;
    if (this.extensions) Object.assign(problem, this.extensions);
    return problem;
  }
}

export const badRequest = (detail: string, errors?: FieldError[]) =>
  new HttpError('validation_failed', detail, errors ? { errors } : {});
export const notFound = (what: string) => new HttpError('not_found', `${what} not found`);
export const conflict = (detail: string) => new HttpError('conflict', detail);
export const forbidden = (detail: string) => new HttpError('forbidden', detail);

/** Schema of a problem document, used by the OpenAPI generator and the error serializer. */
export const problemSchema = {
  title: 'Problem',
  type: 'object',
  description: 'RFC 7807 problem details. `type` is `urn:flex:error:<code>`; see docs/errors.md.',
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    requestId: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        properties: { path: { type: 'string' }, message: { type: 'string' } },
        required: ['path', 'message'],
      },
    },
  },
  required: ['type', 'title', 'status'],
  additionalProperties: true,
} as const;
