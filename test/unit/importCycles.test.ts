// No import cycles anywhere in the tree (`npm run cycles` prints them): a cycle means a type or
// function lives in the wrong file, and makes module start-up order matter. Type-only imports
// count too. The file list is dpdm.config.json's, so the script and this test see the same tree.
import fs from 'node:fs';
import { parseCircular, parseDependencyTree } from 'dpdm';
import { describe, expect, it } from 'vitest';

const config = JSON.parse(fs.readFileSync('dpdm.config.json', 'utf8')) as { files: string[] };

const treeOnce = parseDependencyTree(config.files, { transform: false });
const ENTRY_POINTS = /^workers\/(readings\/(task|aggregateTask|ilpTask|sliceTask)|virtual\/task)\.ts$/;

describe('module graph', () => {
  it('has no import cycles', async () => {
    const tree = await treeOnce;
    expect(Object.keys(tree).filter((file) => file.startsWith('src/')).length).toBeGreaterThan(100);
    expect(parseCircular(tree).map((cycle) => cycle.join(' -> '))).toEqual([]);
  }, 120_000);

  // workers/ holds only what Piscina loads; the server imports the shared library (src/shared/),
  // never a worker file, except src/workerPool.ts's type imports of the entry points (the typed
  // task map). src/shared/ stays usable on either side of the thread boundary: it imports
  // nothing from src/ outside itself.
  it('keeps workers/ for task entry points and src/shared/ free of server imports', async () => {
    const tree = await treeOnce;
    const wrong: string[] = [];
    for (const [file, deps] of Object.entries(tree)) {
      for (const dep of deps ?? []) {
        if (!dep.id) continue;
        if (file.startsWith('src/') && dep.id.startsWith('workers/')) {
          if (file !== 'src/workerPool.ts' || !ENTRY_POINTS.test(dep.id)) wrong.push(`${file} -> ${dep.id}`);
        }
        if (file.startsWith('src/shared/') && dep.id.startsWith('src/') && !dep.id.startsWith('src/shared/')) wrong.push(`${file} -> ${dep.id}`);
        if (file.startsWith('workers/') && dep.id.startsWith('src/') && !dep.id.startsWith('src/shared/')) wrong.push(`${file} -> ${dep.id}`);
      }
    }
    expect(wrong).toEqual([]);
    const poolImports = fs.readFileSync('src/workerPool.ts', 'utf8').split('\n').filter((line) => line.includes("'../workers/"));
    expect(poolImports.length).toBeGreaterThan(0);
    for (const line of poolImports) expect(line).toMatch(/^import type /);
    expect(Object.keys(tree).filter((file) => file.startsWith('workers/')).sort()).toEqual(
      ['workers/readings/aggregateTask.ts', 'workers/readings/ilpTask.ts', 'workers/readings/sliceTask.ts', 'workers/readings/task.ts', 'workers/transfer.ts', 'workers/virtual/task.ts'],
    );
  }, 120_000);
});
