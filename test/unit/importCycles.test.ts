// No import cycles anywhere in the tree (`npm run cycles` prints them): a cycle means a type or
// function lives in the wrong file, and makes module start-up order matter. Type-only imports
// count too. The file list is dpdm.config.json's, so the script and this test see the same tree.
import fs from 'node:fs';
import { parseCircular, parseDependencyTree } from 'dpdm';
import { describe, expect, it } from 'vitest';

const config = JSON.parse(fs.readFileSync('dpdm.config.json', 'utf8')) as { files: string[] };

describe('module graph', () => {
  it('has no import cycles', async () => {
    const tree = await parseDependencyTree(config.files, { transform: false });
    expect(Object.keys(tree).filter((file) => file.startsWith('src/')).length).toBeGreaterThan(100);
    expect(parseCircular(tree).map((cycle) => cycle.join(' -> '))).toEqual([]);
  }, 120_000);
});
