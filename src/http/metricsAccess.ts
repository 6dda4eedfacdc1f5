// Who may read GET /metrics on the API listener, and the optional listener of its own.
//
// Metrics are not public: they show which routes are used and how they fail (401 and 429 counts
// on the token endpoints tell an attacker how a credential-stuffing run is going), the database
// pool's saturation and the VTN's delivery backlog. On the API listener, GET /metrics needs
// `Authorization: Bearer <METRICS_TOKEN>` (what Prometheus sends with `authorization:
// {credentials: …}`) or a global administrator's token. METRICS_PORT adds a plain listener on
// METRICS_HOST (loopback by default) that serves only GET /metrics, without a token, for a
// scraper on the same host or a monitoring network the operator alone reaches. docs/security.md,
// "Metrics".
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { HttpError } from './errors.ts';
import type { HttpMetrics } from './metrics.ts';
import type { Principal } from './types.ts';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** The check of GET /metrics on the API listener: throws 401 or 403 unless the bearer is
 * METRICS_TOKEN (compared in constant time) or authenticates a global administrator. */
export function metricsAccess(metricsToken: string | undefined, authenticate: (authorization: string) => Promise<Principal>): (authorization: string | undefined) => Promise<void> {
  const expected = metricsToken === undefined ? undefined : digest(metricsToken);
  return async (authorization) => {
    if (!authorization) throw new HttpError('unauthorized', 'GET /metrics needs a bearer token: METRICS_TOKEN, or a global administrator’s token', { headers: { 'WWW-Authenticate': 'Bearer' } });
    const bearer = /^Bearer +(\S+)$/i.exec(authorization)?.[1];
    if (expected && bearer !== undefined && timingSafeEqual(digest(bearer), expected)) return;
    const principal = await authenticate(authorization);
    if (!principal.globalAdmin) throw new HttpError('forbidden', 'GET /metrics is for METRICS_TOKEN and global administrators');
  };
}

/** The METRICS_PORT listener: GET (and HEAD) /metrics, nothing else (404), no token. */
export class MetricsListener {
  private readonly server: Server;
  port = 0;

  constructor(
    private readonly metrics: HttpMetrics,
    private readonly host: string,
    private readonly requestedPort: number,
  ) {
    this.server = createServer({ requireHostHeader: true }, (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Only GET /metrics is served here.\n');
        return;
      }
      this.metrics.render().then(
        ({ contentType, body }) => res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body),
        () => res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Metrics could not be rendered.\n'),
      );
    });
    // Never a request body here: the connection closes instead of reading one.
    this.server.on('checkContinue', (_req, res) => res.writeHead(404).end());
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: this.host, port: this.requestedPort, exclusive: true }, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        this.port = typeof address === 'object' && address ? address.port : this.requestedPort;
        resolve(this.port);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
