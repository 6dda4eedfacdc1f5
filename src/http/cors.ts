// Cross-origin requests (CORS), independent of the socket. CORS_ORIGINS lists the origins whose
// browser pages may call the API (`*` = any); default none: no CORS header is ever sent and a
// browser keeps other origins out. The API authenticates with bearer tokens, never cookies, so
// credentials are not allowed (no Access-Control-Allow-Credentials) and `*` is safe to offer.
//
// Preflight (OPTIONS with Origin and Access-Control-Request-Method) on a route's path: 204 with
// the methods of that path and the request headers the API reads, cached by the browser for
// PREFLIGHT_MAX_AGE seconds; from an origin not listed: 403. Actual answers (errors included)
// carry Access-Control-Allow-Origin for a listed origin and expose the headers clients need.
import { HttpError } from './errors.ts';

/** Request headers a cross-origin page may send. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Request-Id', 'If-None-Match'];
/** Response headers a cross-origin page may read (beyond the CORS-safelisted ones). */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-Total-Count',
  'X-Rate-Limit-Limit',
  'X-Rate-Limit-Remaining',
  'X-Rate-Limit-Reset',
  'Retry-After',
  'Location',
  'ETag',
  'Content-Disposition',
];
export const PREFLIGHT_MAX_AGE = 600;

const ALLOWED_HEADER_SET = new Set(CORS_ALLOWED_HEADERS.map((h) => h.toLowerCase()));
const EXPOSE = CORS_EXPOSED_HEADERS.join(', ');

/** An origin as browsers send it: scheme://host[:port], no path. */
export const ORIGIN_FORMAT = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export class Cors {
  private readonly any: boolean;
  private readonly origins: ReadonlySet<string>;

  /** `origins`: exact origins (lower-cased scheme and host), or ['*']; empty = CORS off. */
  constructor(origins: readonly string[]) {
    this.any = origins.includes('*');
    this.origins = new Set(origins.map((o) => o.toLowerCase()));
  }

  get enabled(): boolean {
    return this.any || this.origins.size > 0;
  }

  private allows(origin: string): boolean {
    return this.any || this.origins.has(origin.toLowerCase());
  }

  /** Headers for an answer to a request with this Origin (undefined: none to add). */
  responseHeaders(origin: string | undefined): Record<string, string> | undefined {
    if (!this.enabled || !origin || !this.allows(origin)) return undefined;
    return this.any
      ? { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSE }
      : { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSE, Vary: 'Origin' };
  }

  /** The answer to an OPTIONS request on a path with these methods; undefined when CORS is off or
   * the request is no preflight (the server then answers 405 as for any other method). */
  preflight(headers: Readonly<Record<string, string>>, allowedMethods: readonly string[]): { status: number; headers: Record<string, string> } | undefined {
    const origin = headers['origin'];
    const method = headers['access-control-request-method'];
    if (!this.enabled || !origin || !method) return undefined;
    if (!this.allows(origin)) throw new HttpError('forbidden', `Origin ${origin} may not call this API (CORS_ORIGINS)`);
    if (!allowedMethods.includes(method)) {
      throw new HttpError('method_not_allowed', `${method} is not allowed here; allowed: ${allowedMethods.join(', ')}`, { headers: { Allow: allowedMethods.join(', ') } });
    }
    const requested = (headers['access-control-request-headers'] ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
    const refused = requested.filter((h) => !ALLOWED_HEADER_SET.has(h));
    if (refused.length > 0) throw new HttpError('forbidden', `Request header(s) ${refused.join(', ')} may not be sent cross-origin; allowed: ${CORS_ALLOWED_HEADERS.join(', ')}`);
    return {
      status: 204,
      headers: {
        'Access-Control-Allow-Origin': this.any ? '*' : origin,
        'Access-Control-Allow-Methods': allowedMethods.join(', '),
        'Access-Control-Allow-Headers': CORS_ALLOWED_HEADERS.join(', '),
        'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE),
        Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      },
    };
  }
}
