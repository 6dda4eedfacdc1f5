// The built console (dist/console, written by `vite build` from console/): every file read once
// into memory with the gzip and brotli variants the build wrote beside it, a strong ETag per
// representation, and the choice of representation from Accept-Encoding. Nothing here reads a
// path a client names: lookups are by key in the map built at load time.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { acceptedQualities } from '../http/compression.ts';

export type Encoding = 'br' | 'gzip';

export interface Representation {
  body: Buffer;
  /** Strong ETag of these exact bytes (each encoding has its own, RFC 9110 8.8.3). */
  etag: string;
  encoding: Encoding | undefined;
}

export interface Asset {
  contentType: string;
  identity: Representation;
  gzip: Representation | undefined;
  br: Representation | undefined;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** The folder `vite build` writes to: `dist/console` under the project root, found by walking up
 * from this module (src/console when run from source, dist/src/console when built). */
export function defaultConsoleDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i += 1) {
    if (existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist', 'console');
    dir = path.dirname(dir);
  }
  return path.resolve('dist', 'console');
}

async function listFiles(root: string, dir = ''): Promise<string[]> {
  const entries = await fs.readdir(path.join(root, dir), { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...(await listFiles(root, rel)));
    else if (entry.isFile()) files.push(rel);
  }
  return files;
}

function representation(body: Buffer, hash: string, encoding: Encoding | undefined): Representation {
  return { body, encoding, etag: `"${hash}${encoding ? `-${encoding}` : ''}"` };
}

/** Reads every built file under `dir`, keyed by its path relative to it (`index.html`,
 * `assets/index-3f2a1c.js`). Throws ENOENT when the console was not built. */
export async function loadAssets(dir: string): Promise<Map<string, Asset>> {
  const files = await listFiles(dir);
  const present = new Set(files);
  const assets = new Map<string, Asset>();
  for (const file of files) {
    if (file.endsWith('.gz') || file.endsWith('.br') || file.startsWith('.')) continue;
    const identity = await fs.readFile(path.join(dir, file));
    const hash = createHash('sha256').update(identity).digest('base64url').slice(0, 22);
    const variant = async (suffix: string, encoding: Encoding) =>
      present.has(file + suffix) ? representation(await fs.readFile(path.join(dir, file + suffix)), hash, encoding) : undefined;
    assets.set(file, {
      contentType: CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
      identity: representation(identity, hash, undefined),
      gzip: await variant('.gz', 'gzip'),
      br: await variant('.br', 'br'),
    });
  }
  return assets;
}

/** The representation to send: brotli, then gzip, where the client accepts it and the build
 * wrote it; otherwise the bytes as built. */
export function chooseRepresentation(asset: Asset, acceptEncoding: string | undefined): Representation {
  if (!acceptEncoding) return asset.identity;
  const q = acceptedQualities(acceptEncoding);
  const accepts = (name: string) => (q.get(name) ?? q.get('*') ?? 0) > 0;
  if (asset.br && accepts('br')) return asset.br;
  if (asset.gzip && accepts('gzip')) return asset.gzip;
  return asset.identity;
}

/** If-None-Match (weak comparison, RFC 9110 13.1.2): does the client hold this representation? */
export function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}
