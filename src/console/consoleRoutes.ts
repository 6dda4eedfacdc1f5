// The analyst console (/console) and the API reference page (/docs): the files `vite build`
// wrote to dist/console, served through the route table (raw replies), so every HTTP server
// adapter serves them the same way. Hashed assets are immutable for a year; the two HTML pages
// are revalidated on every load (ETag → 304). Compression is done at build time (gzip and
// brotli files beside each asset), chosen here from Accept-Encoding: no CPU spent per request.
import { HttpError, PROBLEM_CONTENT_TYPE, problemSchema } from '../http/errors.ts';
import { objectSchema } from '../http/schemas.ts';
import type { ApiReply, ApiRequest, RouteDef } from '../http/types.ts';
import { chooseRepresentation, defaultConsoleDir, loadAssets, notModified, type Asset } from './assetStore.ts';

export interface ConsoleOptions {
  /** Where the built console lives (default: dist/console under the project root). */
  dir?: string;
}

const TAGS = ['Console'];
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

/** Same-origin only: the console and the docs load nothing from elsewhere (no CDN, no fonts), and
 * call only this server's API. Inline styles: uPlot and Swagger UI set style attributes. */
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

const LANDING_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Flex</title><link rel="icon" href="data:,"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1>Flex</h1>
<p>An energy-flexibility platform: meter data, flexibility products, an OpenADR-style VTN.</p>
<ul>
<li><a href="/console">Analyst console</a>: readings, coverage, demand response, market</li>
<li><a href="/docs">API reference</a> (try it with a client id and secret)</li>
<li><a href="/api/openapi.json">OpenAPI document</a> · <a href="/health">health</a></li>
<li>Prometheus metrics: <code>GET /metrics</code> with <code>Authorization: Bearer $METRICS_TOKEN</code>, or on <code>METRICS_PORT</code> without a token</li>
</ul>
</body></html>
`;

const assetParams = objectSchema({ file: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$', description: 'A file name from the built console (content-hashed).' } }, ['file']);

export function consoleRoutes(options: ConsoleOptions = {}): RouteDef[] {
  const dir = options.dir ?? defaultConsoleDir();
  let loading: Promise<Map<string, Asset>> | undefined;
  const assets = () => {
    loading ??= loadAssets(dir).catch((err: NodeJS.ErrnoException) => {
      loading = undefined; // a build made after the start is picked up by the next request
      if (err.code === 'ENOENT') throw new HttpError('service_unavailable', 'The console is not built: run `npm run build` (npm start does it)');
      throw err;
    });
    return loading;
  };

  const serve = async (req: ApiRequest, key: string, cacheControl: string, extraHeaders: Record<string, string> = {}): Promise<ApiReply> => {
    const asset = (await assets()).get(key);
    if (!asset) throw new HttpError('not_found', `No console file ${key}`);
    const chosen = chooseRepresentation(asset, req.headers['accept-encoding']);
    const headers: Record<string, string> = { 'Cache-Control': cacheControl, ETag: chosen.etag, Vary: 'Accept-Encoding', ...extraHeaders };
    if (notModified(req.headers['if-none-match'], chosen.etag)) return { status: 304, headers };
    if (chosen.encoding) headers['Content-Encoding'] = chosen.encoding;
    return { status: 200, raw: chosen.body, contentType: asset.contentType, headers };
  };

  const page = (path: string, file: string, summary: string, description: string): RouteDef => ({
    method: 'GET',
    path,
    summary,
    description,
    tags: TAGS,
    auth: 'public',
    responses: {
      200: { description: 'The page (gzip or brotli by Accept-Encoding; ETag; Cache-Control: no-cache)', contentType: 'text/html' },
      304: { description: 'Not modified (If-None-Match matched the ETag)' },
      503: { description: 'The console was not built (run npm run build)', schema: problemSchema, contentType: PROBLEM_CONTENT_TYPE },
    },
    handler: (req) => serve(req, file, REVALIDATE, PAGE_HEADERS),
  });

  return [
    {
      method: 'GET',
      path: '/',
      summary: 'Where to go from here',
      description: 'A browser opening the server’s address gets links to the console, this reference and the OpenAPI document; the API lives under /api.',
      tags: TAGS,
      auth: 'public',
      responses: { 200: { description: 'A page of links', contentType: 'text/html' } },
      handler: () => ({ status: 200, raw: LANDING_PAGE, contentType: 'text/html; charset=utf-8', headers: { 'Cache-Control': REVALIDATE, ...PAGE_HEADERS } }),
    },
    page('/console', 'index.html', 'The analyst console', 'A single-page application over this API: readings, coverage, demand response and the market. It signs in with a personal access token or client credentials and shows exactly what the token may see.'),
    page('/docs', 'docs.html', 'This API reference', 'Renders /api/openapi.json (Swagger UI, bundled); "Try it out" can obtain a token by client credentials.'),
    {
      method: 'GET',
      path: '/console/assets/:file',
      summary: 'A file of the console or the reference page (scripts, styles)',
      description: 'Content-hashed names: cached for a year (immutable). gzip or brotli by Accept-Encoding.',
      tags: TAGS,
      auth: 'public',
      params: assetParams,
      responses: {
        200: { description: 'The file', contentType: 'application/octet-stream' },
        304: { description: 'Not modified (If-None-Match matched the ETag)' },
        503: { description: 'The console was not built (run npm run build)', schema: problemSchema, contentType: PROBLEM_CONTENT_TYPE },
      },
      handler: (req: ApiRequest<{ file: string }>) => serve(req, `assets/${req.params.file}`, IMMUTABLE),
    },
  ];
}
