// The VTN as the app wires it: its routes (the 30 endpoints, the OpenADR 3.1.0 surface over the
// same objects and the admin notification API), and its background parts, started once the
// server listens and stopped before the database pool closes: the webhook dispatcher, the read
// cache's change feed, and the MQTT broker (embedded, or a connection to MQTT_URL) with the
// publisher of the MQTT outbox.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { RouteDef } from '../http/types.ts';
import type { Pool, PoolClient } from '../store/database.ts';
import type { VtnDeps } from './context.ts';
import { NotificationDispatcher } from './dispatcher.ts';
import fs from 'node:fs';
import type { RateLimitStore } from '../http/rateLimit.ts';
import { EmbeddedBroker, type BrokerAuth } from './mqttBroker.ts';
import { externalSink, MqttPublisher, type MqttSink } from './mqttPublisher.ts';
import { notificationAdminRoutes } from './notificationAdminRoutes.ts';
import { ReadCache } from './readCache.ts';
import { eventRoutes } from './eventRoutes.ts';
import { findVenResource, writeDispatchEvents, type DispatchItem } from './flexibilityEvents.ts';
import { programRoutes } from './programRoutes.ts';
import { reportRoutes } from './reportRoutes.ts';
import { subscriptionRoutes } from './subscriptionRoutes.ts';
import { venRoutes } from './venRoutes.ts';
import { TAG_PREFIX_31, v31Routes, type MqttInfo } from './v31/v31Routes.ts';
import { usageReportRoutes } from './usageReportRoutes.ts';
import { claimUsageReports, postponeUsageReport, recordUsageOutcomes } from './usageReports.ts';

/** The demand-response interface under /api/openadr/v1: the interface's 30 endpoints. */
function vtnRoutes(deps: VtnDeps): RouteDef[] {
  return [...venRoutes(deps), ...reportRoutes(deps), ...subscriptionRoutes(deps), ...programRoutes(deps), ...eventRoutes(deps)];
}

export interface Vtn {
  routes: RouteDef[];
  /** Starts the dispatcher and the MQTT publisher (unless VTN_DISPATCHER=false), the embedded
   * broker (unless MQTT_URL or MQTT_ENABLED=false) and the cache's change feed. Until the feed is
   * up, reads go to the database. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The embedded broker's port (0 when there is none). */
  readonly mqttPort: number;
  /** What the flexibility loop asks of the VTN (flexibilityEvents.ts), for the wiring file. */
  readonly flexibility: {
    findVenResource(organizationId: number, venId: string, resourceId: string): ReturnType<typeof findVenResource>;
    writeDispatchEvents(tx: PoolClient, items: readonly DispatchItem[]): ReturnType<typeof writeDispatchEvents>;
    claimUsageReports: typeof claimUsageReports;
    recordUsageOutcomes: typeof recordUsageOutcomes;
    postponeUsageReport: typeof postponeUsageReport;
  };
  /** The embedded broker's TLS port (0 when there is none). */
  readonly mqttTlsPort: number;
}

/** The MQTT broker's token checks (the app's Authenticator) and the store of its login limits. */
export interface VtnAuth extends BrokerAuth {
  rateLimits: RateLimitStore;
}

export function createVtn(pool: Pool, log: Logger, config: Config, auth: VtnAuth): Vtn {
  const dispatcher = new NotificationDispatcher(pool, log, {
    concurrency: config.vtnWebhookConcurrency,
    timeoutMs: config.vtnWebhookTimeoutMs,
    maxAttempts: config.vtnWebhookMaxAttempts,
    backoff: { baseMs: config.vtnWebhookBackoffBaseMs, capMs: config.vtnWebhookBackoffCapMs },
    pollMs: config.vtnDispatchPollMs,
    allowInternal: config.vtnWebhookAllowPrivate,
  });
  const cache = new ReadCache(pool, log, { ttlMs: config.vtnReadCacheMs });
  let broker: EmbeddedBroker | undefined;
  let sink: MqttSink | undefined;
  let publisher: MqttPublisher | undefined;
  const deps: VtnDeps = {
    pool,
    notificationsWritten: dispatcher.kick,
    allowPrivateCallbacks: config.vtnWebhookAllowPrivate,
    cache,
    mqtt: config.mqttEnabled ? { written: () => publisher?.kick() } : undefined,
  };
  const mqttInfo = (): MqttInfo | undefined => {
    if (!config.mqttEnabled) return undefined;
    let uri = config.mqttPublicUrl;
    if (!uri && config.mqttUrl) {
      const url = new URL(config.mqttUrl);
      url.username = '';
      url.password = '';
      uri = url.toString().replace(/\/$/, '');
    }
    if (uri) return { uris: [uri] };
    const host = config.mqttHost === '0.0.0.0' || config.mqttHost === '::' ? 'localhost' : config.mqttHost;
    const at = `${host.includes(':') ? `[${host}]` : host}`;
    const plain = `mqtt://${at}:${broker?.port ?? config.mqttPort}`;
    // TLS first: a client taking the first URI does not send its token in clear.
    return { uris: config.mqttTlsPort === undefined ? [plain] : [`mqtts://${at}:${broker?.tlsPort ?? config.mqttTlsPort}`, plain] };
  };
  return {
    routes: [
      ...vtnRoutes(deps),
      ...v31Routes(deps, { basePath: config.vtn31BasePath, mqtt: mqttInfo, publicBaseUrl: config.publicBaseUrl, trustProxy: config.trustProxy }),
      ...usageReportRoutes(deps),
      ...usageReportRoutes(deps, config.vtn31BasePath, TAG_PREFIX_31),
      ...notificationAdminRoutes(pool, dispatcher.kick),
    ],
    async start() {
      void cache.start();
      if (config.mqttEnabled) {
        if (config.mqttUrl) sink = externalSink(config.mqttUrl, log, () => publisher?.kick());
        else {
          const limits = {
            store: auth.rateLimits,
            perClient: [{ seconds: 60, max: config.rateLimitTokenPerMinute }],
            perAddress: [{ seconds: 60, max: config.rateLimitTokenUnknownPerMinute }],
          };
          const tls =
            config.mqttTlsPort === undefined ? undefined : { port: config.mqttTlsPort, key: fs.readFileSync(config.mqttTlsKeyFile!), cert: fs.readFileSync(config.mqttTlsCertFile!) };
          broker = await EmbeddedBroker.start({
            host: config.mqttHost,
            port: config.mqttPort,
            tls,
            pool,
            auth,
            limits,
            recheckMs: config.authCacheMs,
            concurrency: config.mqttBrokerConcurrency,
            connectTimeoutMs: config.mqttConnectTimeoutMs,
            maxConnectBytes: config.mqttMaxConnectBytes,
            maxPacketBytes: config.mqttMaxPacketBytes,
            maxConnectionsPerAddress: config.mqttMaxConnectionsPerAddress,
            maxSubscriptionsPerSession: config.mqttMaxSubscriptionsPerSession,
            maxQueuedPerSession: config.mqttMaxQueuedPerSession,
            maxSessionsPerCredential: config.mqttMaxSessionsPerCredential,
            sessionExpiryMs: config.mqttSessionExpirySeconds * 1000,
            log,
          }).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== 'EADDRINUSE') throw err;
            throw new Error(
              `MQTT_PORT ${config.mqttPort}${config.mqttTlsPort === undefined ? '' : ` or MQTT_TLS_PORT ${config.mqttTlsPort}`} on ${config.mqttHost} is in use: set MQTT_PORT (0 = any free port), MQTT_URL for an external broker, or MQTT_ENABLED=false`,
            );
          });
          const embedded = broker;
          sink = { ready: true, publish: (messages) => embedded.publish(messages), close: () => embedded.close() };
          log.info({ port: broker.port, tlsPort: broker.tlsPort || undefined }, 'embedded MQTT broker listening');
        }
        publisher = new MqttPublisher(pool, sink, log, config.vtnDispatchPollMs);
      }
      if (config.vtnDispatcherEnabled) {
        dispatcher.start();
        publisher?.start();
      }
    },
    async stop() {
      await cache.stop();
      await dispatcher.stop();
      await publisher?.stop();
      await sink?.close();
    },
    get mqttPort() {
      return broker?.port ?? 0;
    },
    flexibility: {
      findVenResource: (organizationId, venId, resourceId) => findVenResource(pool, organizationId, venId, resourceId),
      writeDispatchEvents: (tx, items) => writeDispatchEvents(deps, tx, items),
      claimUsageReports,
      recordUsageOutcomes,
      postponeUsageReport,
    },
    get mqttTlsPort() {
      return broker?.tlsPort ?? 0;
    },
  };
}
