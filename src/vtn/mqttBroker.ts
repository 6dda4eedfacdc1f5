// The embedded MQTT broker (aedes, in this process, on MQTT_PORT and, with a key and a
// certificate, on MQTT_TLS_PORT): what 3.1 VENs behind NAT connect to instead of offering a
// webhook. An internet-facing server; what is checked where (docs/security.md, "MQTT broker"):
// - at the TCP accept: connections per address; then every packet's size from its header, a
//   CONNECT first and small, within MQTT_CONNECT_TIMEOUT_MS (mqttListeners.ts, mqttLimits.ts);
// - at CONNECT: failed-login quotas, the token, the client id taken into the credential's
//   namespace (mqttConnect.ts); a persistent session counts against its credential's quota
//   (mqttSessions.ts);
// - at SUBSCRIBE: each filter against the 3.1 privacy rules (mqttTopics.ts); only granted
//   filters are stored;
// - at every delivery and every queueing: the message against the session's rights as they are
//   then (mqttAccess.ts);
// - every AUTH_CACHE_MS, the tokens of connected sessions (one query): a session whose token
//   expired is disconnected; one whose credential was deleted or rotated, or whose organization
//   lost OpenADR, is also dropped with its persistent session, as are persistent sessions of such
//   credentials while away.
import type net from 'node:net';
import { Aedes, type AuthenticateError, type Client, type Subscription } from 'aedes';
import type { Logger } from 'pino';
import type { Principal } from '../http/types.ts';
import type { Pool } from '../store/database.ts';
import { checkConnect, NOT_AUTHORIZED, refusal, SERVER_UNAVAILABLE, tokenVersionOf, type Login } from './mqttConnect.ts';
import { mayDeliver, parseMessage, RightsCache } from './mqttAccess.ts';
import type { FailedAttempts } from '../http/failedAttempts.ts';
import { addressOf, loginFailures, type LoginLimits, type PacketGuard } from './mqttLimits.ts';
import { Listeners } from './mqttListeners.ts';
import { recheckSessions, rightsChanged, type SessionHost } from './mqttRevocation.ts';
import { SessionStore, type InnerPersistence, type Live } from './mqttSessions.ts';
import { subscriptionAllowed, venOfFilter } from './mqttTopics.ts';

export type { LoginLimits } from './mqttLimits.ts';
export type { Authenticate } from './mqttConnect.ts';

/** How the broker checks tokens and credentials (src/auth). */
export interface BrokerAuth {
  authenticate: (authorization: string) => Promise<Principal>;
  /** Whether each token still authenticates, read now (undefined: expired, revoked, unknown). */
  recheck(tokens: Iterable<string>): Promise<Map<string, Principal | undefined>>;
  /** The current token version of API clients and their organization's features (absent: deleted). */
  credentials(clientRowIds: readonly number[]): Promise<Map<number, { tokenVersion: number; features: string[] }>>;
}

export interface BrokerOptions {
  host: string;
  port: number;
  /** A TLS listener beside the plain one. */
  tls?: { port: number; key: Buffer; cert: Buffer };
  pool: Pool;
  auth: BrokerAuth;
  limits: LoginLimits;
  /** How often connected sessions' tokens are checked again (AUTH_CACHE_MS). */
  recheckMs: number;
  /** Messages routed at once (MQTT_BROKER_CONCURRENCY; aedes' default 100). */
  concurrency?: number;
  connectTimeoutMs?: number;
  maxConnectBytes?: number;
  maxPacketBytes?: number;
  maxConnectionsPerAddress?: number;
  maxSubscriptionsPerSession?: number;
  maxQueuedPerSession?: number;
  maxSessionsPerCredential?: number;
  sessionExpiryMs?: number;
  log: Logger;
}


/** aedes' client's filters (its typings leave them out). */
function subscriptionsOf(client: Client): Record<string, unknown> {
  return (client as unknown as { subscriptions: Record<string, unknown> }).subscriptions;
}

export class EmbeddedBroker {
  private listeners: Listeners | undefined;
  private readonly live = new Map<Client, Live>();
  /** The connected client of each session id. */
  private readonly byId = new Map<string, Client>();
  private readonly logins = new WeakMap<Client, Login>();
  private readonly guards = new WeakMap<object, PacketGuard>();
  private readonly rights: RightsCache;
  private readonly loginFailures: FailedAttempts;
  private store!: SessionStore;
  /** What the checks of mqttRevocation.ts work on. */
  private readonly host: SessionHost;
  private recheckTimer: NodeJS.Timeout | undefined;

  private constructor(
    readonly aedes: Aedes,
    private readonly options: BrokerOptions,
  ) {
    this.rights = new RightsCache(options.pool);
    const broker = this;
    this.host = {
      get store() {
        return broker.store;
      },
      rights: this.rights,
      auth: options.auth,
      connected: () => this.live.values(),
      filters: (live) => {
        const client = this.byId.get(live.id);
        return client ? Object.keys(subscriptionsOf(client)) : [];
      },
      drop: (id, why) => this.dropSession(id, why),
      disconnect: (id, why) => {
        options.log.info({ client: id }, `MQTT connection closed: ${why}`);
        this.byId.get(id)?.close();
      },
    };
    this.loginFailures = loginFailures(options.limits);
  }

  static async start(options: BrokerOptions): Promise<EmbeddedBroker> {
    const aedes = await Aedes.createBroker({
      drainTimeout: 30_000,
      // Checked by aedes for MQTT 3.1 clients only, after the id is namespaced (mqttConnect.ts).
      maxClientsIdLength: 512,
      connectTimeout: options.connectTimeoutMs ?? 10_000,
      concurrency: options.concurrency ?? 100,
      queueLimit: 16,
    });
    const broker = new EmbeddedBroker(aedes, options);
    // aedes reads `persistence` at every use: the wrapper takes over from the store it set up.
    const internals = aedes as unknown as { persistence: InnerPersistence | SessionStore };
    broker.store = new SessionStore(
      internals.persistence as InnerPersistence,
      { maxQueued: options.maxQueuedPerSession ?? 1000, maxPerCredential: options.maxSessionsPerCredential ?? 100 },
      (id) => void broker.dropSession(id, 'its queue is full'),
    );
    internals.persistence = broker.store;
    aedes.preConnect = (client, packet, callback) => {
      checkConnect(packet, addressOf(client.conn as net.Socket), options.auth.authenticate, broker.loginFailures).then(
        (login) => broker.logins.set(client, login),
        (err: Error) => {
          options.log.warn({ err: err.message }, 'MQTT login not checked');
          broker.logins.set(client, refusal('The server cannot check logins now; retry later', SERVER_UNAVAILABLE));
        },
      ).finally(() => callback(null, true));
    };
    aedes.authenticate = (client, _username, _password, done) => {
      broker.admit(client).then(
        (refused) => (refused ? done(refused, false) : done(null, true)),
        (err: Error) => {
          options.log.warn({ err: err.message }, 'MQTT session not opened');
          done(refusal('The server cannot open sessions now; retry later', SERVER_UNAVAILABLE).refused, false);
        },
      );
    };
    // Only the VTN publishes, through aedes.publish, which asks no one.
    aedes.authorizePublish = (_client, _packet, callback) => callback(new Error('Clients do not publish on the VTN broker'));
    aedes.authorizeSubscribe = (client, subscription, callback) => {
      broker.mayFollow(client, subscription).then(
        (allowed) => {
          if (allowed) broker.store.granted.add(subscription);
          else if (!client.clean) void broker.store.removeSubscriptions({ id: client.id }, [subscription.topic]).catch(() => undefined);
          callback(null, allowed ? subscription : null);
        },
        (err: Error) => {
          options.log.debug({ err: err.message }, 'MQTT subscription refused');
          callback(null, null);
        },
      );
    };
    aedes.authorizeForward = (client, packet) => {
      const live = broker.live.get(client);
      return live && mayDeliver(live.rights, packet.topic, broker.store.messages.get(packet.payload as Buffer)) ? packet : null;
    };
    aedes.on('clientError', (_client, err) => options.log.debug({ err: err.message }, 'MQTT client error'));
    aedes.on('connectionError', (_client, err) => options.log.debug({ err: err.message }, 'MQTT connection error'));
    try {
      broker.listeners = await Listeners.start(
        {
          host: options.host,
          port: options.port,
          tls: options.tls,
          connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
          maxConnectionsPerAddress: options.maxConnectionsPerAddress ?? 1000,
          maxConnectBytes: options.maxConnectBytes ?? 4096,
          maxPacketBytes: options.maxPacketBytes ?? 65_536,
          log: options.log,
        },
        (socket, guard) => broker.serve(socket, guard),
      );
    } catch (err) {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      throw err;
    }
    broker.scheduleRecheck(Math.max(options.recheckMs, 100));
    return broker;
  }

  get port(): number {
    return this.listeners?.port ?? 0;
  }

  /** The TLS listener's port (0: none). */
  get tlsPort(): number {
    return this.listeners?.tlsPort ?? 0;
  }

  /** Hands an accepted connection to aedes. */
  private serve(socket: net.Socket, guard: PacketGuard): void {
    this.guards.set(socket, guard);
    const client = this.aedes.handle(socket, undefined as never);
    socket.once('close', () => this.ended(client));
  }

  /** Opens the session of an accepted login (aedes' authenticate step); returns a refusal. */
  private async admit(client: Client): Promise<AuthenticateError | undefined> {
    const login = this.logins.get(client);
    this.logins.delete(client);
    if (!login) return refusal('Not logged in', NOT_AUTHORIZED).refused;
    if ('refused' in login) return login.refused;
    const { token, principal, ven } = login;
    const rights = await this.rights.acquire(principal.organizationId!, principal.subject, ven);
    const tokenVersion = tokenVersionOf(token, principal);
    const persistent = !client.clean;
    const existing = this.store.get(client.id);
    if (existing && existing.tokenVersion !== tokenVersion) await this.dropSession(client.id, 'its credential was rotated');
    if (persistent) {
      // What waited for the session is judged by the rights as they are now, not as the last
      // published change left them.
      if (ven && this.store.queued(client.id) > 0) await this.rights.refresh([rights]);
      const evicted = this.store.connect({ id: client.id, credential: principal.subject, rights, clientRowId: principal.clientRowId, tokenVersion, token }, Date.now());
      if (!evicted) return refusal('Too many persistent sessions for this credential, all connected', SERVER_UNAVAILABLE).refused;
      for (const old of evicted) await this.dropSession(old.id, 'the credential has too many persistent sessions');
    } else if (this.store.get(client.id)) await this.dropSession(client.id, 'a clean session replaces it');
    if (client.closed) return refusal('The connection closed', SERVER_UNAVAILABLE).refused;
    this.live.set(client, { id: client.id, token, principal, rights, tokenVersion, persistent });
    this.byId.set(client.id, client);
    const guard = this.guards.get(client.conn);
    if (guard) guard.authenticated = true;
    return undefined;
  }

  /** The end of a connection (accepted or not). */
  private ended(client: Client): void {
    const live = this.live.get(client);
    if (!live) return;
    this.live.delete(client);
    if (this.byId.get(live.id) !== client) return;
    this.byId.delete(live.id);
    if (live.persistent) this.store.disconnected(live.id, Date.now());
  }

  /** Whether a session may subscribe to a filter (the 3.1 privacy rules, its rights now). */
  private async mayFollow(client: Client, subscription: Subscription): Promise<boolean> {
    const live = this.live.get(client);
    if (!live) return false;
    await this.options.auth.authenticate(`Bearer ${live.token}`);
    const { rights } = live;
    if (!(subscription.topic in subscriptionsOf(client)) && Object.keys(subscriptionsOf(client)).length >= (this.options.maxSubscriptionsPerSession ?? 1000)) return false;
    const venId = rights.caller.ven ? venOfFilter(subscription.topic, rights.caller.organizationId) : undefined;
    // A VEN bound since the rights were read (just created, say): read them again.
    if (venId !== undefined && !rights.venIds.has(venId)) await this.rights.refresh([rights]);
    return subscriptionAllowed(subscription.topic, rights.caller.organizationId, rights.caller.ven, rights.venIds);
  }

  /** Closes a session's connection, if any, and forgets its persistent state. */
  async dropSession(id: string, why: string): Promise<void> {
    const client = this.byId.get(id);
    if (client) {
      this.ended(client);
      client.close();
    }
    const session = await this.store.drop(id);
    if (client || session) this.options.log.info({ client: id }, `MQTT session dropped: ${why}`);
  }

  /** Publishes QoS 1 messages (3.1 notifications, mqttPublisher.ts) in order; resolves when aedes
   * has routed them all. A change of a VEN or a resource first updates the rights of its
   * organization's VEN clients. */
  async publish(messages: readonly { topic: string; payload: string | Buffer }[]): Promise<void> {
    if (this.aedes.closed) throw new Error('the embedded MQTT broker is closed');
    const changed = new Set<number>();
    const packets = messages.map((m) => {
      const payload = typeof m.payload === 'string' ? Buffer.from(m.payload) : m.payload;
      // One payload goes to many topics (a change reaching 10,000 VENs): parsed once.
      let message = this.store.messages.get(payload);
      if (!message && (message = parseMessage(payload))) this.store.messages.set(payload, message);
      if (message?.objectType === 'VEN' || message?.objectType === 'RESOURCE') changed.add(Number(m.topic.split('/')[1]));
      return { topic: m.topic, payload };
    });
    if (changed.size > 0) await rightsChanged(this.host, changed);
    await Promise.all(
      packets.map(
        (p) =>
          new Promise<void>((resolve, reject) => {
            this.aedes.publish({ cmd: 'publish', topic: p.topic, payload: p.payload, qos: 1, retain: false, dup: false }, (err) => (err ? reject(err) : resolve()));
          }),
      ),
    );
  }

  private scheduleRecheck(everyMs: number): void {
    this.recheckTimer = setTimeout(() => {
      this.recheckSessions().then(
        () => !this.aedes.closed && this.scheduleRecheck(everyMs),
        (err: Error) => {
          this.options.log.warn({ err: err.message }, 'MQTT sessions not re-checked; retrying');
          if (!this.aedes.closed) this.scheduleRecheck(everyMs);
        },
      );
    }, everyMs);
    this.recheckTimer.unref();
  }

  /** The periodic check (mqttRevocation.ts). */
  recheckSessions(): Promise<void> {
    return recheckSessions(this.host, this.options.sessionExpiryMs ?? 7 * 86_400_000);
  }

  async close(): Promise<void> {
    clearTimeout(this.recheckTimer);
    const closeAedes = () => new Promise<void>((resolve) => this.aedes.close(() => resolve()));
    await (this.listeners ? this.listeners.close(closeAedes) : closeAedes());
  }
}
