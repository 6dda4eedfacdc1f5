// POST /oauth/token: the OAuth 2.0 client credentials grant (RFC 6749 section 4.4) for
// organization clients and VTN credentials. Client authentication by form parameters or HTTP
// Basic (section 2.3.1). Errors follow section 5.2 (`{error, error_description}`, JSON, no-store)
// and carry the RFC 7807 members as well. Failed attempts are limited per address (checked before
// the body is read) and per (client id, address) (before any secret is hashed), never per claimed
// client id alone (src/http/failedAttempts.ts); tokens issued are limited per client, counted only
// once its secret was verified.
import { HttpError } from '../http/errors.ts';
import { FailedAttempts } from '../http/failedAttempts.ts';
import { consumeQuota, type RateLimitStore } from '../http/rateLimit.ts';
import { objectSchema } from '../http/schemas.ts';
import type { ApiRequest, RateLimitWindow, RouteDef } from '../http/types.ts';
import type { Pool } from '../store/database.ts';
import { findClientForToken } from './clientStore.ts';
import { verifyAgainstDummy, verifySecret } from './secrets.ts';
import type { TokenSigner } from './tokens.ts';

export interface TokenRouteOptions {
  audiences: readonly string[];
  /** Tokens issued per client per minute, and failed attempts per (client id, address). */
  perClientPerMinute: number;
  /** Failed attempts per address per minute, whatever the client ids. */
  unknownClientPerMinute: number;
  rateLimits: RateLimitStore;
  now?: () => number;
}

type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'invalid_scope' | 'invalid_target' | 'unauthorized_client';

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

function oauthError(error: OAuthErrorCode, description: string, extraHeaders: Record<string, string> = {}, status = error === 'invalid_client' ? 401 : 400): HttpError {
  return new HttpError('oauth_error', description, {
    status,
    contentType: 'application/json',
    headers: { ...NO_STORE, ...extraHeaders },
    extensions: { error, error_description: description },
  });
}

interface TokenForm {
  grant_type?: string;
  client_id?: string;
  client_secret?: string;
  audience?: string;
  scope?: string;
}

interface Credentials {
  clientId: string;
  clientSecret: string;
  viaBasic: boolean;
}

function basicCredentials(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  if (!header || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) throw oauthError('invalid_client', 'Malformed HTTP Basic credentials', { 'WWW-Authenticate': 'Basic realm="flex"' });
  // RFC 6749 2.3.1: both parts are form-urlencoded before base64.
  const unform = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return s;
    }
  };
  return { clientId: unform(decoded.slice(0, colon)), clientSecret: unform(decoded.slice(colon + 1)) };
}

function credentialsOf(req: ApiRequest<unknown, unknown, TokenForm>): Credentials {
  const basic = basicCredentials(req.headers['authorization']);
  const form = req.body;
  if (basic && (form.client_id !== undefined || form.client_secret !== undefined)) {
    throw oauthError('invalid_request', 'Use one client authentication method: HTTP Basic or client_id/client_secret parameters, not both');
  }
  if (basic) return { ...basic, viaBasic: true };
  const missing = (['client_id', 'client_secret'] as const).filter((k) => !form[k]);
  if (missing.length > 0) throw oauthError('invalid_request', `Missing required parameter${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
  return { clientId: form.client_id!, clientSecret: form.client_secret!, viaBasic: false };
}

const tokenForm = objectSchema(
  {
    grant_type: { type: 'string', description: 'Must be `client_credentials`.' },
    client_id: { type: 'string', description: 'Client id (or use HTTP Basic authentication).' },
    client_secret: { type: 'string', description: 'Client secret (or use HTTP Basic authentication).' },
    audience: { type: 'string', description: 'The API audience; one of TOKEN_AUDIENCES (default `flex-api`). Optional for VTN credentials: their tokens default to the first TOKEN_AUDIENCES entry.' },
    scope: { type: 'string', description: 'Optional space-separated subset of the client’s scopes (VTN credentials) or permissions (organization clients).' },
  },
  [],
  { title: 'TokenRequest', additionalProperties: { type: 'string' } },
);

const tokenResponse = objectSchema(
  {
    access_token: { type: 'string' },
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer', example: 86400 },
    scope: { type: 'string' },
  },
  ['access_token', 'token_type', 'expires_in'],
  { title: 'TokenResponse' },
);

/** Errors raised by the shared pipeline (content type, form parsing, body size) in OAuth shape. */
function asOAuthError(err: HttpError): HttpError {
  if (err.code === 'oauth_error' || err.code === 'rate_limited' || err.status >= 500) return err;
  return oauthError('invalid_request', err.message, {}, err.status === 413 ? 413 : 400);
}

export function tokenRoutes(pool: Pool, signer: TokenSigner, options: TokenRouteOptions): RouteDef[] {
  const perClient: RateLimitWindow[] = [{ seconds: 60, max: options.perClientPerMinute }];
  const perAddress: RateLimitWindow[] = [{ seconds: 60, max: options.unknownClientPerMinute }];
  const failures = new FailedAttempts(options.rateLimits, 'token', { perPair: perClient, perAddress }, options.now);
  const now = options.now ?? Date.now;
  return [
    {
      method: 'POST',
      path: '/oauth/token',
      summary: 'Get an access token (OAuth 2.0 client credentials)',
      description:
        'Form parameters `grant_type=client_credentials`, `client_id`, `client_secret`, `audience` (client authentication may instead use HTTP Basic). ' +
        'Errors follow RFC 6749 section 5.2: `invalid_request` (400), `invalid_client` (401), `unsupported_grant_type` (400), `invalid_scope` (400), `invalid_target` (400, unknown audience). ' +
        'Tokens are valid for `expires_in` seconds; cache and reuse them. ' +
        'Limits (429 with Retry-After): tokens issued per client per minute (X-Rate-Limit-* headers), and failed attempts per address and per client id from one address (docs/security.md).',
      tags: ['Authentication'],
      auth: 'public',
      bodyKind: 'form',
      body: tokenForm,
      bodyExample: { grant_type: 'client_credentials', client_id: 'c_9d2f6a1b3e', client_secret: 'the-secret-shown-once', audience: 'flex-api' },
      responses: { 200: { description: 'An access token', schema: tokenResponse } },
      // Documents the 429 and the headers; counted by the handler once the secret is verified.
      rateLimit: { name: 'token', windows: perClient, key: 'custom' },
      // Before the body is read: an address that used up its failed attempts reads nothing more.
      screen: async (head) => {
        let basicId: string | undefined;
        try {
          basicId = basicCredentials(head.headers['authorization'])?.clientId;
        } catch {
          basicId = undefined;
        }
        await failures.check(head.remoteAddress, basicId);
      },
      mapError: asOAuthError,
      async handler(req: ApiRequest<unknown, unknown, TokenForm>) {
        const form = req.body;
        const credentials = credentialsOf(req);
        if (!form.grant_type) throw oauthError('invalid_request', 'Missing required parameter: grant_type');
        if (form.grant_type !== 'client_credentials') throw oauthError('unsupported_grant_type', 'Only grant_type=client_credentials is supported');
        if (form.audience !== undefined && !options.audiences.includes(form.audience)) throw oauthError('invalid_target', `Unknown audience ${JSON.stringify(form.audience)}`);

        await failures.check(req.remoteAddress, credentials.clientId);
        const client = await findClientForToken(pool, credentials.clientId);
        const authentic = client ? await verifySecret(credentials.clientSecret, client.secretHash) : await verifyAgainstDummy(credentials.clientSecret);
        if (!client || !authentic) {
          await failures.failed(req.remoteAddress, credentials.clientId);
          throw oauthError('invalid_client', 'Client authentication failed', credentials.viaBasic ? { 'WWW-Authenticate': 'Basic realm="flex"' } : {});
        }
        // OpenADR clients send no audience: a VTN credential's token defaults to the first one.
        const audience = form.audience || (client.kind === 'vtn' ? options.audiences[0] : undefined);
        if (!audience) throw oauthError('invalid_request', 'Missing required parameter: audience');
        // Counted for the client that proved its secret: nobody else can use up its quota.
        const rateHeaders = await consumeQuota(options.rateLimits, 'token', `client:${credentials.clientId}`, perClient, now());

        const granted = client.kind === 'vtn' ? client.scopes : client.permissions;
        let selected = granted;
        if (form.scope !== undefined && form.scope.trim() !== '') {
          const requested = [...new Set(form.scope.trim().split(/\s+/))];
          const unknown = requested.filter((s) => !granted.includes(s));
          if (unknown.length > 0) throw oauthError('invalid_scope', `Not granted to this client: ${unknown.join(' ')}`);
          selected = requested;
        }
        const accessToken = await signer.sign(
          {
            sub: credentials.clientId,
            org: client.organizationId,
            typ: client.kind === 'vtn' ? 'vtn' : 'client',
            cid: client.id,
            ver: client.tokenVersion,
            ...(client.kind === 'vtn' ? { scope: selected.join(' ') } : { perm: selected }),
          },
          audience,
        );
        const body: Record<string, unknown> = { access_token: accessToken, token_type: 'Bearer', expires_in: signer.ttlSeconds };
        if (client.kind === 'vtn' || form.scope) body.scope = selected.join(' ');
        return { status: 200, headers: { ...rateHeaders, ...NO_STORE }, body };
      },
    },
  ];
}
