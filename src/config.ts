// All configuration comes from environment variables, parsed and validated here and nowhere
// else. A bad value stops the start with a message naming every problem. The tables of
// docs/configuration.md follow CONFIG_DOCS (test/unit/docs.test.ts keeps them equal).
import { availableParallelism } from 'node:os';
import { PAT_FORMAT, PAT_FORMAT_TEXT } from './auth/secrets.ts';
import { ALL_ENCODINGS, ZSTD_AVAILABLE, type Encoding } from './http/compression.ts';
import { ORIGIN_FORMAT } from './http/cors.ts';
import { FOREVER, parseRetention, type Retention } from './shared/readings/retention.ts';
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** Use this PostgreSQL server instead of the embedded one. */
  databaseUrl: string | undefined;
  embeddedPostgresPort: number;
  dbPoolMax: number;
  adminToken: string | undefined;
  jwtSecret: string | undefined;
  tokenIssuer: string;
  tokenAudiences: string[];
  tokenTtlSeconds: number;
  /** How long a token's client version and organization features may be cached. */
  authCacheMs: number;
  bodyLimitBytes: number;
  trustProxy: boolean;
  /** HTTP front: node:http, uWebSockets.js, or uWebSockets.js where a build loads. */
  httpServer: 'node' | 'uws' | 'auto';
  rateLimitStore: 'memory' | 'postgres';
  rateLimitReadingsPerSecond: number;
  rateLimitReadingsPerMinute: number;
  rateLimitTokenPerMinute: number;
  rateLimitTokenUnknownPerMinute: number;
  /** Quota on every other authenticated endpoint per OAuth client; 0 = none (the interface's default). */
  rateLimitApiPerMinute: number;
  workerThreads: number;
  timeseriesBackend: 'postgres' | 'questdb';
  questdbHttpUrl: string | undefined;
  questdbPgUrl: string | undefined;
  /** ILP protocol version for QuestDB writes; `auto` asks the server. */
  questdbIlpProtocolVersion: 'auto' | '1' | '2' | '3';
  questdbTable: string;
  questdbWriteConnections: number;
  questdbPurgeIntervalMs: number;
  readingsMaxPoints: number;
  queryParts: number;
  /** How long superseded reading versions are kept (READING_VERSIONS_RETENTION). */
  readingVersionsRetention: Retention;
  clearingIntervalMs: number;
  /** Delivery validation: wait after a transaction's end, step interval, retry delay, window. */
  validationDelayMs: number;
  validationIntervalMs: number;
  validationRetryMs: number;
  validationWindowMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  shutdownTimeoutMs: number;
  /** Run the VTN notification dispatcher in this instance. */
  vtnDispatcherEnabled: boolean;
  vtnDispatchPollMs: number;
  vtnWebhookConcurrency: number;
  vtnWebhookTimeoutMs: number;
  vtnWebhookMaxAttempts: number;
  vtnWebhookBackoffBaseMs: number;
  vtnWebhookBackoffCapMs: number;
  /** Accept subscription callbacks on loopback/private/link-local addresses. */
  vtnWebhookAllowPrivate: boolean;
  /** Lifetime of cached VTN read responses; 0 disables the cache. */
  vtnReadCacheMs: number;
  /** Codings answers may be compressed with, in order of preference; empty = none. */
  compressionEncodings: Encoding[];
  compressionMinBytes: number;
  /** Origins allowed to call the API from a browser (`*` = any); empty = no CORS. */
  corsOrigins: string[];
  /** Base path of the OpenADR 3.1.0 surface. */
  vtn31BasePath: string;
  /** MQTT notifications (OpenADR 3.1): on by default, to the embedded broker unless mqttUrl. */
  mqttEnabled: boolean;
  mqttHost: string;
  mqttPort: number;
  mqttUrl: string | undefined;
  mqttPublicUrl: string | undefined;
  mqttBrokerConcurrency: number;
  /** The flexibility loop: how often other instances' dispatches and VEN usage reports are looked for. */
  dispatchIntervalMs: number;
  usageReportsIntervalMs: number;
  /** The embedded broker's TLS listener (undefined: none) and its key and certificate files. */
  mqttTlsPort: number | undefined;
  mqttTlsKeyFile: string | undefined;
  mqttTlsCertFile: string | undefined;
  /** The embedded broker's limits (docs/security.md, "MQTT broker"). */
  mqttConnectTimeoutMs: number;
  mqttMaxConnectBytes: number;
  mqttMaxPacketBytes: number;
  mqttMaxConnectionsPerAddress: number;
  mqttMaxSubscriptionsPerSession: number;
  mqttMaxQueuedPerSession: number;
  mqttMaxSessionsPerCredential: number;
  mqttSessionExpirySeconds: number;
  /** The address clients reach this server at (`https://flex.example.com`), for URLs it hands
   * out (OpenADR 3.1 /auth/server); unset: built from the request. */
  publicBaseUrl: string | undefined;
  /** Body bytes held at once by every route but reading batches (src/http/body.ts). */
  bodyBudgetBytes: number;
  /** Bearer token Prometheus sends to GET /metrics on the public listener. */
  metricsToken: string | undefined;
  /** A second listener serving only GET /metrics, without a token (undefined: none; 0: a free port). */
  metricsPort: number | undefined;
  metricsHost: string;
}

export interface ConfigDoc {
  name: string;
  default: string;
  description: string;
}

export const CONFIG_DOCS: ConfigDoc[] = [
  { name: 'PORT', default: '8080', description: 'HTTP port (0 picks a free one and logs it).' },
  { name: 'HOST', default: '127.0.0.1', description: 'Address to listen on (0.0.0.0 for all interfaces).' },
  { name: 'DATA_DIR', default: './.data', description: 'Embedded PostgreSQL data, generated admin token. Kept across restarts.' },
  { name: 'DATABASE_URL', default: '(unset)', description: 'PostgreSQL connection string; when set, no embedded server is started.' },
  { name: 'EMBEDDED_PG_PORT', default: '0', description: 'Port of the embedded PostgreSQL (0 = a free port on 127.0.0.1).' },
  { name: 'DB_POOL_MAX', default: '20', description: 'Maximum database connections of this instance.' },
  { name: 'ADMIN_TOKEN', default: '(generated)', description: 'Personal access token of the bootstrap global administrator: `flex_pat_` and at least 32 characters of A-Z, a-z, 0-9, _ or - (anything else stops the start). When unset one is generated on first start, written to DATA_DIR/admin-token (mode 0600) and printed once.' },
  { name: 'JWT_SECRET', default: '(generated, stored in the database)', description: 'HS256 signing secret for access tokens, at least 32 characters. When unset a random key is created once and kept in the database, so every instance shares it.' },
  { name: 'TOKEN_ISSUER', default: 'flex', description: 'The `iss` claim of access tokens.' },
  { name: 'TOKEN_AUDIENCES', default: 'flex-api', description: 'Comma-separated audiences accepted by POST /oauth/token (`audience` parameter).' },
  { name: 'TOKEN_TTL_SECONDS', default: '86400', description: 'Access token lifetime (`expires_in`).' },
  { name: 'AUTH_CACHE_MS', default: '2000', description: 'How long token revocation state (deleted client, rotated secret) and organization features are cached. Revoked tokens stop working within this time (open MQTT sessions are disconnected).' },
  { name: 'BODY_LIMIT_BYTES', default: '268435456', description: 'Largest body of POST /api/readings and POST /api/grid/resource/{id}/readings/reference (256 MiB; reading batches are large). 413 beyond. Every other route has a fixed, smaller limit (docs/security.md, "Request bodies").' },
  { name: 'HTTP_SERVER', default: 'auto', description: '`auto`: uWebSockets.js where its trusted build loads (a binary whose sha256 the code pins; Node 20 on Linux, macOS, Windows), else node:http. `uws`: uWebSockets.js or a start error. `node`: node:http (every Node release; answers pipelined requests in order and every malformed request with a status). The start-up log says which runs and why; see docs/architecture.md, "HTTP server".' },
  { name: 'COMPRESSION_ENCODINGS', default: 'zstd,br,gzip (zstd where Node has it)', description: 'Codings answers may be compressed with, in the order preferred when the client’s Accept-Encoding weighs them equally; `none` = never compress. zstd needs Node ≥ 22.15 (or 23.8); listed on an older Node it stops the start. docs/compression.md.' },
  { name: 'COMPRESSION_MIN_BYTES', default: '1024', description: 'Answers smaller than this are sent uncompressed.' },
  { name: 'CORS_ORIGINS', default: '(none)', description: 'Comma-separated origins (`https://tool.example.com`) whose browser pages may call the API, or `*` for any. Unset: no CORS headers, so browsers allow same-origin calls only. Preflights get 204 (403 for an origin not listed).' },
  { name: 'TRUST_PROXY', default: 'false', description: 'Take the client address from X-Forwarded-For (behind a load balancer).' },
  { name: 'RATE_LIMIT_STORE', default: 'memory', description: '`memory` (one instance) or `postgres` (counters shared by all instances).' },
  { name: 'RATE_LIMIT_READINGS_PER_SECOND', default: '5', description: 'POST /api/readings requests per OAuth client per second.' },
  { name: 'RATE_LIMIT_READINGS_PER_MINUTE', default: '20', description: 'POST /api/readings requests per OAuth client per minute.' },
  { name: 'RATE_LIMIT_TOKEN_PER_MINUTE', default: '30', description: 'Tokens issued per client per minute (counted once its secret is verified), and failed token requests per (client id, address) per minute; failed MQTT CONNECTs are counted the same way (separate counters). docs/security.md, "Failed attempts".' },
  { name: 'RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE', default: '30', description: 'Failed token requests per address per minute, whatever the client ids (an IPv6 address counts by its /64); checked before the body is read. Failed MQTT CONNECTs are counted the same way (separate counter).' },
  { name: 'RATE_LIMIT_API_PER_MINUTE', default: '0', description: 'Requests per OAuth client per minute on every other authenticated endpoint; 0 = no limit (the interface’s default). When set, those responses carry the X-Rate-Limit-* headers too.' },
  { name: 'WORKER_THREADS', default: 'CPU count − 1 (at least 2)', description: 'Worker threads for CPU-heavy work: parsing reading batches, virtual registers. Large batches on QuestDB are parsed in slices on all of them at once.' },
  { name: 'TIMESERIES_BACKEND', default: 'postgres', description: 'Where readings live: `postgres` (the same database, nothing extra) or `questdb` (needs QUESTDB_HTTP_URL and QUESTDB_PG_URL).' },
  { name: 'QUESTDB_HTTP_URL', default: '(unset)', description: 'QuestDB HTTP endpoint for ILP writes, e.g. http://localhost:9000.' },
  { name: 'QUESTDB_PG_URL', default: '(unset)', description: 'QuestDB PostgreSQL-wire endpoint for queries, e.g. postgres://admin:quest@localhost:8812/qdb.' },
  { name: 'QUESTDB_ILP_PROTOCOL_VERSION', default: 'auto', description: 'InfluxDB line protocol version of QuestDB writes: `1` (text; every QuestDB with ILP over HTTP), `2` or `3` (binary encodings of newer releases), or `auto`: the highest the server lists in its /settings, else 1 (QuestDB 7.4 lists none). Flex writes version 1 text, which all of them read (docs/questdb.md).' },
  { name: 'QUESTDB_TABLE', default: 'readings', description: 'Name of the readings table in QuestDB (created at start); letters, digits and _.' },
  { name: 'QUESTDB_WRITE_CONNECTIONS', default: '4', description: 'ILP/HTTP requests one POST /api/readings sends to QuestDB at once (its batch goes in chunks of 100,000 readings).' },
  { name: 'QUESTDB_PURGE_INTERVAL_MS', default: '60000', description: 'How often deleted registers\' readings are purged from QuestDB (a month partition holding them is rewritten while writes to that month wait; docs/questdb.md); 0: never (they stay hidden).' },
  { name: 'QUERY_PARTS', default: 'CPU count, at most 4', description: 'Large reading queries (PostgreSQL backend) fetch their blocks in this many parts, by registers or by days, at once on separate connections; 1 = never split.' },
  { name: 'READING_VERSIONS_RETENTION', default: 'forever', description: 'How long superseded reading versions are kept: an ISO 8601 duration (P90D, P2Y, PT12H) or `forever`. A GET /api/readings with an `asOf` older than now minus this is a 400 naming the limit; older versions are purged in the background (docs/meter-data.md).' },
  { name: 'READINGS_MAX_POINTS', default: '500000', description: 'Most readings one GET /api/readings response may hold (registers × points); more is a 400 asking for a shorter period or a larger resolution.' },
  { name: 'CLEARING_INTERVAL_MS', default: '5000', description: 'How often availability orders past their expiresAt are looked for and cleared (on every instance; each order clears once).' },
  { name: 'VALIDATION_DELAY_MS', default: '3600000', description: 'How long after a transaction’s end its delivery is validated from meter data (time for the readings to arrive).' },
  { name: 'VALIDATION_INTERVAL_MS', default: '30000', description: 'How often due deliveries are looked for and validated (on every instance; each transaction is validated by one).' },
  { name: 'VALIDATION_RETRY_MS', default: '900000', description: 'How long a transaction with missing meter data (or not measurable) waits before the next attempt.' },
  { name: 'VALIDATION_WINDOW_MS', default: '2592000000', description: 'How long after a transaction’s end missing data is retried and corrected readings trigger a re-validation (30 days).' },
  { name: 'DISPATCH_INTERVAL_MS', default: '1000', description: 'How often flexibility transactions waiting to be dispatched to their VEN as OpenADR events are looked for (on every instance; each is written once). Writes on this instance wake it at once.' },
  { name: 'USAGE_REPORTS_INTERVAL_MS', default: '1000', description: 'How often VEN usage reports waiting to become readings of their grid resource’s actual register are looked for (on every instance; each is stored once). Reports on this instance wake it at once.' },
  { name: 'LOG_LEVEL', default: 'info', description: 'fatal, error, warn, info, debug, trace or silent. Requests are logged at debug.' },
  { name: 'SHUTDOWN_TIMEOUT_MS', default: '30000', description: 'How long SIGTERM/SIGINT waits for in-flight requests before closing.' },
  { name: 'VTN_DISPATCHER', default: 'true', description: 'Deliver VTN webhook notifications from this instance. Any number of instances may; each notification is claimed by one.' },
  { name: 'VTN_DISPATCH_POLL_MS', default: '1000', description: 'How often the dispatcher looks for notifications written by other instances and for retries that fell due (its own writes wake it at once).' },
  { name: 'VTN_WEBHOOK_CONCURRENCY', default: '64', description: 'Notifications delivered at the same time by this instance (at most one per subscription).' },
  { name: 'VTN_WEBHOOK_TIMEOUT_MS', default: '10000', description: 'Time allowed for one webhook POST, connection to last byte of the answer.' },
  { name: 'VTN_WEBHOOK_MAX_ATTEMPTS', default: '15', description: 'Delivery attempts before a notification is dead-lettered (visible in /api/admin/notifications).' },
  { name: 'VTN_WEBHOOK_BACKOFF_BASE_MS', default: '1000', description: 'Retry backoff: the wait before attempt n+1 is random in [0, min(cap, base × 2^(n−1))) (full jitter).' },
  { name: 'VTN_WEBHOOK_BACKOFF_CAP_MS', default: '600000', description: 'Retry backoff cap (10 minutes). A longer Retry-After from the receiver is honoured up to this cap.' },
  { name: 'VTN_READ_CACHE_MS', default: '5000', description: 'VTN read responses are cached in memory and invalidated by every change, on every instance (LISTEN/NOTIFY); this is only the longest an entry is kept. 0 = no cache (every read queries PostgreSQL).' },
  { name: 'VTN31_BASE_PATH', default: '/api/openadr/3.1.0', description: 'Base path of the OpenADR 3.1.0 surface over the same VTN objects (docs/openadr-3.1.md).' },
  { name: 'PUBLIC_BASE_URL', default: '(from the request)', description: 'The address clients reach the server at (`https://flex.example.com`), used in URLs the server hands out (OpenADR 3.1 `GET /auth/server`). Unset: the request’s Host, or X-Forwarded-Proto/X-Forwarded-Host when TRUST_PROXY=true.' },
  { name: 'MQTT_ENABLED', default: 'true', description: 'MQTT notifications (OpenADR 3.1 notifier): every change is published from the outbox, QoS 1. false: no broker, no MQTT outbox, /notifiers lists webhooks only.' },
  { name: 'MQTT_HOST', default: '127.0.0.1', description: 'Address the embedded MQTT broker listens on (0.0.0.0 for all interfaces; the Docker image sets it).' },
  { name: 'MQTT_PORT', default: '1883', description: 'Port of the embedded MQTT broker (0 picks a free one). Clients authenticate with a VTN access token as password.' },
  { name: 'MQTT_URL', default: '(unset)', description: 'External broker instead of the embedded one, e.g. mqtt://user:pass@broker:1883 (needed with several instances; the broker then enforces topic access itself).' },
  { name: 'MQTT_PUBLIC_URL', default: '(derived)', description: 'Broker URI announced to clients by GET /notifiers (default: MQTT_URL without credentials, or mqtt://<MQTT_HOST>:<port>).' },
  { name: 'MQTT_BROKER_CONCURRENCY', default: '100', description: 'Messages the embedded broker routes at once (aedes `concurrency`); more are queued in order.' },
  { name: 'MQTT_TLS_PORT', default: '(unset)', description: 'Port of the embedded broker\'s TLS listener on MQTT_HOST (0 picks a free one), beside MQTT_PORT; announced first by GET /notifiers (mqtts://). Needs MQTT_TLS_KEY_FILE and MQTT_TLS_CERT_FILE.' },
  { name: 'MQTT_TLS_KEY_FILE', default: '(unset)', description: 'PEM private key of the TLS listener, read at start.' },
  { name: 'MQTT_TLS_CERT_FILE', default: '(unset)', description: 'PEM certificate (chain) of the TLS listener, read at start.' },
  { name: 'MQTT_CONNECT_TIMEOUT_MS', default: '10000', description: 'Time a new MQTT connection has to complete its TLS handshake and send its whole CONNECT; closed otherwise.' },
  { name: 'MQTT_MAX_CONNECT_BYTES', default: '4096', description: 'Largest CONNECT (and any packet before the CONNECT is accepted), in bytes of remaining length; larger closes the connection on its header.' },
  { name: 'MQTT_MAX_PACKET_BYTES', default: '65536', description: 'Largest packet of an authenticated MQTT client (clients only subscribe); larger closes the connection on its header.' },
  { name: 'MQTT_MAX_CONNECTIONS_PER_ADDRESS', default: '1000', description: 'Open MQTT connections per client address, counted from the TCP accept; more are closed at once.' },
  { name: 'MQTT_MAX_SUBSCRIPTIONS_PER_SESSION', default: '1000', description: 'Topic filters one MQTT session may hold; more are refused (SUBACK 0x80).' },
  { name: 'MQTT_MAX_QUEUED_PER_SESSION', default: '1000', description: 'Messages queued for one persistent MQTT session (clean session off) while away or unacknowledged; one more drops the session (sessionPresent false at the next CONNECT).' },
  { name: 'MQTT_MAX_SESSIONS_PER_CREDENTIAL', default: '100', description: 'Persistent MQTT sessions (clean session off) per credential; a new one replaces the least recently connected one that is away, and is refused (return code 3) when all are connected. Clean sessions are not counted.' },
  { name: 'MQTT_SESSION_EXPIRY_SECONDS', default: '604800', description: 'A persistent MQTT session away this long is dropped (7 days, as long as the MQTT outbox keeps published rows).' },
  { name: 'VTN_WEBHOOK_ALLOW_PRIVATE', default: 'false', description: 'Accept and call subscription callbackUrls on loopback, private and link-local addresses (tests, closed networks). Off: such URLs are refused (400) and never called.' },
  { name: 'BODY_BUDGET_BYTES', default: '33554432', description: 'Request body bytes held at once by all routes but reading batches (32 MiB). A body that does not fit gets 503 with Retry-After: 1 instead of being read; each route has its own limit too (docs/security.md, "Request bodies").' },
  { name: 'METRICS_TOKEN', default: '(unset)', description: 'Bearer token for GET /metrics on the API port (Prometheus `authorization: {credentials: …}`), at least 32 characters. Global administrators’ tokens are accepted too; anyone else gets 401/403. docs/security.md, "Metrics".' },
  { name: 'METRICS_PORT', default: '(unset)', description: 'A second listener, on METRICS_HOST, that serves only GET /metrics and asks no token (for a scraper on the same host or network); unset = none, 0 = a free port (logged).' },
  { name: 'METRICS_HOST', default: '127.0.0.1', description: 'Address of the METRICS_PORT listener (loopback by default: set it only to an interface your monitoring network alone reaches).' },
];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  int(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name} must be an integer between ${min} and ${max}, got ${JSON.stringify(value)}`);
      return fallback;
    }
    return Number(value);
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    this.problems.push(`${name} must be true or false, got ${JSON.stringify(value)}`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
      return fallback;
    }
    return value as T;
  }
}

function compressionEncodings(r: Reader): Encoding[] {
  const value = r.raw('COMPRESSION_ENCODINGS');
  if (value === undefined) return ALL_ENCODINGS.filter((e) => e !== 'zstd' || ZSTD_AVAILABLE);
  if (value.toLowerCase() === 'none') return [];
  const names = value.split(',').map((e) => e.trim().toLowerCase()).filter(Boolean);
  const unknown = names.filter((e) => !(ALL_ENCODINGS as readonly string[]).includes(e));
  if (unknown.length > 0 || names.length === 0) r.problems.push(`COMPRESSION_ENCODINGS must list ${ALL_ENCODINGS.join(', ')} or be none, got ${JSON.stringify(value)}`);
  if (names.includes('zstd') && !ZSTD_AVAILABLE) r.problems.push(`COMPRESSION_ENCODINGS lists zstd, which Node ${process.versions.node} cannot compress (needs 22.15 or 23.8 and later)`);
  return [...new Set(names)].filter((e): e is Encoding => (ALL_ENCODINGS as readonly string[]).includes(e));
}

function readingVersionsRetention(r: Reader): Retention {
  const value = r.raw('READING_VERSIONS_RETENTION');
  if (value === undefined) return FOREVER;
  const retention = parseRetention(value);
  if (!retention) r.problems.push(`READING_VERSIONS_RETENTION must be an ISO 8601 duration such as P90D, P2Y or PT12H, or forever, got ${JSON.stringify(value)}`);
  return retention ?? FOREVER;
}

function corsOrigins(r: Reader): string[] {
  const value = r.raw('CORS_ORIGINS');
  if (value === undefined) return [];
  const origins = value.split(',').map((o) => o.trim().replace(/\/$/, '')).filter(Boolean);
  if (origins.includes('*')) return ['*'];
  const bad = origins.filter((o) => !ORIGIN_FORMAT.test(o));
  if (bad.length > 0) r.problems.push(`CORS_ORIGINS must list origins like https://tool.example.com (scheme, host, optional port; no path) or be *, got ${bad.map((o) => JSON.stringify(o)).join(', ')}`);
  return origins.filter((o) => ORIGIN_FORMAT.test(o));
}

export function loadConfig(env: Env = process.env): Config {
  const r = new Reader(env);
  const databaseUrl = r.raw('DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) r.problems.push('DATABASE_URL must start with postgres:// or postgresql://');
  const jwtSecret = r.raw('JWT_SECRET');
  if (jwtSecret !== undefined && jwtSecret.length < 32) r.problems.push('JWT_SECRET must be at least 32 characters');
  const adminToken = r.raw('ADMIN_TOKEN');
  if (adminToken !== undefined && !PAT_FORMAT.test(adminToken)) {
    r.problems.push(`ADMIN_TOKEN must be a personal access token: ${PAT_FORMAT_TEXT}; any other token would never authenticate`);
  }
  const audiences = r.string('TOKEN_AUDIENCES', 'flex-api').split(',').map((a) => a.trim()).filter(Boolean);
  if (audiences.length === 0) r.problems.push('TOKEN_AUDIENCES must name at least one audience');
  const config: Config = {
    host: r.string('HOST', '127.0.0.1'),
    port: r.int('PORT', 8080, 0, 65535),
    dataDir: r.string('DATA_DIR', './.data'),
    databaseUrl,
    embeddedPostgresPort: r.int('EMBEDDED_PG_PORT', 0, 0, 65535),
    dbPoolMax: r.int('DB_POOL_MAX', 20, 1, 1000),
    adminToken,
    jwtSecret,
    tokenIssuer: r.string('TOKEN_ISSUER', 'flex'),
    tokenAudiences: audiences,
    tokenTtlSeconds: r.int('TOKEN_TTL_SECONDS', 86400, 60, 31 * 86400),
    authCacheMs: r.int('AUTH_CACHE_MS', 2000, 0, 60_000),
    bodyLimitBytes: r.int('BODY_LIMIT_BYTES', 256 * 1024 * 1024, 1024, 2 ** 31),
    trustProxy: r.bool('TRUST_PROXY', false),
    httpServer: r.oneOf('HTTP_SERVER', ['node', 'uws', 'auto'] as const, 'auto'),
    rateLimitStore: r.oneOf('RATE_LIMIT_STORE', ['memory', 'postgres'] as const, 'memory'),
    rateLimitReadingsPerSecond: r.int('RATE_LIMIT_READINGS_PER_SECOND', 5, 1),
    rateLimitReadingsPerMinute: r.int('RATE_LIMIT_READINGS_PER_MINUTE', 20, 1),
    rateLimitTokenPerMinute: r.int('RATE_LIMIT_TOKEN_PER_MINUTE', 30, 1),
    rateLimitTokenUnknownPerMinute: r.int('RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE', 30, 1),
    rateLimitApiPerMinute: r.int('RATE_LIMIT_API_PER_MINUTE', 0, 0),
    // At least 2: on a 2-CPU machine the main thread mostly waits while a large batch is parsed.
    workerThreads: r.int('WORKER_THREADS', Math.max(2, availableParallelism() - 1), 1, 256),
    timeseriesBackend: r.oneOf('TIMESERIES_BACKEND', ['postgres', 'questdb'] as const, 'postgres'),
    questdbHttpUrl: r.raw('QUESTDB_HTTP_URL'),
    questdbPgUrl: r.raw('QUESTDB_PG_URL'),
    questdbIlpProtocolVersion: r.oneOf('QUESTDB_ILP_PROTOCOL_VERSION', ['auto', '1', '2', '3'] as const, 'auto'),
    questdbTable: r.raw('QUESTDB_TABLE') ?? 'readings',
    questdbWriteConnections: r.int('QUESTDB_WRITE_CONNECTIONS', 4, 1, 64),
    questdbPurgeIntervalMs: r.int('QUESTDB_PURGE_INTERVAL_MS', 60_000, 0, 86_400_000),
    readingsMaxPoints: r.int('READINGS_MAX_POINTS', 500_000, 1, 50_000_000),
    readingVersionsRetention: readingVersionsRetention(r),
    queryParts: r.int('QUERY_PARTS', Math.min(4, availableParallelism()), 1, 64),
    clearingIntervalMs: r.int('CLEARING_INTERVAL_MS', 5000, 100, 3_600_000),
    validationDelayMs: r.int('VALIDATION_DELAY_MS', 3_600_000, 0, 31 * 86_400_000),
    validationIntervalMs: r.int('VALIDATION_INTERVAL_MS', 30_000, 100, 3_600_000),
    validationRetryMs: r.int('VALIDATION_RETRY_MS', 900_000, 0, 31 * 86_400_000),
    validationWindowMs: r.int('VALIDATION_WINDOW_MS', 30 * 86_400_000, 0, 366 * 86_400_000),
    logLevel: r.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    shutdownTimeoutMs: r.int('SHUTDOWN_TIMEOUT_MS', 30_000, 0, 600_000),
    vtnDispatcherEnabled: r.bool('VTN_DISPATCHER', true),
    vtnDispatchPollMs: r.int('VTN_DISPATCH_POLL_MS', 1000, 10, 600_000),
    vtnWebhookConcurrency: r.int('VTN_WEBHOOK_CONCURRENCY', 64, 1, 1000),
    vtnWebhookTimeoutMs: r.int('VTN_WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    vtnWebhookMaxAttempts: r.int('VTN_WEBHOOK_MAX_ATTEMPTS', 15, 1, 100),
    vtnWebhookBackoffBaseMs: r.int('VTN_WEBHOOK_BACKOFF_BASE_MS', 1000, 1, 3_600_000),
    vtnWebhookBackoffCapMs: r.int('VTN_WEBHOOK_BACKOFF_CAP_MS', 600_000, 1, 86_400_000),
    vtnWebhookAllowPrivate: r.bool('VTN_WEBHOOK_ALLOW_PRIVATE', false),
    vtnReadCacheMs: r.int('VTN_READ_CACHE_MS', 5000, 0, 3_600_000),
    compressionEncodings: compressionEncodings(r),
    compressionMinBytes: r.int('COMPRESSION_MIN_BYTES', 1024, 0, 2 ** 31),
    corsOrigins: corsOrigins(r),
    vtn31BasePath: r.string('VTN31_BASE_PATH', '/api/openadr/3.1.0').replace(/\/+$/, ''),
    mqttEnabled: r.bool('MQTT_ENABLED', true),
    mqttHost: r.string('MQTT_HOST', '127.0.0.1'),
    mqttPort: r.int('MQTT_PORT', 1883, 0, 65535),
    mqttUrl: r.raw('MQTT_URL'),
    mqttPublicUrl: r.raw('MQTT_PUBLIC_URL'),
    mqttBrokerConcurrency: r.int('MQTT_BROKER_CONCURRENCY', 100, 1, 1_000_000),
    dispatchIntervalMs: r.int('DISPATCH_INTERVAL_MS', 1000, 10, 3_600_000),
    usageReportsIntervalMs: r.int('USAGE_REPORTS_INTERVAL_MS', 1000, 10, 3_600_000),
    mqttTlsPort: r.raw('MQTT_TLS_PORT') === undefined ? undefined : r.int('MQTT_TLS_PORT', 8883, 0, 65535),
    mqttTlsKeyFile: r.raw('MQTT_TLS_KEY_FILE'),
    mqttTlsCertFile: r.raw('MQTT_TLS_CERT_FILE'),
    mqttConnectTimeoutMs: r.int('MQTT_CONNECT_TIMEOUT_MS', 10_000, 100, 600_000),
    mqttMaxConnectBytes: r.int('MQTT_MAX_CONNECT_BYTES', 4096, 256, 1024 * 1024),
    mqttMaxPacketBytes: r.int('MQTT_MAX_PACKET_BYTES', 65_536, 256, 16 * 1024 * 1024),
    mqttMaxConnectionsPerAddress: r.int('MQTT_MAX_CONNECTIONS_PER_ADDRESS', 1000, 1, 10_000_000),
    mqttMaxSubscriptionsPerSession: r.int('MQTT_MAX_SUBSCRIPTIONS_PER_SESSION', 1000, 1, 1_000_000),
    mqttMaxQueuedPerSession: r.int('MQTT_MAX_QUEUED_PER_SESSION', 1000, 1, 10_000_000),
    mqttMaxSessionsPerCredential: r.int('MQTT_MAX_SESSIONS_PER_CREDENTIAL', 100, 1, 10_000_000),
    mqttSessionExpirySeconds: r.int('MQTT_SESSION_EXPIRY_SECONDS', 604_800, 1, 366 * 86_400),
    publicBaseUrl: r.raw('PUBLIC_BASE_URL')?.replace(/\/+$/, ''),
    bodyBudgetBytes: r.int('BODY_BUDGET_BYTES', 32 * 1024 * 1024, 64 * 1024, 2 ** 40),
    metricsToken: r.raw('METRICS_TOKEN'),
    metricsPort: r.raw('METRICS_PORT') === undefined ? undefined : r.int('METRICS_PORT', 0, 0, 65535),
    metricsHost: r.string('METRICS_HOST', '127.0.0.1'),
  };
  if (config.metricsToken !== undefined && config.metricsToken.length < 32) r.problems.push('METRICS_TOKEN must be at least 32 characters');
  if (config.timeseriesBackend === 'questdb' && (!config.questdbHttpUrl || !config.questdbPgUrl)) {
    r.problems.push('TIMESERIES_BACKEND=questdb needs QUESTDB_HTTP_URL and QUESTDB_PG_URL');
  }
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,117}$/.test(config.questdbTable)) r.problems.push('QUESTDB_TABLE must be letters, digits and _ (not starting with a digit), at most 118 characters');
  if (config.vtnWebhookBackoffCapMs < config.vtnWebhookBackoffBaseMs) r.problems.push('VTN_WEBHOOK_BACKOFF_CAP_MS must not be below VTN_WEBHOOK_BACKOFF_BASE_MS');
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(config.vtn31BasePath) || config.vtn31BasePath === '/api/openadr/v1') r.problems.push('VTN31_BASE_PATH must be a path like /api/openadr/3.1.0 (not the v1 path)');
  if (config.mqttUrl !== undefined && !/^mqtts?:\/\//.test(config.mqttUrl)) r.problems.push('MQTT_URL must start with mqtt:// or mqtts://');
  if (config.mqttTlsPort !== undefined && (!config.mqttTlsKeyFile || !config.mqttTlsCertFile)) r.problems.push('MQTT_TLS_PORT needs MQTT_TLS_KEY_FILE and MQTT_TLS_CERT_FILE');
  if (config.publicBaseUrl !== undefined && !/^https?:\/\/[^/?#@\s]+(\/[^?#\s]*)?$/.test(config.publicBaseUrl)) r.problems.push('PUBLIC_BASE_URL must be an http(s) URL without credentials, query or fragment, like https://flex.example.com');
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}
