// Bearer token → Principal. Two kinds of token:
// - JWT access tokens from POST /oauth/token. The signature is verified once per token; the
//   client's token version and its organization's features are re-read at most every
//   AUTH_CACHE_MS, so a deleted client, a rotated secret or a disabled feature takes effect
//   within that time (docs/security.md).
// - Personal access tokens (`flex_pat_…`), looked up by SHA-256 digest, re-read at the same pace.
// Concurrent requests with the same stale token share one database round trip.
import { HttpError } from '../http/errors.ts';
import type { Principal } from '../http/types.ts';
import type { Queryable } from '../store/database.ts';
import { clientAccess } from './clientStore.ts';
import { accessByPersonalAccessToken } from './identityStore.ts';
import { PAT_PREFIX, hashPersonalAccessToken } from './secrets.ts';
import type { AccessClaims, TokenSigner } from './tokens.ts';

interface Entry {
  /** Undefined when the token was found revoked at the last check. */
  principal: Principal | undefined;
  claims: AccessClaims | undefined;
  checkedAt: number;
  /** Epoch ms after which the token is expired (Infinity for personal access tokens). */
  expiresAt: number;
}

const MAX_CACHED_TOKENS = 50_000;
const EMPTY: ReadonlySet<string> = new Set();

const invalid = (detail: string) =>
  new HttpError('invalid_token', detail, { headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${detail}"` } });

export class Authenticator {
  private readonly cache = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Entry>>();

  constructor(
    private readonly db: Queryable,
    private readonly signer: TokenSigner,
    private readonly audiences: readonly string[],
    private readonly cacheMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  authenticate = async (authorization: string): Promise<Principal> => {
    const space = authorization.indexOf(' ');
    if (space === -1 || authorization.slice(0, space).toLowerCase() !== 'bearer') throw invalid('The Authorization header must be "Bearer <token>"');
    const token = authorization.slice(space + 1).trim();
    if (token === '' || token.length > 8192) throw invalid('The bearer token is empty or too long');
    const now = this.now();
    let entry = this.cache.get(token);
    if (!entry || now - entry.checkedAt >= this.cacheMs) entry = await this.refresh(token, entry);
    if (now >= entry.expiresAt) {
      this.cache.delete(token);
      throw invalid('The access token has expired');
    }
    if (!entry.principal) throw invalid('The access token has been revoked');
    return entry.principal;
  };

  private refresh(token: string, previous: Entry | undefined): Promise<Entry> {
    let promise = this.pending.get(token);
    if (!promise) {
      promise = this.load(token, previous).finally(() => this.pending.delete(token));
      this.pending.set(token, promise);
    }
    return promise;
  }

  private async load(token: string, previous: Entry | undefined): Promise<Entry> {
    const entry = token.startsWith(PAT_PREFIX) ? await this.loadPersonal(token) : await this.loadJwt(token, previous?.claims);
    if (this.cache.size >= MAX_CACHED_TOKENS) {
      // Map iteration is insertion order: drop the oldest entry.
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.delete(token);
    this.cache.set(token, entry);
    return entry;
  }

  private async loadPersonal(token: string): Promise<Entry> {
    const access = await accessByPersonalAccessToken(this.db, hashPersonalAccessToken(token));
    if (!access) throw invalid('Unknown personal access token');
    return {
      claims: undefined,
      checkedAt: this.now(),
      expiresAt: Infinity,
      principal: {
        kind: 'user',
        subject: `user:${access.userId}`,
        organizationId: access.organizationId,
        permissions: new Set(access.permissions),
        scopes: EMPTY,
        features: new Set(access.features),
        globalAdmin: access.globalAdmin,
        rateLimitKey: null,
        clientRowId: null,
      },
    };
  }

  private async loadJwt(token: string, known: AccessClaims | undefined): Promise<Entry> {
    let claims = known;
    if (!claims) {
      const verified = await this.signer.verify(token, this.audiences);
      if (verified === 'expired') throw invalid('The access token has expired');
      if (verified === 'invalid') throw invalid('The access token is not valid');
      claims = verified;
    }
    const access = await clientAccess(this.db, claims.cid);
    const revoked = !access || access.tokenVersion !== claims.ver;
    return {
      claims,
      checkedAt: this.now(),
      expiresAt: claims.exp * 1000,
      principal: revoked
        ? undefined
        : {
            kind: claims.typ,
            subject: claims.sub,
            organizationId: claims.org,
            permissions: new Set(claims.perm ?? []),
            scopes: new Set(claims.scope ? claims.scope.split(' ') : []),
            features: new Set(access.features),
            globalAdmin: false,
            rateLimitKey: `c${claims.cid}`,
            clientRowId: claims.cid,
          },
    };
  }
}
