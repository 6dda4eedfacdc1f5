// Regression: an ADMIN_TOKEN without the `flex_pat_` prefix was logged as
// "installed" and then every request with it got 401 (only `flex_pat_…` tokens are looked up as
// personal access tokens). Such a configuration is now refused at start with a clear message.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ensureBootstrapAdmin } from '../../src/auth/bootstrap.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('ADMIN_TOKEN', () => {
  it('is refused at start without the flex_pat_ prefix, saying why', () => {
    for (const token of ['x'.repeat(48), 'Bearer flex_pat_' + 'a'.repeat(40), 'flex_pat_' + 'a'.repeat(10), 'flex_pat_' + 'a b'.repeat(16)]) {
      let error: unknown;
      try {
        loadConfig({ ADMIN_TOKEN: token });
      } catch (err) {
        error = err;
      }
      expect(error, token).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.join('\n'), token).toMatch(/ADMIN_TOKEN must be a personal access token: flex_pat_ followed by at least 32/);
    }
    expect(loadConfig({ ADMIN_TOKEN: `flex_pat_${'a'.repeat(32)}` }).adminToken).toBe(`flex_pat_${'a'.repeat(32)}`);
  });

  it('is refused from DATA_DIR/admin-token too', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-admin-token-'));
    try {
      fs.writeFileSync(path.join(dir, 'admin-token'), `${'y'.repeat(48)}\n`);
      const noDatabase = {} as never; // the file is checked before the database is touched
      await expect(ensureBootstrapAdmin(noDatabase, undefined, dir, pino({ level: 'silent' }))).rejects.toThrow(/admin-token.*flex_pat_/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
