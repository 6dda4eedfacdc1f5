// The "Find an endpoint's code from its path" table of docs/endpoints.md stays true: every route of the route
// table falls under a listed path, the file listed there defines it, and no row is stale.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

interface Row {
  prefixes: string[];
  file: string;
}

function routeMap(): Row[] {
  const page = fs.readFileSync('docs/endpoints.md', 'utf8');
  const start = page.indexOf("## Find an endpoint's code from its path");
  expect(start, 'the section').toBeGreaterThan(0);
  const rows = page.slice(start + 3).split('\n## ')[0]!.split('\n').filter((line) => line.startsWith('| `'));
  return rows.map((line) => {
    const [paths, file] = line.split('|').slice(1, 3).map((cell) => cell.trim());
    return { prefixes: [...paths!.matchAll(/`(\/[^`]*)`/g)].map((m) => m[1]!), file: /`([^`]+\.ts)`/.exec(file!)![1]! };
  });
}

const under = (path: string, prefix: string) => path === prefix || (prefix === '/' ? false : path.startsWith(`${prefix}/`));

describe('the endpoint map', () => {
  it('lists every route under a path whose file defines it', () => {
    const rows = routeMap();
    expect(rows.length).toBeGreaterThan(10);
    const used = new Set<string>();
    const problems: string[] = [];
    for (const { def } of t.app.router.routes) {
      const matches = rows.flatMap((row) => row.prefixes.filter((p) => under(def.path, p)).map((prefix) => ({ prefix, file: row.file })));
      const best = matches.sort((a, b) => b.prefix.length - a.prefix.length)[0];
      if (!best) {
        problems.push(`${def.method} ${def.path}: not listed`);
        continue;
      }
      used.add(best.prefix);
      if (!fs.existsSync(best.file)) {
        problems.push(`${def.method} ${def.path}: ${best.file} does not exist`);
        continue;
      }
      // The file names the route's last fixed segment (`'/api/me'`, `${VTN}/events`, `/resources`).
      const segment = def.path.split('/').filter((s) => s && !s.startsWith(':')).pop();
      const source = fs.readFileSync(best.file, 'utf8');
      if (segment ? !source.includes(`/${segment}`) : !source.includes(`'${def.path}'`)) problems.push(`${def.method} ${def.path}: ${best.file} does not define it`);
    }
    for (const row of rows) for (const prefix of row.prefixes) if (!used.has(prefix)) problems.push(`${prefix} (${row.file}): no route below it`);
    expect(problems).toEqual([]);
  });
});
