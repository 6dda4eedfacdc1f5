// The VTN as the app wires it: its routes (the 30 endpoints and the admin notification API),
// and its two background parts, started once the server listens and stopped before the
// database pool closes: the webhook dispatcher and the read cache's change feed.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { RouteDef } from '../http/types.ts';
import type { Pool } from '../store/database.ts';
import { NotificationDispatcher } from './dispatcher.ts';
import { notificationAdminRoutes } from './notificationAdminRoutes.ts';
import { ReadCache } from './readCache.ts';
import { vtnRoutes } from './routes.ts';

export interface Vtn {
  routes: RouteDef[];
  /** Starts the dispatcher (unless VTN_DISPATCHER=false) and the cache's change feed. Until the
   * feed is up, reads go to the database. */
  start(): void;
  stop(): Promise<void>;
}

export function createVtn(pool: Pool, log: Logger, config: Config): Vtn {
  const dispatcher = new NotificationDispatcher(pool, log, {
    concurrency: config.vtnWebhookConcurrency,
    timeoutMs: config.vtnWebhookTimeoutMs,
    maxAttempts: config.vtnWebhookMaxAttempts,
    backoff: { baseMs: config.vtnWebhookBackoffBaseMs, capMs: config.vtnWebhookBackoffCapMs },
    pollMs: config.vtnDispatchPollMs,
    allowInternal: config.vtnWebhookAllowPrivate,
  });
  const cache = new ReadCache(pool, log, { ttlMs: config.vtnReadCacheMs });
  return {
    routes: [
      ...vtnRoutes({ pool, notificationsWritten: dispatcher.kick, allowPrivateCallbacks: config.vtnWebhookAllowPrivate, cache }),
      ...notificationAdminRoutes(pool, dispatcher.kick),
    ],
    start() {
      void cache.start();
      if (config.vtnDispatcherEnabled) dispatcher.start();
    },
    async stop() {
      await cache.stop();
      await dispatcher.stop();
    },
  };
}
