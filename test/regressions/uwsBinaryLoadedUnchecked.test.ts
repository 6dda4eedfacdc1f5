// Regression: a uWebSockets.js republication of unknown origin (`uws-v20.57`, the @btc-vision
// package) shipped in every install and the production image, yet never loaded: its `exports` map
// lists no ./package.json, so the loader reported the present package as "not installed" (while
// docs/architecture.md and the Dockerfile said it loads on Node 24), and no `.node` file's checksum
// was checked before it was loaded. The alias is gone; the loader finds packages on disk, and loads
// a binary only when its sha256 is in the table of the one trusted build.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { binaryName, loadUws, packageDir, UWS_BUILD } from '../../src/http/uwsLoader.ts';

describe('native uWebSockets.js binaries', () => {
  it('only the trusted build is a dependency', () => {
    const manifest = JSON.parse(fs.readFileSync('package.json', 'utf8'));
    const all = { ...manifest.dependencies, ...manifest.optionalDependencies, ...manifest.devDependencies };
    expect(Object.entries(all).filter(([name, spec]) => /uws|uwebsockets/i.test(`${name} ${spec}`))).toEqual([['uWebSockets.js', 'npm:@trufflesuite/uws-js-unofficial@20.30.0-unofficial.0']]);
    expect(fs.readFileSync('package-lock.json', 'utf8')).not.toContain('btc-vision');
    expect(packageDir('uws-v20.57')).toBeUndefined();
  });

  it('a package whose exports map hides package.json is found, not reported "not installed"', () => {
    // aedes (a dependency) exports no ./package.json, as the removed build did.
    expect(() => import.meta.resolve('aedes/package.json')).toThrow();
    expect(packageDir('aedes')).toMatch(/node_modules\/aedes$/);
  });

  it('a binary whose sha256 is not the table’s is never loaded', () => {
    const name = binaryName();
    const tampered = { ...UWS_BUILD, sha256: { ...UWS_BUILD.sha256, [name]: '0'.repeat(64) } };
    const result = loadUws(tampered);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      const present = fs.existsSync(`node_modules/uWebSockets.js/binaries/${name}`);
      expect(result.reason).toMatch(present ? /has sha256 [0-9a-f]{64}, not the 0{64} of the pinned package; not loaded/ : /missing from the installed package/);
    }
    // The pinned table loads where this Node has a binary (Node 20 here), and says why not elsewhere.
    const pinned = loadUws();
    if (UWS_BUILD.sha256[name]) expect(pinned.ok).toBe(true);
    else expect(pinned.ok || pinned.reason).toMatch(/no binary for Node ABI/);
  });

  it('the default front is uWebSockets.js where the trusted build loads (HTTP_SERVER=auto)', () => {
    expect(loadConfig({}).httpServer).toBe('auto');
  });
});
