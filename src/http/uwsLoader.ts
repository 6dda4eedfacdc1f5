// Loads uWebSockets.js from the one build this project trusts, and only a binary whose sha256 is
// in the table below: the file is hashed and compared before process.dlopen, so a binary swapped
// in node_modules (or a package other than the one pinned) is never loaded.
//
// The build: `uWebSockets.js` in package.json = npm's @trufflesuite/uws-js-unofficial
// 20.30.0-unofficial.0 (Truffle Suite, ConsenSys: their node-gyp build of uWebSockets.js v20.30.0,
// shipped with Ganache), binaries for Node 16, 18 and 20 (ABI 93, 108, 115) on Linux
// x64/arm64/arm, macOS and Windows, linked against glibc 2.17+. Its entry point is bypassed on purpose: on a Node
// without a binary it falls back to a JavaScript imitation that crashes on the first request
// (regression uwsShimCrashesOnNode22). Provenance and what loads where: docs/architecture.md,
// "Native dependencies".
//
// Where the table comes from: `sha256sum binaries/*.node` of the package's npm tarball,
// trufflesuite-uws-js-unofficial-20.30.0-unofficial.0.tgz, whose sha512 (r5X0aOQc…TppwA==) is the
// `integrity` package-lock.json pins and npm checks at every install; the tarball was fetched
// again from the registry and unpacked, and its binaries hash to these values. A new version
// needs a new table, made the same way.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type * as UwsModule from 'uWebSockets.js';

export type Uws = typeof UwsModule;

export interface UwsBuild {
  /** Dependency name in package.json. */
  dependency: string;
  /** uWebSockets.js version the binaries come from. */
  version: string;
  /** Folder of the binaries inside the package. */
  binaryDir: string;
  /** sha256 (hex) of every binary that may be loaded, by file name. */
  sha256: Readonly<Record<string, string>>;
}

export const UWS_BUILD: UwsBuild = {
  dependency: 'uWebSockets.js',
  version: '20.30.0',
  binaryDir: 'binaries',
  sha256: {
    'uws_darwin_arm64_93.node': 'cbf5a7dd9270b57044e5d4439d64cc3073067be3a29578ddb4e2c84417ec851e',
    'uws_darwin_arm64_108.node': '3e5d284ef20c3a641e3e1e4571f983d56869fb5cc8c037242c3edc6e83d4d86b',
    'uws_darwin_arm64_115.node': '2a3aff854929518a3bc066527340ab0fc47c970cda4cdbb86f5d65b03ee83885',
    'uws_darwin_x64_93.node': 'a173ecd15cff580dcc63bb173d7ee0370b2dee9e573a3bd1ddf1ebc67f69a379',
    'uws_darwin_x64_108.node': '35bf16c62269afbafc6c91c06b9c3e690bdba7357b2ce0e2c34bc37f8c053a38',
    'uws_darwin_x64_115.node': 'cdb95fb0b602155506b5430791c0dce4341ec1268ff23bdace8f1c77e306e4f7',
    'uws_linux_arm64_93.node': '9262dcb6a48abf7927ed9e0af590ee953c8823af5e16108b56f6c2cce070ac64',
    'uws_linux_arm64_108.node': '44f342406e3d2378a195b322d8b19ee0a766e33a19e6db424914a0b02eb05190',
    'uws_linux_arm64_115.node': 'fa46518766a985c6a79daef039f40cccd8e98e9a288f2ceaf31a0a18901bbfd5',
    'uws_linux_arm_93.node': '58f0ccf097eea0015a7ece9ead82a9b756f7d904ccba53e589b9dcf30c2fb2ee',
    'uws_linux_arm_108.node': '9fd6ab892105269ea41a0a6cddc401f14f35c4c555dfdfc6714d14174d49771b',
    'uws_linux_arm_115.node': 'e1c6907fe5877bfdc3bcaa29fa78ab9dd142c4ca8d65102fbc18c9a47e478d31',
    'uws_linux_x64_93.node': 'cc7f24ca9321fa29a9f1be0fa000c1d868d189bd300a16812b5cce0c147a27d6',
    'uws_linux_x64_108.node': 'a2d801a6ff997af0f6ee079abd1d5f8ae74f355c91f106e985e74876a78d34d9',
    'uws_linux_x64_115.node': 'f158fb441f7e2e37b3ab9a56782fe37f4c0d33b5cd32e96ee5c0120ce7db7ced',
    'uws_win32_x64_93.node': '5831a8c685bef8a155b7cc05894567cf9095fca4ac5f034dfea23302ac653f41',
    'uws_win32_x64_108.node': 'b31ee017129b11990e8b45f1feeda5caf6cdab386e6c4f4a6432495b8404b9fd',
    'uws_win32_x64_115.node': '6dd62494c776ba94a1265969caaa1cc88d02a9a3efb14ef35ef2a1215393cdd9',
  },
};

export type UwsLoad = { ok: true; uws: Uws; build: UwsBuild; binary: string } | { ok: false; reason: string };

const require = createRequire(import.meta.url);

export function binaryName(abi: string = process.versions.modules): string {
  return `uws_${process.platform}_${process.arch}_${abi}.node`;
}

/** The installed package's folder: looked up on disk along Node's node_modules path, not through
 * the package's `exports` map (which need not list package.json, so resolving it would report a
 * present package as missing). */
export function packageDir(dependency: string): string | undefined {
  for (const dir of require.resolve.paths(dependency) ?? []) {
    if (existsSync(join(dir, dependency, 'package.json'))) return join(dir, dependency);
  }
  return undefined;
}

let cached: UwsLoad | undefined;

/** Loads the build's binary for this Node ABI, CPU and OS when its sha256 is the table's; else
 * says why not. Remembered for the process. `abi` and `build` are for tests. */
export function loadUws(build: UwsBuild = UWS_BUILD, abi: string = process.versions.modules): UwsLoad {
  const remember = build === UWS_BUILD && abi === process.versions.modules;
  if (cached && remember) return cached;
  const result = load(build, abi);
  if (remember) cached = result;
  return result;
}

function load(build: UwsBuild, abi: string): UwsLoad {
  const what = `${build.dependency} (uWebSockets.js v${build.version})`;
  const dir = packageDir(build.dependency);
  if (!dir) return { ok: false, reason: `${what}: not installed` };
  const name = binaryName(abi);
  const expected = build.sha256[name];
  if (!expected) return { ok: false, reason: `${what}: no binary for Node ABI ${abi} on ${process.platform}-${process.arch} (it has ${abisOf(build)})` };
  const binary = join(dir, build.binaryDir, name);
  let bytes: Buffer;
  try {
    bytes = readFileSync(binary);
  } catch {
    return { ok: false, reason: `${what}: ${name} is missing from the installed package` };
  }
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== expected) return { ok: false, reason: `${what}: ${name} has sha256 ${actual}, not the ${expected} of the pinned package; not loaded (reinstall with npm ci)` };
  try {
    const module = { exports: {} as Uws };
    process.dlopen(module, binary);
    if (typeof module.exports.App !== 'function') return { ok: false, reason: `${what}: ${name} exports no App` };
    return { ok: true, uws: module.exports, build, binary };
  } catch (err) {
    return { ok: false, reason: `${what}: ${name} does not load here: ${(err as Error).message.split('\n')[0]}` };
  }
}

function abisOf(build: UwsBuild): string {
  const prefix = `uws_${process.platform}_${process.arch}_`;
  const abis = Object.keys(build.sha256)
    .filter((n) => n.startsWith(prefix))
    .map((n) => n.slice(prefix.length, -'.node'.length));
  return abis.length > 0 ? `Node ABI ${abis.join(', ')} here` : `no binary for ${process.platform}-${process.arch}`;
}
