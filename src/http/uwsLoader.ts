// Finds a uWebSockets.js native binary that loads on this Node ABI, CPU and C library. Two builds
// are installed (package.json; their provenance: docs/architecture.md, "HTTP server"):
//   - `uws-v20.57`: uWebSockets.js v20.57.0 as republished on npm, binaries for Node 20, 22, 24
//     and 25, linked against glibc 2.38 (so not on Debian 12);
//   - `uWebSockets.js`: @trufflesuite's v20.30.0 build, binaries up to Node 20, glibc 2.17+.
// Each package's own entry point is bypassed on purpose: @trufflesuite's falls back to a
// JavaScript imitation that crashes on the first request on Node 22 (regression test
// uwsShimCrashesOnNode22). We require the `.node` file itself, so a build either loads natively or
// is reported as unusable, with the loader's reason.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as UwsModule from 'uWebSockets.js';

export type Uws = typeof UwsModule;

export interface UwsBuild {
  /** Dependency name in package.json. */
  dependency: string;
  /** uWebSockets.js version the binaries come from. */
  version: string;
  /** Folder of the binaries inside the package. */
  binaryDir: string;
}

/** In order of preference: the newer build first. */
export const UWS_BUILDS: readonly UwsBuild[] = [
  { dependency: 'uws-v20.57', version: '20.57.0', binaryDir: '.' },
  { dependency: 'uWebSockets.js', version: '20.30.0', binaryDir: 'binaries' },
];

export type UwsLoad =
  | { ok: true; uws: Uws; build: UwsBuild; binary: string; skipped: string[] }
  | { ok: false; reasons: string[] };

const require = createRequire(import.meta.url);

export function binaryName(abi: string = process.versions.modules): string {
  return `uws_${process.platform}_${process.arch}_${abi}.node`;
}

let cached: UwsLoad | undefined;

/** Loads the first build whose binary loads here; the result is remembered for the process.
 * `abi` is for tests: the binary another Node release would look for. */
export function loadUws(builds: readonly UwsBuild[] = UWS_BUILDS, abi: string = process.versions.modules): UwsLoad {
  const remember = builds === UWS_BUILDS && abi === process.versions.modules;
  if (cached && remember) return cached;
  const reasons: string[] = [];
  for (const build of builds) {
    const reason = `${build.dependency} (uWebSockets.js v${build.version})`;
    let packageDir: string;
    try {
      packageDir = dirname(require.resolve(`${build.dependency}/package.json`));
    } catch {
      reasons.push(`${reason}: not installed`);
      continue;
    }
    const binary = join(packageDir, build.binaryDir, binaryName(abi));
    try {
      const uws = require(binary) as Uws;
      if (typeof uws.App !== 'function') throw new Error('the binary exports no App');
      const result: UwsLoad = { ok: true, uws, build, binary, skipped: reasons };
      if (remember) cached = result;
      return result;
    } catch (err) {
      const message = (err as Error).message.split('\n')[0]!;
      reasons.push(`${reason}: ${message.includes('Cannot find module') ? `no binary for Node ABI ${abi} on ${process.platform}-${process.arch}` : message}`);
    }
  }
  const result: UwsLoad = { ok: false, reasons };
  if (remember) cached = result;
  return result;
}
