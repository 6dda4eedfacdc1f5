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
import { clientAccess, clientAccessMany } from './clientStore.ts';
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

  /**
   * Whether each of these tokens still authenticates, read from the database now whatever the
   * cache holds (one query for all access tokens), for sessions that outlive a request: the
   * embedded MQTT broker calls it every AUTH_CACHE_MS for its connected clients. Refreshes their
   * cache entries. A token that is expired, revoked or unknown maps to undefined.
   */
  async recheck(tokens: Iterable<string>): Promise<Map<string, Principal | undefined>> {
    const result = new Map<string, Principal | undefined>();
    const jwts: { token: string; claims: AccessClaims }[] = [];
    for (const token of new Set(tokens)) {
      const claims = this.cache.get(token)?.claims;
      if (claims) jwts.push({ token, claims });
      else {
        // Personal access tokens, and tokens no longer cached: one by one, from the database.
        this.cache.delete(token);
        result.set(token, await this.authenticate(`Bearer ${token}`).catch(() => undefined));
      }
    }
    if (jwts.length === 0) return result;
    const access = await clientAccessMany(this.db, [...new Set(jwts.map((j) => j.claims.cid))]);
    const now = this.now();
    for (const { token, claims } of jwts) {
      const entry = this.jwtEntry(claims, access.get(claims.cid), now);
      if (this.cache.has(token)) this.cache.set(token, entry);
      result.set(token, now >= entry.expiresAt ? undefined : entry.principal);
    }
    return result;
  }

  private async loadJwt(token: string, known: AccessClaims | undefined): Promise<Entry> {
    let claims = known;
    if (!claims) {
      const verified = await this.signer.verify(token, this.audiences);
      if (verified === 'expired') throw invalid('The access token has expired');
      if (verified === 'invalid') throw invalid('The access token is not valid');
      claims = verified;
    }
    return this.jwtEntry(claims, await clientAccess(this.db, claims.cid), this.now());
  }

  private jwtEntry(claims: AccessClaims, access: { tokenVersion: number; features: string[] } | undefined, now: number): Entry {
    const revoked = !access || access.tokenVersion !== claims.ver;
    return {
      claims,
      checkedAt: now,
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
