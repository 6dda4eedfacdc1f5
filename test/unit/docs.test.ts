// The documentation stays true: every error code is in docs/errors.md, every configuration
// variable in docs/configuration.md with its default, every code table in docs/codes.md; the
// README starts with the two set-up commands CI runs; bad configuration is refused.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOCS, ConfigError, loadConfig } from '../../src/config.ts';
import { ERROR_CATALOGUE } from '../../src/http/errors.ts';
import { CODE_TABLES, codeTableMarkdown } from '../../src/codes.ts';

const readme = fs.readFileSync('README.md', 'utf8');
const errorsDoc = fs.readFileSync('docs/errors.md', 'utf8');
const configurationDoc = fs.readFileSync('docs/configuration.md', 'utf8');
const codesDoc = fs.readFileSync('docs/codes.md', 'utf8');

describe('documentation', () => {
  it('lists every error code with its status', () => {
    for (const [code, { status }] of Object.entries(ERROR_CATALOGUE)) {
      expect(errorsDoc, code).toMatch(new RegExp(`\\| \`${code}\` \\| [^|]*${status}`));
    }
  });

  it('lists every configuration variable with its default in docs/configuration.md, and no other', () => {
    for (const doc of CONFIG_DOCS) {
      expect(configurationDoc, doc.name).toContain(`| \`${doc.name}\` | ${doc.default} | ${doc.description} |`);
    }
    const listed = [...configurationDoc.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
    expect(listed.filter((name) => !CONFIG_DOCS.some((doc) => doc.name === name))).toEqual([]);
  });

  it('shows every numeric code table in docs/codes.md', () => {
    for (const table of CODE_TABLES) expect(codesDoc, table.name).toContain(codeTableMarkdown(table));
  });

  it('starts the README with the two set-up commands, the ones CI runs', () => {
    const setup = readme.slice(readme.indexOf('## Set up'), readme.indexOf('\n## ', readme.indexOf('## Set up') + 1));
    const commands = [...setup.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
    expect(commands).toEqual(['npm install && npm start', 'npm install && npm test']);
    expect(readme.indexOf('```')).toBe(readme.indexOf('```sh\nnpm install && npm start'));
    const ci = fs.readFileSync('.ci/run', 'utf8');
    expect(ci).toMatch(/^npm install$/m);
    expect(ci).toMatch(/^npm test$/m);
  });
});

describe('configuration', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 8080, host: '127.0.0.1', dataDir: './.data', tokenTtlSeconds: 86400, rateLimitReadingsPerSecond: 5, rateLimitReadingsPerMinute: 20, bodyLimitBytes: 268435456 });
  });

  it('names every bad value at once', () => {
    try {
      loadConfig({ PORT: '99999', JWT_SECRET: 'short', DATABASE_URL: 'mysql://x', TRUST_PROXY: 'maybe' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toContain('PORT');
      expect(problems).toContain('JWT_SECRET');
      expect(problems).toContain('DATABASE_URL');
      expect(problems).toContain('TRUST_PROXY');
    }
  });
});
