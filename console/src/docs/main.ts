// /docs: Swagger UI (swagger-ui-dist, bundled; nothing from a CDN) rendering this server's
// /api/openapi.json. "Authorize" → oauth2 (clientCredentials) exchanges a client id and secret at
// the document's tokenUrl; the token endpoint also needs the `audience` form parameter, which
// Swagger UI does not send, so a request interceptor adds the audience the document names
// (x-flex-audience on the oauth2 scheme).
import SwaggerUIBundle from 'swagger-ui-dist/swagger-ui-es-bundle.js';
import 'swagger-ui-dist/swagger-ui.css';
import './docs.css';

interface SwaggerRequest {
  url: string;
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

async function start(): Promise<void> {
  const res = await fetch('/api/openapi.json', { headers: { accept: 'application/json' } });
  const spec = (await res.json()) as { components?: { securitySchemes?: Record<string, { 'x-flex-audience'?: string; flows?: { clientCredentials?: { tokenUrl?: string } } }> } };
  const oauth = spec.components?.securitySchemes?.oauth2;
  const audience = oauth?.['x-flex-audience'] ?? 'flex-api';
  const tokenPath = new URL(oauth?.flows?.clientCredentials?.tokenUrl ?? '/oauth/token', location.origin).pathname;
  const ui = SwaggerUIBundle({
    spec,
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: false,
    tryItOutEnabled: false,
    displayRequestDuration: true,
    docExpansion: 'none',
    filter: true,
    requestInterceptor: (req: SwaggerRequest) => {
      if (typeof req.body === 'string' && req.method?.toUpperCase() === 'POST' && new URL(req.url, location.origin).pathname === tokenPath && !/(^|&)audience=/.test(req.body)) {
        req.body = `${req.body}&audience=${encodeURIComponent(audience)}`;
      }
      return req;
    },
  });
  (window as unknown as { ui: unknown }).ui = ui;
}

void start();
