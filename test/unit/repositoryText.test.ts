// The repository's text speaks about the product, not about how it was built: no work sessions,
// no issue or ticket numbers as history, no "the lead's runs" or "another engineer's tests" in
// docs, comments, test names, benchmarks or the console. Decisions name their reason; the story
// belongs to git. The patterns are narrow on purpose: MQTT and database sessions, the browser's
// sessionStorage, code helpers and HTTP agents are the product's own words and stay allowed.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOTS = ['README.md', 'src', 'workers', 'test', 'bench', 'docs', 'console', '.ci', 'package.json', 'vitest.config.ts', 'Dockerfile', 'docker-compose.yml', 'dpdm.config.json'];
const TEXT = /\.(ts|tsx|md|sql|json|ya?ml|html|css|sh)$|(^|\/)(run|Dockerfile)$/;
/** Benchmark output (figures and dates of the runs are data, not prose). */
const SKIPPED_DIRS = new Set(['node_modules', 'results', 'images']);

/** Migrations already applied somewhere are frozen: the runner refuses to start when an applied
 * file's checksum changes (src/store/migrate.ts). These comments predate the rule. */
const FROZEN = new Set([
  'src/store/migrations/003_reading_partitions_race.sql',
  'src/store/migrations/004_reading_blocks.sql',
  'src/store/migrations/006_reading_block_days.sql',
  'src/store/migrations/008_questdb_journal_parts.sql',
  'src/vtn/migrations/003_repair_unreadable_text.sql',
]);

const ORDINAL = '(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth)';

/** How work was organised, in the forms it has been written. */
export const FORBIDDEN: [string, RegExp][] = [
  ['a numbered or dated work session', new RegExp(`\\b(?:${ORDINAL}|this|last|next|previous|earlier|later)[- ]sessions?\\b|\\bother sessions'`, 'i')],
  ['an issue, ticket or pull request as history', /\bissues? #?\d+|\bissue's\b|\bthe issue (?:names|asks|says|lists|text)\b|\btickets?\b|\bPR #?\d+/i],
  ['who did the work', /\b(?:the lead|lead's)\b(?! (?:time|to)\b)|\bhelpers?'s? (?:runs?|tests?|branch|files?|work|machine)\b|\bhelper branch\b|\b(?:an)?other (?:\w+ )?(?:engineers?|helpers|agents?)\b|\b(?:engineers|agents)' /i],
  ['the state of a branch as history', /\bthis branch\b|\bmerged head\b|\bmain at [0-9a-f]{7}\b|\bgit merge main\b|\bat the merge\b/i],
  ['a phase or pass of the work', /\bthis phase\b|\b(?:first|second) pass\b|\bdone when\b/i],
  ['a run told as history', /\bearlier runs?\b|\bUTC on \d{4}-\d\d-\d\d\b|\brun of \d{4}-\d\d-\d\d\b/i],
];

function files(root: string): string[] {
  if (!fs.existsSync(root)) return [];
  if (fs.statSync(root).isFile()) return [root];
  return fs.readdirSync(root, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(root, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : files(file);
    return TEXT.test(file) ? [file] : [];
  });
}

describe('repository text', () => {
  it('says nothing about how the work was organised', () => {
    const self = path.relative(process.cwd(), import.meta.filename);
    const found: string[] = [];
    let scanned = 0;
    for (const file of ROOTS.flatMap(files)) {
      if (file === self || FROZEN.has(file)) continue;
      scanned += 1;
      fs.readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const [what, pattern] of FORBIDDEN) {
            const m = pattern.exec(line);
            if (m) found.push(`${file}:${i + 1}: ${what}: "${m[0]}"`);
          }
        });
    }
    expect(scanned).toBeGreaterThan(300);
    expect(found).toEqual([]);
  });

  it('catches the forms it is meant to catch, and leaves the product’s own words alone', () => {
    const hits = (text: string) => FORBIDDEN.filter(([, p]) => p.test(text)).length;
    for (const bad of ['measured in the seventh session', 'issue 12, item 3', 'Regression (#24)'.replace('#', 'issue '), 'the lead’s runs'.replace('’', "'"), 'another engineer’s tests', 'this branch at 3fa42ff', 'main at 3fa42ff', 'the issue names autocannon', 'other sessions\' work', 'a helper branch']) {
      expect(hits(bad), bad).toBeGreaterThan(0);
    }
    for (const good of ['an MQTT session is closed', 'the database session holds the lock', 'sessionStorage', 'the credential’s other sessions stay', 'test helpers', 'http.Agent', 'sources never lead back to it', 'the lead time of an order']) {
      expect(hits(good), good).toBe(0);
    }
  });
});
