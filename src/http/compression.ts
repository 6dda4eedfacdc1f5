// Response compression, independent of the socket: the router hands every encoded answer here
// before the server writes it. An answer is compressed when its content type is text-like, it is
// at least `minBytes` long, it carries no Content-Encoding or ETag of its own (the console's
// assets are compressed at build time and have one ETag per representation), and the client's
// Accept-Encoding (q-values, RFC 9110 12.5.3) accepts one of the configured codings.
//
// Codings: zstd level 3 (where node:zlib has it: Node ≥ 22.15 / 23.8), brotli quality 3 and gzip
// level 4: on a register-year (5.2 MB of JSON) each takes 20–40 ms for 5.5–6.3 % of the size,
// while brotli 4 and gzip 6 cost 3 times as much for 1–2 % fewer bytes (docs/compression.md,
// `npm run bench:compression`). Among codings the client weighs equally, the
// configured order wins (COMPRESSION_ENCODINGS, default zstd, br, gzip).
//
// Streamed: an answer made of pieces (GET /api/readings writes one buffer per register) is fed to
// the compressor piece by piece, and each piece is dropped once written, so the uncompressed
// answer is never concatenated and is never held beside a compressed copy of itself. The work
// runs on libuv's thread pool, not on the event loop.
import { once } from 'node:events';
import zlib from 'node:zlib';
import type { Transform } from 'node:stream';

export type Encoding = 'zstd' | 'br' | 'gzip';

export const ALL_ENCODINGS: readonly Encoding[] = ['zstd', 'br', 'gzip'];

type ZstdZlib = typeof zlib & { createZstdCompress?: (options?: { params?: Record<number, number> }) => Transform; constants: { ZSTD_c_compressionLevel?: number } };
const zstdZlib = zlib as ZstdZlib;

/** Whether this Node has a zstd compressor (node:zlib, Node ≥ 22.15 / 23.8). */
export const ZSTD_AVAILABLE = typeof zstdZlib.createZstdCompress === 'function';

export const BROTLI_QUALITY = 3;
export const GZIP_LEVEL = 4;
export const ZSTD_LEVEL = 3;

export interface CompressionOptions {
  /** Codings offered, in the server's order of preference; empty = never compress. */
  encodings: readonly Encoding[];
  /** Smaller answers are sent as they are (compressing them saves less than it costs). */
  minBytes: number;
}

/** Quality values of the codings named in an Accept-Encoding header (lower-cased names). */
export function acceptedQualities(header: string): Map<string, number> {
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [token, ...params] = part.split(';');
    const name = token!.trim().toLowerCase();
    if (!name) continue;
    let weight = 1;
    for (const param of params) {
      const eq = param.indexOf('=');
      if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'q') continue;
      const value = param.slice(eq + 1).trim();
      weight = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number(value) : 0;
    }
    q.set(name, weight);
  }
  return q;
}

/** The coding to answer with: the highest q the client gives among `offered`, the earlier one in
 * `offered` on a tie; undefined = identity (nothing acceptable, or no header). `*` stands for
 * every coding the client does not name. */
export function chooseEncoding(acceptEncoding: string | undefined, offered: readonly Encoding[]): Encoding | undefined {
  if (!acceptEncoding || offered.length === 0) return undefined;
  const q = acceptedQualities(acceptEncoding);
  const any = q.get('*');
  let best: Encoding | undefined;
  let bestQ = 0;
  for (const encoding of offered) {
    const weight = q.get(encoding) ?? any ?? 0;
    if (weight > bestQ) {
      best = encoding;
      bestQ = weight;
    }
  }
  return best;
}

const COMPRESSIBLE = /^(text\/|application\/([a-z0-9.+-]*\+)?(json|xml|javascript|csv|x-ndjson)\b|application\/openmetrics-text|image\/svg\+xml)/i;

export function isCompressible(contentType: string | undefined): boolean {
  return contentType !== undefined && COMPRESSIBLE.test(contentType);
}

function createCompressor(encoding: Encoding, sizeHint: number): Transform {
  switch (encoding) {
    case 'gzip':
      return zlib.createGzip({ level: GZIP_LEVEL });
    case 'br':
      return zlib.createBrotliCompress({
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: sizeHint,
        },
      });
    case 'zstd':
      return zstdZlib.createZstdCompress!({ params: { [zstdZlib.constants.ZSTD_c_compressionLevel!]: ZSTD_LEVEL } });
  }
}

/** Compresses the pieces in order into one buffer. Takes the array over: each piece is removed
 * from it once the compressor has it, so it can be collected while the rest is compressed. */
export async function compressPieces(pieces: (Buffer | string)[], encoding: Encoding): Promise<Buffer> {
  let size = 0;
  for (const piece of pieces) size += piece.length;
  const stream = createCompressor(encoding, size);
  const out: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = once(stream, 'end');
  while (pieces.length > 0) {
    const piece = pieces.shift()!;
    if (!stream.write(piece)) await once(stream, 'drain');
  }
  stream.end();
  await ended;
  return out.length === 1 ? out[0]! : Buffer.concat(out);
}

/** What the router asks: should this answer be compressed, and with what. */
export class Compression {
  constructor(readonly options: CompressionOptions) {}

  get enabled(): boolean {
    return this.options.encodings.length > 0;
  }

  /** The coding for an answer of this type and size (undefined = send as is), and whether the
   * answer depends on Accept-Encoding at all (then it carries Vary: Accept-Encoding). */
  decide(headers: Readonly<Record<string, string>>, size: number, acceptEncoding: string | undefined): { encoding: Encoding | undefined; varies: boolean } {
    if (!this.enabled || !isCompressible(headers['Content-Type']) || headers['Content-Encoding'] !== undefined || headers['ETag'] !== undefined) {
      return { encoding: undefined, varies: false };
    }
    if (size < this.options.minBytes) return { encoding: undefined, varies: false };
    return { encoding: chooseEncoding(acceptEncoding, this.options.encodings), varies: true };
  }
}

/** Adds `Accept-Encoding` to a Vary header value (keeps what the route set). */
export function varyOnAcceptEncoding(vary: string | undefined): string {
  if (!vary) return 'Accept-Encoding';
  if (vary.split(',').some((v) => ['accept-encoding', '*'].includes(v.trim().toLowerCase()))) return vary;
  return `${vary}, Accept-Encoding`;
}
