// The browser tests need the built console (dist/console). A fresh clone has none, so the test
// run builds it first, unless a build of exactly these sources is already there: a stamp holds a
// hash of every file under console/ and of the versions of the packages bundled into it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const CONSOLE_DIST = path.join(ROOT, 'dist', 'console');
const STAMP = path.join(CONSOLE_DIST, '.build-stamp');
const BUNDLED = ['vite', 'preact', 'uplot', 'swagger-ui-dist'];

function sourceHash(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else hash.update(path.relative(ROOT, file)).update(fs.readFileSync(file));
    }
  };
  walk(path.join(ROOT, 'console'));
  // The timeline shares its interval rule with the VTN (src/vtn/timeSpan.ts).
  hash.update(fs.readFileSync(path.join(ROOT, 'src/vtn/timeSpan.ts')));
  for (const name of BUNDLED) hash.update(JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version);
  return hash.digest('hex');
}

/** Builds the console unless dist/console already holds a build of the current sources. */
export function ensureConsoleBuilt(): void {
  const hash = sourceHash();
  if (fs.existsSync(STAMP) && fs.readFileSync(STAMP, 'utf8') === hash) return;
  const vite = path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  const run = spawnSync(process.execPath, [vite, 'build', '--config', 'console/vite.config.ts'], { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`Building the console failed (exit ${run.status})`);
  fs.writeFileSync(STAMP, hash);
}
