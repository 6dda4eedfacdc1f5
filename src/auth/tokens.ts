// Access tokens: HS256 JWTs signed and verified with jose. A token names its organization, its
// client (row id and public client id), the client's token version, and either the permissions
// of an organization client or the scopes of a VTN credential.
import { createSecretKey, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import type { Queryable } from '../store/database.ts';

export interface AccessClaims {
  /** Public client id. */
  sub: string;
  org: number;
  typ: 'client' | 'vtn';
  /** api_clients.id */
  cid: number;
  /** api_clients.token_version at issuance. */
  ver: number;
  perm?: string[];
  scope?: string;
  exp: number;
}

export type VerifyFailure = 'expired' | 'invalid';

export class TokenSigner {
  /** jose 6 runs on WebCrypto, whose operations hop through the libuv thread pool: about 0.4 ms
   * per verification here (bench/requestOverhead.bench.ts), whatever the key form. The
   * authenticator therefore verifies each token once and caches the result. */
  private readonly key: KeyObject;

  constructor(
    key: Uint8Array,
    private readonly keyId: string,
    private readonly issuer: string,
    readonly ttlSeconds: number,
  ) {
    this.key = createSecretKey(key);
  }

  async sign(claims: Omit<AccessClaims, 'exp'>, audience: string): Promise<string> {
    const { sub, ...rest } = claims;
    return new SignJWT(rest)
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: this.keyId })
      .setIssuer(this.issuer)
      .setSubject(sub)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + this.ttlSeconds)
      .setJti(randomUUID())
      .sign(this.key);
  }

  async verify(token: string, audiences: readonly string[]): Promise<AccessClaims | VerifyFailure> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: this.issuer, audience: [...audiences], algorithms: ['HS256'] });
      const { sub, org, typ, cid, ver, exp } = payload as Record<string, unknown>;
      if (typeof sub !== 'string' || typeof org !== 'number' || (typ !== 'client' && typ !== 'vtn') || typeof cid !== 'number' || typeof ver !== 'number' || typeof exp !== 'number') {
        return 'invalid';
      }
      return payload as unknown as AccessClaims;
    } catch (err) {
      return err instanceof joseErrors.JWTExpired ? 'expired' : 'invalid';
    }
  }
}

/** The configured JWT_SECRET, or the key kept in the database (created once, shared by instances). */
export async function loadSigningKey(db: Queryable, configured: string | undefined): Promise<{ keyId: string; key: Uint8Array }> {
  if (configured) return { keyId: 'configured', key: new TextEncoder().encode(configured) };
  await db.query('INSERT INTO signing_keys (id, secret) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', ['default', randomBytes(32)]);
  const { rows } = await db.query<{ secret: Buffer }>('SELECT secret FROM signing_keys WHERE id = $1', ['default']);
  return { keyId: 'default', key: new Uint8Array(rows[0]!.secret) };
}
