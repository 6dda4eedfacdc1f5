// The embedded MQTT broker (aedes, in this process, on MQTT_PORT): what 3.1 VENs behind NAT
// connect to instead of offering a webhook. Clients authenticate with a VTN access token as the
// password (any username; OpenADR 3.1's OAUTH2_BEARER_TOKEN method), may not publish (only the
// VTN does, from its outbox), and may subscribe only to what the 3.1 privacy rules let them read
// (mqttTopics.ts): a VEN client under its own VENs' topics, a business-logic client anywhere in
// its organization. Access is checked at CONNECT, at every SUBSCRIBE, and for every open session
// every AUTH_CACHE_MS (one query for all of them): a session whose token expired or was revoked
// (client deleted, secret rotated) or whose organization lost OpenADR is disconnected. Failed
// CONNECTs are limited like the token endpoint's requests (per client id given as username, else
// per address); over the limit, CONNECT is refused with return code 3 until the window resets.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import type { Logger } from 'pino';
import type { RateLimitStore } from '../http/rateLimit.ts';
import type { Principal, RateLimitWindow } from '../http/types.ts';
import type { Pool } from '../store/database.ts';
import { vtnCaller, type VtnCaller } from './access.ts';
import { subscriptionAllowed, venOfFilter } from './mqttTopics.ts';

export type Authenticate = (authorization: string) => Promise<Principal>;

/** How the broker checks tokens (src/auth/authenticator.ts). */
export interface BrokerAuth {
  authenticate: Authenticate;
  /** Whether each token still authenticates, read now (undefined: expired, revoked, unknown). */
  recheck(tokens: Iterable<string>): Promise<Map<string, Principal | undefined>>;
}

/** The token endpoint's quotas, applied to failed CONNECTs (separate counters). */
export interface LoginLimits {
  store: RateLimitStore;
  perClient: readonly RateLimitWindow[];
  perAddress: readonly RateLimitWindow[];
  /** Whether a client id exists (keys the per-client quota, as the token endpoint does). */
  clientExists(clientId: string): Promise<boolean>;
}

interface Session {
  token: string;
  organizationId: number;
  /** The credential's client id, for a VEN client (else undefined). */
  venClientId: string | undefined;
  /** The VENs a VEN client's granted subscriptions name (checked again with its token). */
  venIds: Set<string>;
}

const sessions = new WeakMap<Client, Session>();

/** CONNACK return codes (MQTT 3.1.1, 3.2.2.3). */
const BAD_CREDENTIALS = 4;
const NOT_AUTHORIZED = 5;
/** MQTT 3.1.1 has no "rate exceeded" code (MQTT 5's 0x9F): "server unavailable" says come back later. */
const SERVER_UNAVAILABLE = 3;

function authError(message: string, returnCode: number): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

/** The VTN caller of a token, or an error saying why it may not use MQTT. */
async function callerOf(authenticate: Authenticate, token: string): Promise<VtnCaller> {
  const principal = await authenticate(`Bearer ${token}`);
  if (!principal.features.has('OpenADR')) throw new Error('OpenADR is not enabled for this organization');
  return vtnCaller(principal);
}

export class EmbeddedBroker {
  private server: net.Server | undefined;
  private port_ = 0;
  /** Sessions that completed CONNECT and are not yet disconnected. */
  private readonly connected = new Set<Client>();
  /** Login-limit keys over their quota, until when (epoch ms). */
  private readonly blocked = new Map<string, number>();
  private recheckTimer: NodeJS.Timeout | undefined;

  private constructor(
    readonly aedes: Aedes,
    private readonly auth: BrokerAuth,
    private readonly limits: LoginLimits,
    private readonly pool: Pool,
    private readonly log: Logger,
  ) {}

  static async start(options: {
    host: string;
    port: number;
    pool: Pool;
    auth: BrokerAuth;
    limits: LoginLimits;
    /** How often open sessions' tokens are checked again (AUTH_CACHE_MS). */
    recheckMs: number;
    /** Messages routed at once (MQTT_BROKER_CONCURRENCY; aedes' default 100). */
    concurrency?: number;
    log: Logger;
  }): Promise<EmbeddedBroker> {
    const { pool, log } = options;
    const authenticate = options.auth.authenticate;
    const aedes = await Aedes.createBroker({ drainTimeout: 30_000, maxClientsIdLength: 128, connectTimeout: 10_000, concurrency: options.concurrency ?? 100 });
    const broker = new EmbeddedBroker(aedes, options.auth, options.limits, pool, log);
    aedes.authenticate = (client, username, password, done) => {
      const token = password?.toString('utf8') ?? '';
      const address = (client.conn as Partial<net.Socket>).remoteAddress ?? 'unknown';
      const refuse = (err: Error, returnCode: number) =>
        broker.countFailure(username, address).then(
          (over) => done(over ? authError('Too many failed logins; retry later', SERVER_UNAVAILABLE) : authError(err.message, returnCode), false),
          (limitErr: Error) => {
            log.warn({ err: limitErr.message }, 'MQTT login limit not updated');
            done(authError(err.message, returnCode), false);
          },
        );
      broker.isBlocked(username, address).then(
        (blocked) => {
          if (blocked) return done(authError('Too many failed logins; retry later', SERVER_UNAVAILABLE), false);
          if (token === '' || token.length > 8192) return void refuse(new Error('The password must be a VTN access token'), BAD_CREDENTIALS);
          callerOf(authenticate, token).then(
            (caller) => {
              sessions.set(client, { token, organizationId: caller.organizationId, venClientId: caller.ven ? caller.clientId : undefined, venIds: new Set() });
              done(null, true);
            },
            (err: Error) => void refuse(err, (err as { status?: number }).status === 401 || /token/i.test(err.message) ? BAD_CREDENTIALS : NOT_AUTHORIZED),
          );
        },
        (err: Error) => done(authError(err.message, SERVER_UNAVAILABLE), false),
      );
    };
    aedes.on('client', (client) => {
      if (sessions.has(client)) broker.connected.add(client);
    });
    aedes.on('clientDisconnect', (client) => broker.connected.delete(client));
    // Only the VTN publishes (internal publishes have no client).
    aedes.authorizePublish = (client, _packet, callback) => callback(client ? new Error('Clients do not publish on the VTN broker') : null);
    aedes.authorizeSubscribe = (client, subscription, callback) => {
      const session = sessions.get(client);
      if (!session) return callback(null, null);
      callerOf(authenticate, session.token)
        .then(async (caller) => {
          // A VEN client's filter must name one of its VENs (mqttTopics.ts): only that VEN is looked up.
          let own = new Set<string>();
          const venId = caller.ven ? venOfFilter(subscription.topic, caller.organizationId) : undefined;
          if (venId !== undefined) {
            const { rows } = await pool.query<{ id: string }>('SELECT id FROM vtn_vens WHERE organization_id = $1 AND client_id = $2 AND id = $3', [caller.organizationId, caller.clientId, venId]);
            own = new Set(rows.map((r) => r.id));
          }
          const allowed = subscriptionAllowed(subscription.topic, caller.organizationId, caller.ven, own);
          if (allowed && venId !== undefined) session.venIds.add(venId);
          callback(null, allowed ? subscription : null);
        })
        .catch((err: Error) => {
          log.debug({ err: err.message }, 'MQTT subscription refused');
          callback(null, null);
        });
    };
    aedes.on('clientError', (_client, err) => log.debug({ err: err.message }, 'MQTT client error'));
    const server = net.createServer(aedes.handle);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, options.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      throw err;
    }
    broker.server = server;
    broker.port_ = (server.address() as AddressInfo).port;
    broker.scheduleRecheck(Math.max(options.recheckMs, 100));
    return broker;
  }

  private blockedUntil(key: string, now: number): boolean {
    const until = this.blocked.get(key);
    if (until === undefined) return false;
    if (until > now) return true;
    this.blocked.delete(key);
    return false;
  }

  /** Whether a CONNECT is over its failed-login quota: that of the client id given as username,
   * or, for a username that is not a client id, its address's (as the token endpoint keys them). */
  private async isBlocked(username: string | undefined, address: string): Promise<boolean> {
    const now = Date.now();
    if (username && this.blockedUntil(`client:${username}`, now)) return true;
    if (!this.blockedUntil(`addr:${address}`, now)) return false;
    return !(username && username.length <= 200 && (await this.limits.clientExists(username)));
  }

  /** Counts a failed CONNECT against its quota (the token endpoint's keys: the client id given as
   * username when it exists, else the address); the key is blocked once over it (answers true:
   * this attempt was over the quota). */
  private async countFailure(username: string | undefined, address: string): Promise<boolean> {
    const { store, perClient, perAddress, clientExists } = this.limits;
    const known = username !== undefined && username !== '' && username.length <= 200 && (await clientExists(username));
    const key = known ? `client:${username}` : `addr:${address}`;
    const windows = known ? perClient : perAddress;
    const now = Date.now();
    const result = await store.consume(`mqtt-login:${key}`, windows, now);
    if (result.allowed) return false;
    const until = Math.max(...result.windows.filter((w) => w.count >= w.max).map((w) => w.resetAt));
    if (!this.blocked.has(key)) this.log.warn({ key, until: new Date(until).toISOString() }, 'too many failed MQTT logins; refusing CONNECTs until the window resets');
    this.blocked.set(key, until);
    return true;
  }

  private scheduleRecheck(everyMs: number): void {
    this.recheckTimer = setTimeout(() => {
      const now = Date.now();
      for (const [key, until] of this.blocked) if (until <= now) this.blocked.delete(key);
      this.recheckSessions().then(
        () => !this.aedes.closed && this.scheduleRecheck(everyMs),
        (err: Error) => {
          this.log.warn({ err: err.message }, 'MQTT sessions not re-checked; retrying');
          if (!this.aedes.closed) this.scheduleRecheck(everyMs);
        },
      );
    }, everyMs);
    this.recheckTimer.unref();
  }

  /** Disconnects the sessions whose token no longer authenticates (expired, revoked, client
   * deleted, secret rotated) or whose organization lost OpenADR, and the VEN clients' sessions
   * subscribed to a VEN no longer bound to their credential (deleted, or bound to another): they
   * may reconnect and subscribe to what is still theirs. */
  async recheckSessions(): Promise<void> {
    if (this.connected.size === 0) return;
    const clients = [...this.connected];
    const verdicts = await this.auth.recheck(clients.map((c) => sessions.get(c)!.token));
    const close = (client: Client, why: string) => {
      this.connected.delete(client);
      this.log.info({ client: client.id }, `MQTT session closed: ${why}`);
      client.close();
    };
    const venSessions: Client[] = [];
    for (const client of clients) {
      const session = sessions.get(client)!;
      const principal = verdicts.get(session.token);
      if (!principal || !principal.features.has('OpenADR') || principal.organizationId !== session.organizationId) close(client, 'its access token expired or was revoked');
      else if (session.venClientId !== undefined && session.venIds.size > 0) venSessions.push(client);
    }
    if (venSessions.length === 0) return;
    const orgs: number[] = [];
    const ids: string[] = [];
    for (const client of venSessions) {
      const session = sessions.get(client)!;
      for (const id of session.venIds) {
        orgs.push(session.organizationId);
        ids.push(id);
      }
    }
    const { rows } = await this.pool.query<{ key: string }>(
      `SELECT v.organization_id || '/' || v.id || '/' || v.client_id AS key FROM vtn_vens v
       JOIN unnest($1::int[], $2::text[]) AS q(org, id) ON v.organization_id = q.org AND v.id = q.id WHERE v.client_id IS NOT NULL`,
      [orgs, ids],
    );
    const bound = new Set(rows.map((r) => r.key));
    for (const client of venSessions) {
      const session = sessions.get(client)!;
      for (const id of session.venIds) {
        if (!bound.has(`${session.organizationId}/${id}/${session.venClientId}`)) {
          close(client, `VEN ${id} is no longer bound to its credential`);
          break;
        }
      }
    }
  }

  get port(): number {
    return this.port_;
  }

  /** Publishes QoS 1 messages in order; resolves when aedes has routed them all. */
  publish(messages: readonly { topic: string; payload: string | Buffer }[]): Promise<void> {
    if (this.aedes.closed) return Promise.reject(new Error('the embedded MQTT broker is closed'));
    const sent = messages.map(
      (m) =>
        new Promise<void>((resolve, reject) => {
          this.aedes.publish({ cmd: 'publish', topic: m.topic, payload: m.payload, qos: 1, retain: false, dup: false }, (err) => (err ? reject(err) : resolve()));
        }),
    );
    return Promise.all(sent).then(() => undefined);
  }

  async close(): Promise<void> {
    clearTimeout(this.recheckTimer);
    const server = this.server;
    if (server) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        this.aedes.close();
      });
    } else await new Promise<void>((resolve) => this.aedes.close(() => resolve()));
  }
}
