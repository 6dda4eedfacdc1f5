// The embedded MQTT broker (aedes, in this process, on MQTT_PORT): what 3.1 VENs behind NAT
// connect to instead of offering a webhook. Clients authenticate with a VTN access token as the
// password (any username; OpenADR 3.1's OAUTH2_BEARER_TOKEN method), may not publish (only the
// VTN does, from its outbox), and may subscribe only to what the 3.1 privacy rules let them read
// (mqttTopics.ts): a VEN client under its own VENs' topics, a business-logic client anywhere in
// its organization. Access is checked at CONNECT and at every SUBSCRIBE (so a revoked or expired
// token cannot add subscriptions; a session already subscribed keeps them until it reconnects).
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import type { Logger } from 'pino';
import type { Principal } from '../http/types.ts';
import type { Pool } from '../store/database.ts';
import { vtnCaller, type VtnCaller } from './access.ts';
import { subscriptionAllowed, venOfFilter } from './mqttTopics.ts';

export type Authenticate = (authorization: string) => Promise<Principal>;

interface Session {
  token: string;
}

const sessions = new WeakMap<Client, Session>();

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

  private constructor(readonly aedes: Aedes) {}

  static async start(options: { host: string; port: number; pool: Pool; authenticate: Authenticate; log: Logger }): Promise<EmbeddedBroker> {
    const { pool, authenticate, log } = options;
    const aedes = await Aedes.createBroker({ drainTimeout: 30_000, maxClientsIdLength: 128, connectTimeout: 10_000 });
    const broker = new EmbeddedBroker(aedes);
    aedes.authenticate = (client, _username, password, done) => {
      const token = password?.toString('utf8') ?? '';
      if (token === '' || token.length > 8192) return done(authError('The password must be a VTN access token', 4), false);
      callerOf(authenticate, token).then(
        () => {
          sessions.set(client, { token });
          done(null, true);
        },
        (err: Error) => done(authError(err.message, (err as { status?: number }).status === 401 || /token/i.test(err.message) ? 4 : 5), false),
      );
    };
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
    return broker;
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
    const server = this.server;
    if (server) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        this.aedes.close();
      });
    } else await new Promise<void>((resolve) => this.aedes.close(() => resolve()));
  }
}
