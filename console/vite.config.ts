// Builds the analyst console (/console) and the API reference page (/docs) into dist/console,
// beside the server build. Asset names carry a content hash (served immutable); every text
// asset is also written gzip- and brotli-compressed, so the server picks a variant from
// Accept-Encoding without compressing per request.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));
export const OUT_DIR = path.resolve(here, '../dist/console');
const COMPRESSIBLE = /\.(html|js|mjs|css|json|map|svg|txt)$/;

/** Writes `<file>.gz` and `<file>.br` beside every compressible output file larger than 1 KiB
 * (below that the headers cost more than the bytes saved). Maximum levels: this runs once per build. */
function precompress(): Plugin {
  return {
    name: 'flex-precompress',
    apply: 'build',
    closeBundle() {
      const walk = (dir: string): string[] =>
        readdirSync(dir).flatMap((name) => {
          const file = path.join(dir, name);
          return statSync(file).isDirectory() ? walk(file) : [file];
        });
      for (const file of walk(OUT_DIR)) {
        if (!COMPRESSIBLE.test(file)) continue;
        const bytes = readFileSync(file);
        if (bytes.length < 1024) continue;
        writeFileSync(`${file}.gz`, gzipSync(bytes, { level: 9 }));
        writeFileSync(`${file}.br`, brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }));
      }
    },
  };
}

export default defineConfig({
  root: here,
  base: '/console/',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: OUT_DIR,
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    // Swagger UI's bundle (the /docs page only) is ~1.4 MB; the console's own JS is measured by
    // `npm run bench:console` against its 300 KB gzipped budget.
    chunkSizeWarningLimit: 2000,
    sourcemap: false,
    // Every browser the console supports has module preload; no polyfill file.
    modulePreload: { polyfill: false },
    rollupOptions: {
      input: { index: path.join(here, 'index.html'), docs: path.join(here, 'docs.html') },
    },
  },
  plugins: [precompress()],
});
