// Operational endpoints: liveness with a database round trip, Prometheus metrics, and the
// OpenAPI document. /health and the document are public (they carry no organization data);
// /metrics asks METRICS_TOKEN or a global administrator's token (metricsAccess.ts).
import type { HttpMetrics } from './metrics.ts';
import type { RouteDef } from './types.ts';

export interface OpsDeps {
  /** Resolves when the database answers; rejects otherwise. */
  checkDatabase: () => Promise<void>;
  metrics: HttpMetrics;
  /** The OpenAPI document, serialized once. */
  openApiJson: () => string;
  /** Refuses (401/403) a GET /metrics without METRICS_TOKEN or a global administrator's token. */
  authorizeMetrics: (authorization: string | undefined) => Promise<void>;
}

const healthSchema = {
  title: 'Health',
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'unavailable'] },
    database: { type: 'string', enum: ['ok', 'unreachable'] },
    uptimeSeconds: { type: 'number' },
  },
  required: ['status', 'database', 'uptimeSeconds'],
};

const HEALTH_DB_TIMEOUT_MS = 2000;

export function opsRoutes(deps: OpsDeps): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/health',
      summary: 'Liveness and database reachability',
      tags: ['Operations'],
      auth: 'public',
      responses: {
        200: { description: 'Process up and database reachable', schema: healthSchema },
        503: { description: 'Database unreachable', schema: healthSchema },
      },
      async handler() {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), HEALTH_DB_TIMEOUT_MS);
        });
        const ok = await Promise.race([deps.checkDatabase(), timeout]).then(
          () => true,
          () => false,
        );
        clearTimeout(timer);
        return {
          status: ok ? 200 : 503,
          body: { status: ok ? 'ok' : 'unavailable', database: ok ? 'ok' : 'unreachable', uptimeSeconds: process.uptime() },
        };
      },
    },
    {
      method: 'GET',
      path: '/metrics',
      summary: 'Prometheus metrics',
      description:
        'Requests by route and status, latency histogram, database pool and process statistics, in the Prometheus text format. ' +
        'Needs `Authorization: Bearer <METRICS_TOKEN>` or a global administrator’s token; METRICS_PORT serves it on a listener of its own without one (docs/security.md, "Metrics").',
      tags: ['Operations'],
      auth: 'public',
      ownBearer: true,
      screen: (head) => deps.authorizeMetrics(head.headers['authorization']),
      responses: { 200: { description: 'Prometheus text exposition format', contentType: 'text/plain' } },
      async handler() {
        const { contentType, body } = await deps.metrics.render();
        return { status: 200, raw: body, contentType, headers: { 'Cache-Control': 'no-store' } };
      },
    },
    {
      method: 'GET',
      path: '/api/openapi.json',
      summary: 'This OpenAPI 3.1 document',
      tags: ['Operations'],
      auth: 'public',
      responses: { 200: { description: 'OpenAPI 3.1 document generated from the route table', contentType: 'application/json' } },
      handler() {
        return { status: 200, raw: deps.openApiJson(), contentType: 'application/json' };
      },
    },
  ];
}
