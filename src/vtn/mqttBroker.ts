// The embedded MQTT broker (aedes, in this process, on MQTT_PORT and, with a key and a
// certificate, on MQTT_TLS_PORT): what 3.1 VENs behind NAT connect to instead of offering a
// webhook. An internet-facing server; what is checked where (docs/security.md, "MQTT broker"):
// - at the TCP accept: connections per address; then every packet's size from its header, a
//   CONNECT first and small, within MQTT_CONNECT_TIMEOUT_MS (mqttLimits.ts);
// - at CONNECT: the password is a VTN access token (any user name, or none); failed CONNECTs are
//   limited per (user name, address) and per address; the client id is taken in the namespace of
//   the credential (`<credential client id>/<client id>`), so no credential reaches another's
//   session; a will is ignored (clients do not publish); a persistent session counts against its
//   credential's quota (mqttSessions.ts);
// - at SUBSCRIBE: each filter against the 3.1 privacy rules (mqttTopics.ts); only granted
//   filters are stored;
// - at every delivery and every queueing: the message against the session's rights as they are
//   then (mqttAccess.ts);
// - every AUTH_CACHE_MS, the tokens of connected sessions (one query): a session whose token
//   expired is disconnected; one whose credential was deleted or rotated, or whose organization
//   lost OpenADR, is also dropped with its persistent session, as are persistent sessions of such
//   credentials while away.
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { Aedes, type AuthenticateError, type Client, type ConnectPacket, type Subscription } from 'aedes';
import { decodeJwt } from 'jose';
import type { Logger } from 'pino';
import type { Principal } from '../http/types.ts';
import type { Pool } from '../store/database.ts';
import { vtnCaller } from './access.ts';
import { mayDeliver, RightsCache, type MessageAbout, type Rights } from './mqttAccess.ts';
import { addressOf, ConnectionCounter, guardReads, LoginLimiter, PacketGuard, type LoginLimits } from './mqttLimits.ts';
import { SessionStore, type InnerPersistence } from './mqttSessions.ts';
import { subscriptionAllowed, venOfFilter } from './mqttTopics.ts';

export type { LoginLimits } from './mqttLimits.ts';
export type Authenticate = (authorization: string) => Promise<Principal>;

/** How the broker checks tokens and credentials (src/auth). */
export interface BrokerAuth {
  authenticate: Authenticate;
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

/** A connected session. */
interface Live {
  id: string;
  token: string;
  principal: Principal;
  rights: Rights;
  /** api_clients token_version of the token (null: a personal access token). */
  tokenVersion: number | null;
  persistent: boolean;
}

/** What preConnect decided, read by aedes' authenticate step (which sends the CONNACK). */
type Login = { refused: AuthenticateError } | { token: string; principal: Principal; ven: boolean };

/** CONNACK return codes (MQTT 3.1.1, 3.2.2.3). */
const IDENTIFIER_REJECTED = 2;
/** MQTT 3.1.1 has no "rate exceeded" code (MQTT 5's 0x9F): "server unavailable" says come back later. */
const SERVER_UNAVAILABLE = 3;
const BAD_CREDENTIALS = 4;
const NOT_AUTHORIZED = 5;
const MAX_CLIENT_ID = 256;

/** aedes' client's filters (its typings leave them out). */
function subscriptionsOf(client: Client): Record<string, unknown> {
  return (client as unknown as { subscriptions: Record<string, unknown> }).subscriptions;
}

function refusal(message: string, returnCode: number): { refused: AuthenticateError } {
  return { refused: Object.assign(new Error(message), { returnCode }) as AuthenticateError };
}

/** The token_version a JWT was issued with (its signature was verified by `authenticate`). */
function tokenVersionOf(token: string, principal: Principal): number | null {
  if (principal.clientRowId === null) return null;
  const { ver } = decodeJwt(token);
  return typeof ver === 'number' ? ver : null;
}

export class EmbeddedBroker {
  private readonly servers: net.Server[] = [];
  private readonly ports: number[] = [];
  private readonly live = new Map<Client, Live>();
  /** The connected client of each session id. */
  private readonly byId = new Map<string, Client>();
  private readonly logins = new WeakMap<Client, Login>();
  private readonly guards = new WeakMap<object, PacketGuard>();
  private readonly sockets = new Set<net.Socket>();
  private readonly rights: RightsCache;
  private readonly loginLimiter: LoginLimiter;
  private readonly counter: ConnectionCounter;
  private store!: SessionStore;
  private recheckTimer: NodeJS.Timeout | undefined;

  private constructor(
    readonly aedes: Aedes,
    private readonly options: BrokerOptions,
  ) {
    this.rights = new RightsCache(options.pool);
    this.loginLimiter = new LoginLimiter(options.limits, options.log);
    this.counter = new ConnectionCounter(options.maxConnectionsPerAddress ?? 1000);
  }

  static async start(options: BrokerOptions): Promise<EmbeddedBroker> {
    const aedes = await Aedes.createBroker({
      drainTimeout: 30_000,
      maxClientsIdLength: 128 + MAX_CLIENT_ID,
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
      broker.login(client, packet).then(
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
      return live && mayDeliver(live.rights, packet.topic, broker.store.about.get(packet.payload as Buffer)) ? packet : null;
    };
    aedes.on('clientError', (_client, err) => options.log.debug({ err: err.message }, 'MQTT client error'));
    aedes.on('connectionError', (_client, err) => options.log.debug({ err: err.message }, 'MQTT connection error'));
    try {
      const plain = net.createServer();
      plain.on('connection', (socket: net.Socket) => broker.accept(socket) && broker.serve(socket));
      await broker.listen(plain, options.port);
      if (options.tls) {
        const secure = tls.createServer({ key: options.tls.key, cert: options.tls.cert, minVersion: 'TLSv1.2', handshakeTimeout: options.connectTimeoutMs ?? 10_000 });
        secure.on('connection', (socket: net.Socket) => broker.accept(socket));
        secure.on('secureConnection', (socket: tls.TLSSocket) => broker.serve(socket));
        secure.on('tlsClientError', (err) => options.log.debug({ err: err.message }, 'MQTT TLS handshake failed'));
        await broker.listen(secure, options.tls.port);
      }
    } catch (err) {
      await broker.close();
      throw err;
    }
    broker.scheduleRecheck(Math.max(options.recheckMs, 100));
    return broker;
  }

  private async listen(server: net.Server, port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.servers.push(server);
    this.ports.push((server.address() as AddressInfo).port);
  }

  get port(): number {
    return this.ports[0] ?? 0;
  }

  /** The TLS listener's port (0: none). */
  get tlsPort(): number {
    return this.options.tls ? (this.ports[1] ?? 0) : 0;
  }

  /** Counts a TCP connection against its address's limit; closes it when over. */
  private accept(socket: net.Socket): boolean {
    const address = addressOf(socket);
    if (!this.counter.admit(address)) {
      this.options.log.debug({ address }, 'MQTT connection refused: too many from this address');
      socket.destroy();
      return false;
    }
    this.sockets.add(socket);
    socket.once('close', () => {
      this.counter.release(address);
      this.sockets.delete(socket);
    });
    return true;
  }

  /** Hands a connection to aedes behind the packet guard. */
  private serve(socket: net.Socket): void {
    const guard = new PacketGuard(this.options.maxConnectBytes ?? 4096, this.options.maxPacketBytes ?? 65_536);
    guardReads(socket, guard, (reason) => this.options.log.debug({ address: addressOf(socket), reason }, 'MQTT connection closed'));
    this.guards.set(socket, guard);
    const client = this.aedes.handle(socket, undefined as never);
    socket.once('close', () => this.ended(client));
  }

  /** Checks a CONNECT's token and rewrites its client id into the credential's namespace. */
  private async login(client: Client, packet: ConnectPacket): Promise<Login> {
    const address = addressOf(client.conn as net.Socket);
    const { username } = packet;
    // Clients do not publish: their will would never be published either.
    packet.will = undefined;
    if (this.loginLimiter.isBlocked(username, address)) return refusal('Too many failed logins; retry later', SERVER_UNAVAILABLE);
    const token = packet.password?.toString('utf8') ?? '';
    let login: Login;
    if (token === '') login = refusal('The password must be a VTN access token', BAD_CREDENTIALS);
    else {
      login = await this.options.auth.authenticate(`Bearer ${token}`).then(
        (principal): Login => {
          if (!principal.features.has('OpenADR')) return refusal('OpenADR is not enabled for this organization', NOT_AUTHORIZED);
          try {
            return { token, principal, ven: vtnCaller(principal).ven };
          } catch (err) {
            return refusal((err as Error).message, NOT_AUTHORIZED);
          }
        },
        (err: Error) => refusal(err.message, BAD_CREDENTIALS),
      );
    }
    if ('refused' in login) {
      if (await this.loginLimiter.failed(username, address)) return refusal('Too many failed logins; retry later', SERVER_UNAVAILABLE);
      return login;
    }
    const given = packet.clientId ?? '';
    if (given === '' && packet.clean === false) return refusal('A persistent session (clean session off) needs a client id', IDENTIFIER_REJECTED);
    if (given.length > MAX_CLIENT_ID) return refusal(`A client id has at most ${MAX_CLIENT_ID} characters`, IDENTIFIER_REJECTED);
    packet.clientId = `${login.principal.subject}/${given === '' ? randomUUID() : given}`;
    return login;
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
    const venId = rights.ven ? venOfFilter(subscription.topic, rights.organizationId) : undefined;
    // A VEN bound since the rights were read (just created, say): read them again.
    if (venId !== undefined && !rights.vens.has(venId)) await this.rights.refresh([rights]);
    return subscriptionAllowed(subscription.topic, rights.organizationId, rights.ven, new Set(rights.vens.keys()));
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

  /** Publishes QoS 1 messages in order; resolves when aedes has routed them all. A change of a
   * VEN or a resource first updates the rights of its organization's VEN clients. */
  async publish(messages: readonly { topic: string; payload: string | Buffer; about?: MessageAbout }[]): Promise<void> {
    if (this.aedes.closed) throw new Error('the embedded MQTT broker is closed');
    const changed = new Set<number>();
    const packets = messages.map((m) => {
      const payload = typeof m.payload === 'string' ? Buffer.from(m.payload) : m.payload;
      if (m.about) {
        this.store.about.set(payload, m.about);
        if (m.about.kind === 'VEN' || m.about.kind === 'RESOURCE') changed.add(Number(m.topic.split('/')[1]));
      }
      return { topic: m.topic, payload };
    });
    if (changed.size > 0) await this.rightsChanged(changed);
    await Promise.all(
      packets.map(
        (p) =>
          new Promise<void>((resolve, reject) => {
            this.aedes.publish({ cmd: 'publish', topic: p.topic, payload: p.payload, qos: 1, retain: false, dup: false }, (err) => (err ? reject(err) : resolve()));
          }),
      ),
    );
  }

  /** Reads the VEN clients' rights in these organizations again, and drops the sessions
   * subscribed to a VEN no longer bound to their credential (they may subscribe again to what
   * is still theirs). */
  private async rightsChanged(organizations: ReadonlySet<number>): Promise<void> {
    const list = this.rights.venRights(organizations);
    if (list.length === 0) return;
    await this.rights.refresh(list);
    const lost = (rights: Rights, topics: Iterable<string>) => {
      for (const topic of topics) {
        const venId = venOfFilter(topic, rights.organizationId);
        if (venId !== undefined && !rights.vens.has(venId)) return venId;
      }
      return undefined;
    };
    for (const [client, live] of [...this.live]) {
      const venId = live.rights.ven && organizations.has(live.rights.organizationId) ? lost(live.rights, Object.keys(subscriptionsOf(client))) : undefined;
      if (venId !== undefined) await this.dropSession(live.id, `VEN ${venId} is no longer bound to its credential`);
    }
    for (const session of [...this.store.all()]) {
      if (session.connected || !session.rights.ven || !organizations.has(session.rights.organizationId)) continue;
      const topics = (await this.store.subscriptionsByClient({ id: session.id })).map((s) => s.topic);
      const venId = lost(session.rights, topics);
      if (venId !== undefined) await this.dropSession(session.id, `VEN ${venId} is no longer bound to its credential`);
    }
  }

  private scheduleRecheck(everyMs: number): void {
    this.recheckTimer = setTimeout(() => {
      this.loginLimiter.sweep();
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

  /** The periodic check: tokens of connected sessions (one query), then the credentials behind
   * the failing ones and behind the persistent sessions that are away (one more query). */
  async recheckSessions(): Promise<void> {
    const now = Date.now();
    const away = [...this.store.all()].filter((s) => !s.connected);
    const expiry = this.options.sessionExpiryMs ?? 7 * 86_400_000;
    for (const s of away) if (now - s.lastSeen > expiry) await this.dropSession(s.id, 'it was not connected for MQTT_SESSION_EXPIRY_SECONDS');
    const lives = [...this.live.values()];
    const awayUsers = away.filter((s) => s.clientRowId === null && this.store.get(s.id));
    if (lives.length === 0 && away.length === 0) return this.rights.retain([]);
    const verdicts = await this.options.auth.recheck([...lives.map((l) => l.token), ...awayUsers.map((s) => s.token)]);
    const failing = lives.filter((l) => {
      const p = verdicts.get(l.token);
      return !p || !p.features.has('OpenADR') || p.organizationId !== l.rights.organizationId;
    });
    const rowIds = new Set<number>();
    for (const l of failing) if (l.principal.clientRowId !== null) rowIds.add(l.principal.clientRowId);
    for (const s of away) if (s.clientRowId !== null && this.store.get(s.id)) rowIds.add(s.clientRowId);
    const credentials = rowIds.size > 0 ? await this.options.auth.credentials([...rowIds]) : new Map<number, { tokenVersion: number; features: string[] }>();
    const revoked = (rowId: number | null, version: number | null, token: string) => {
      if (rowId === null) return !verdicts.get(token)?.features.has('OpenADR');
      const c = credentials.get(rowId);
      return !c || c.tokenVersion !== version || !c.features.includes('OpenADR');
    };
    for (const l of failing) {
      if (revoked(l.principal.clientRowId, l.tokenVersion, l.token)) await this.dropSession(l.id, 'its credential was deleted or rotated, or lost OpenADR');
      else {
        const client = this.byId.get(l.id);
        this.options.log.info({ client: l.id }, 'MQTT connection closed: its access token expired');
        client?.close();
      }
    }
    for (const s of away) if (this.store.get(s.id) && revoked(s.clientRowId, s.tokenVersion, s.token)) await this.dropSession(s.id, 'its credential was deleted or rotated, or lost OpenADR');
    this.rights.retain([...[...this.live.values()].map((l) => l.rights), ...[...this.store.all()].map((s) => s.rights)]);
  }

  async close(): Promise<void> {
    clearTimeout(this.recheckTimer);
    const closed = this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())));
    await new Promise<void>((resolve) => this.aedes.close(() => resolve()));
    // Connections aedes does not hold (a TLS handshake under way, a refused login closing).
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(closed);
  }
}
