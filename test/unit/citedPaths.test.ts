// Every repository file that code comments and docs cite (`test/unit/docs.test.ts`,
// `docs/errors.md`, `workers/readings/task.ts` …) exists: a comment that sends a maintainer to a
// file that is not there (renamed, never written) is a small lie that outlives its change.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOTS = ['src', 'workers', 'bench', 'test', 'docs', 'console/src', 'README.md'];
const CITED = /(?<![\w./<>-])((?:src|workers|bench|test|docs|console)\/[\w./-]+\.(?:ts|tsx|md|sql|json))/g;

function files(root: string): string[] {
  if (fs.statSync(root).isFile()) return [root];
  return fs
    .readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(root, name))
    .filter((file) => /\.(ts|tsx|md)$/.test(file) && fs.statSync(file).isFile());
}

describe('cited paths', () => {
  it('name files that exist', () => {
    const missing: string[] = [];
    let cited = 0;
    for (const file of ROOTS.flatMap(files)) {
      for (const [, cite] of fs.readFileSync(file, 'utf8').matchAll(CITED)) {
        cited += 1;
        if (!fs.existsSync(cite!)) missing.push(`${file}: ${cite}`);
      }
    }
    expect(cited).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });
});
