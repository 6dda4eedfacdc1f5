// The one wiring file: builds the database (embedded or configured), runs migrations, creates
// the stores, the authenticator and every domain's routes, and starts the HTTP server. Each
// dependency is passed down as a plain argument; nothing is a module-level singleton, so tests
// can run several apps in one process.
import type { Logger } from 'pino';
import { identityAdminRoutes } from './admin/identityRoutes.ts';
import { credentialEventRoutes } from './admin/credentialEventRoutes.ts';
import { Authenticator } from './auth/authenticator.ts';
import { ensureBootstrapAdmin, type AdminTokenInfo } from './auth/bootstrap.ts';
import { clientAccessMany } from './auth/clientStore.ts';
import { meRoutes } from './auth/meRoutes.ts';
import { organizationClientRoutes } from './auth/organizationClientRoutes.ts';
import { tokenRoutes } from './auth/tokenRoutes.ts';
import { TokenSigner, loadSigningKey } from './auth/tokens.ts';
import { vtnCredentialRoutes } from './auth/vtnCredentialRoutes.ts';
import type { Config } from './config.ts';
import { HttpError } from './http/errors.ts';
import { Compression } from './http/compression.ts';
import { Cors } from './http/cors.ts';
import { HttpMetrics } from './http/metrics.ts';
import { DomainMetrics } from './domainMetrics.ts';
import { notificationsByState, oldestPendingNotificationSeconds } from './vtn/notificationAdminRoutes.ts';
import { buildOpenApi } from './http/openapi.ts';
import { opsRoutes } from './http/opsRoutes.ts';
import { MetricsListener, metricsAccess } from './http/metricsAccess.ts';
import { MemoryRateLimitStore, type RateLimitStore } from './http/rateLimit.ts';
import { Router } from './http/router.ts';
import { createHttpServer, type HttpServerKind } from './http/server.ts';
import type { RouteDef } from './http/types.ts';
import { PeriodicJob } from './jobs/periodicJob.ts';
import { createLogger } from './log.ts';
import { classifyPgError, createPool, type Pool } from './store/database.ts';
import { startEmbeddedPostgres, type RunningPostgres } from './store/embeddedPostgres.ts';
import { migrate } from './store/migrate.ts';
import { MIGRATIONS } from './store/migrationSources.ts';
import { PgRateLimitStore } from './store/pgRateLimitStore.ts';
import { createTimeSeriesStore, timeSeriesConfig } from './store/timeseries/index.ts';
import type { TimeSeriesStore } from './store/timeseries/types.ts';
import { resourceRoutes } from './grid/resourceRoutes.ts';
import { zoneRoutes } from './grid/zoneRoutes.ts';
import { productAdminRoutes } from './products/orderAdminRoutes.ts';
import { clearDueOrders } from './products/clearing.ts';
import { productRoutes } from './products/productRoutes.ts';
import { settlementRoutes } from './products/settlementRoutes.ts';
import type { ValidationDeps } from './products/validationData.ts';
import { validateDueTransactions, validationBacklog } from './products/validationJob.ts';
import { validationAdminRoutes } from './products/validationRoutes.ts';
import { meterRoutes } from './meter/meterRoutes.ts';
import { readingsRoutes } from './meter/readingsRoutes.ts';
import { VirtualRegisters } from './meter/virtualRegisters.ts';
import { WorkerPool } from './workerPool.ts';
import { TimeSeriesUnavailable } from './store/timeseries/types.ts';
import { createVtn } from './vtn/vtn.ts';
import { openAdr31TokenRoute } from './vtn/v31/v31Routes.ts';
import { consoleRoutes } from './console/consoleRoutes.ts';
import { openApiInfo } from './openApiInfo.ts';
import { flexibilityLoop } from './flexibilityLoop.ts';

export interface AppOptions {
  log?: Logger;
  /** Extra embedded PostgreSQL settings (tests turn fsync off). */
  embeddedPostgresSettings?: Record<string, string>;
}

export interface App {
  port: number;
  /** Port of the embedded MQTT broker (0: none). */
  mqttPort: number;
  /** TLS port of the embedded MQTT broker (0: none). */
  mqttTlsPort: number;
  baseUrl: string;
  pool: Pool;
  log: Logger;
  adminToken: AdminTokenInfo;
  router: Router;
  timeSeries: TimeSeriesStore;
  workers: WorkerPool;
  /** Which HTTP front serves (uws or node). */
  httpServer: HttpServerKind;
  /** Runs a dispatch step of the flexibility loop now (for writes that bypass the API). */
  kickDispatch(): void;
  /** Port of the METRICS_PORT listener (0: none). */
  metricsPort: number;
  /** Body bytes held now by routes other than reading batches (within BODY_BUDGET_BYTES). */
  bodyBytesHeld(): number;
  /** Graceful stop: no new connections, in-flight requests finish, then pools and PostgreSQL close. */
  close(): Promise<void>;
}

function translateError(err: unknown): HttpError | undefined {
  if (err instanceof TimeSeriesUnavailable) return new HttpError('service_unavailable', 'The time-series store is unreachable; try again (a batch that was accepted is completed once it is back).');
  const store = classifyPgError(err);
  if (!store) return undefined;
  switch (store.kind) {
    case 'conflict':
    case 'in_use':
      return new HttpError('conflict', store.detail);
    case 'invalid_reference':
    case 'invalid_input':
      return new HttpError('validation_failed', store.detail);
    case 'unavailable':
      return new HttpError('service_unavailable', store.detail);
  }
}

export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const log = options.log ?? createLogger(config.logLevel);
  let embedded: RunningPostgres | undefined;
  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort, log, settings: options.embeddedPostgresSettings });
      cleanups.push(() => embedded!.stop());
      databaseUrl = embedded.connectionString;
    }
    const pool = createPool(databaseUrl, config.dbPoolMax, log);
    cleanups.unshift(() => pool.end());
    await migrate(pool, MIGRATIONS, log);

    const { key, keyId } = await loadSigningKey(pool, config.jwtSecret);
    const signer = new TokenSigner(key, keyId, config.tokenIssuer, config.tokenTtlSeconds);
    const adminToken = await ensureBootstrapAdmin(pool, config.adminToken, config.dataDir, log);
    const rateLimits: RateLimitStore = config.rateLimitStore === 'postgres' ? new PgRateLimitStore(pool) : new MemoryRateLimitStore();
    cleanups.unshift(() => rateLimits.close());
    const authenticator = new Authenticator(pool, signer, config.tokenAudiences, config.authCacheMs);
    const workers = new WorkerPool(config.workerThreads);
    cleanups.unshift(() => workers.close());
    const timeSeries = await createTimeSeriesStore(timeSeriesConfig(config), { pool, workers, log });
    cleanups.unshift(() => timeSeries.close());
    const virtual = new VirtualRegisters(pool, timeSeries, workers);
    const validation: ValidationDeps = { pool, store: timeSeries, virtual, log };

    const metrics = new HttpMetrics();
    metrics.gauge('db_pool_connections', 'Open database connections of this instance', () => pool.totalCount);
    metrics.gauge('db_pool_idle', 'Idle database connections', () => pool.idleCount);
    metrics.gauge('db_pool_waiting', 'Queries waiting for a database connection', () => pool.waitingCount);
    const domainMetrics = new DomainMetrics(metrics.registry, timeSeries.backend);
    domainMetrics.watch(
      {
        notificationsByState: () => notificationsByState(pool),
        oldestPendingNotificationSeconds: () => oldestPendingNotificationSeconds(pool),
        validationBacklog: () => validationBacklog(pool, { delayMs: config.validationDelayMs, windowMs: config.validationWindowMs }),
      },
      log,
    );

    // The VTN's webhook dispatcher and read cache: started once the server listens, stopped
    // before the pool closes.
    const vtn = createVtn(pool, log, config, {
      authenticate: authenticator.authenticate,
      recheck: (tokens) => authenticator.recheck(tokens),
      credentials: (ids) => clientAccessMany(pool, ids),
      rateLimits,
    });
    cleanups.unshift(() => vtn.stop());

    // The flexibility loop (docs/flexibility-loop.md): bindings, dispatch, VEN usage.
    const loop = flexibilityLoop({
      pool,
      store: timeSeries,
      vtn: vtn.flexibility,
      log,
      dispatchIntervalMs: config.dispatchIntervalMs,
      usageReportsIntervalMs: config.usageReportsIntervalMs,
      metrics: domainMetrics,
    });
    cleanups.unshift(() => loop.stop());

    const tokens = tokenRoutes(pool, signer, {
      audiences: config.tokenAudiences,
      perClientPerMinute: config.rateLimitTokenPerMinute,
      unknownClientPerMinute: config.rateLimitTokenUnknownPerMinute,
      rateLimits,
    });
    let openApiJson: string | undefined;
    const routes: RouteDef[] = [];
    routes.push(
      ...opsRoutes({
        checkDatabase: async () => void (await pool.query('SELECT 1')),
        metrics,
        openApiJson: () => (openApiJson ??= JSON.stringify(openApi())),
        authorizeMetrics: metricsAccess(config.metricsToken, authenticator.authenticate),
      }),
      ...tokens,
      openAdr31TokenRoute(tokens[0]!, config.vtn31BasePath, config.tokenAudiences[0]!),
      ...meRoutes(),
      ...organizationClientRoutes(pool),
      ...vtnCredentialRoutes(pool),
      ...identityAdminRoutes(pool),
      ...credentialEventRoutes(pool),
      ...meterRoutes(pool, timeSeries),
      ...resourceRoutes(pool, timeSeries),
      ...zoneRoutes(pool),
      ...productRoutes(pool),
      ...productAdminRoutes(pool),
      ...settlementRoutes(pool, config.validationRetryMs),
      ...validationAdminRoutes(validation, config.validationRetryMs),
      ...readingsRoutes({
        db: pool,
        store: timeSeries,
        virtual,
        maxPoints: config.readingsMaxPoints,
        versionsRetention: config.readingVersionsRetention,
        metrics: domainMetrics,
        rateLimit: [
          { seconds: 1, max: config.rateLimitReadingsPerSecond },
          { seconds: 60, max: config.rateLimitReadingsPerMinute },
        ],
      }),
      ...vtn.routes,
      ...loop.routes,
      ...consoleRoutes(),
    );
    routes.splice(0, routes.length, ...loop.wake(routes));
    const openApi = () => buildOpenApi(routes, openApiInfo(config.tokenAudiences[0]!, config.vtn31BasePath));
    // Routes without a quota of their own get the general one, when configured.
    if (config.rateLimitApiPerMinute > 0) {
      for (const route of routes) {
        if (route.auth !== 'public' && !route.rateLimit) route.rateLimit = { name: 'api', windows: [{ seconds: 60, max: config.rateLimitApiPerMinute }] };
      }
    }
    const router = new Router(routes, {
      authenticate: authenticator.authenticate,
      rateLimits,
      log,
      translateError,
      compression: new Compression({ encodings: config.compressionEncodings, minBytes: config.compressionMinBytes }),
      cors: new Cors(config.corsOrigins),
      largeBodyLimit: config.bodyLimitBytes,
    });
    const { server, reason } = createHttpServer(
      router,
      { host: config.host, port: config.port, bodyLimit: config.bodyLimitBytes, bodyBudget: config.bodyBudgetBytes, trustProxy: config.trustProxy, log, metrics },
      config.httpServer,
    );
    metrics.gauge('http_body_bytes_held', 'Request body bytes held now by routes other than reading batches (at most BODY_BUDGET_BYTES)', () => server.bodyBytesHeld);
    const port = await server.listen();
    log.info({ httpServer: server.kind, runs: server.description, reason }, `HTTP server: ${server.description}`);
    let metricsPort = 0;
    if (config.metricsPort !== undefined) {
      const listener = new MetricsListener(metrics, config.metricsHost, config.metricsPort);
      metricsPort = await listener.listen();
      cleanups.unshift(() => listener.close());
      log.info({ metricsHost: config.metricsHost, metricsPort }, 'GET /metrics also served without a token on METRICS_PORT');
    }
    const clearing = new PeriodicJob('clearing', () => clearDueOrders(pool), config.clearingIntervalMs, log, domainMetrics);
    clearing.start();
    cleanups.unshift(() => clearing.stop());
    await vtn.start();
    loop.start();
    const timing = { delayMs: config.validationDelayMs, retryMs: config.validationRetryMs, windowMs: config.validationWindowMs, batchSize: 200 };
    const validationState = { lastCorrectionScan: 0 };
    const validating = new PeriodicJob('delivery-validation', () => validateDueTransactions(validation, timing, validationState), config.validationIntervalMs, log, domainMetrics);
    validating.start();
    cleanups.unshift(() => validating.stop());
    for (const work of timeSeries.periodicWork ?? []) {
      const job = new PeriodicJob(work.name, () => work.step(), work.intervalMs, log, domainMetrics);
      job.start();
      cleanups.unshift(() => job.stop());
    }
    const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;

    let closing: Promise<void> | undefined;
    return {
      port,
      mqttPort: vtn.mqttPort,
      mqttTlsPort: vtn.mqttTlsPort,
      baseUrl: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
      pool,
      log,
      adminToken,
      router,
      timeSeries,
      workers,
      httpServer: server.kind,
      kickDispatch: loop.kickDispatch,
      metricsPort,
      bodyBytesHeld: () => server.bodyBytesHeld,
      close: () =>
        (closing ??= (async () => {
          const drained = await server.close(config.shutdownTimeoutMs);
          if (!drained) log.warn({ active: server.activeRequests }, 'shutdown timeout reached with requests still in flight');
          for (const cleanup of cleanups) await cleanup();
        })()),
    };
  } catch (err) {
    for (const cleanup of cleanups) await Promise.resolve(cleanup()).catch(() => undefined);
    throw err;
  }
}
