import { describe, expect, it } from 'vitest';
import { generateSecret, hashPersonalAccessToken, hashSecret, hintOf, verifySecret } from '../../src/auth/secrets.ts';

describe('secrets', () => {
  it('are 32 random bytes, base64url', () => {
    const a = generateSecret();
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(a).not.toBe(generateSecret());
  });

  it('hash with scrypt and verify only the right secret', async () => {
    const secret = generateSecret();
    const stored = await hashSecret(secret);
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(stored).not.toContain(secret);
    expect(await verifySecret(secret, stored)).toBe(true);
    expect(await verifySecret(`${secret}x`, stored)).toBe(false);
    expect(await verifySecret(secret, 'md5$whatever')).toBe(false);
  });

  it('digest personal access tokens and hint secrets without revealing them', () => {
    expect(hashPersonalAccessToken('flex_pat_abc')).toHaveLength(32);
    expect(hintOf('abcdefgh')).toBe('abcd…');
    expect(hintOf('flex_pat_WXYZ123')).toBe('flex_pat_WXYZ…');
  });
});
