// Secrets: generated from 32 random bytes, shown once, stored only as hashes, compared in
// constant time. Client secrets use scrypt (the interface's contract); personal access tokens use
// SHA-256, which is sound for 256-bit random values and lets each request look its token up by
// index instead of paying a deliberately slow hash.
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));

/** N=2^14, r=8, p=1: about 16 MiB and a few tens of milliseconds per hash (OWASP's minimum class). */
const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };
export const PAT_PREFIX = 'flex_pat_';
/** What the authenticator takes for a personal access token (it routes tokens by the prefix);
 * also the rule for a configured ADMIN_TOKEN, so a token that could never authenticate is
 * refused at start instead of being installed. */
export const PAT_FORMAT = /^flex_pat_[A-Za-z0-9_-]{32,}$/;
export const PAT_FORMAT_TEXT = 'flex_pat_ followed by at least 32 characters of A-Z, a-z, 0-9, _ or - (for example flex_pat_$(openssl rand -hex 32))';

export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function generatePersonalAccessToken(): string {
  return PAT_PREFIX + randomBytes(32).toString('base64url');
}

/** Public client identifiers: a kind prefix and 16 random bytes. */
export function generateClientId(kind: 'organization' | 'vtn'): string {
  return `${kind === 'vtn' ? 'vtn' : 'oc'}_${randomBytes(16).toString('hex')}`;
}

/** The first characters of a secret, stored and shown so a person can tell secrets apart. */
export function hintOf(secret: string): string {
  const body = secret.startsWith(PAT_PREFIX) ? secret.slice(PAT_PREFIX.length) : secret;
  return `${secret.startsWith(PAT_PREFIX) ? PAT_PREFIX : ''}${body.slice(0, 4)}…`;
}

export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(secret, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(secret, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

let dummyHash: Promise<string> | undefined;
/** Spends the same time as a real verification, so unknown client ids are not revealed by timing. */
export async function verifyAgainstDummy(secret: string): Promise<false> {
  dummyHash ??= hashSecret(generateSecret());
  await verifySecret(secret, await dummyHash);
  return false;
}

export function hashPersonalAccessToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
