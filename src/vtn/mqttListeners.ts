// The embedded broker's sockets: a plain listener (MQTT_PORT) and, with a key and a certificate,
// a TLS one (MQTT_TLS_PORT, TLS 1.2 or later, the handshake within the CONNECT deadline), both on
// MQTT_HOST. Every connection is counted against its address's limit from the TCP accept, before
// any byte is read, and is handed to the broker behind a packet guard (mqttLimits.ts).
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { Logger } from 'pino';
import { addressOf, ConnectionCounter, guardReads, PacketGuard } from './mqttLimits.ts';

export interface ListenerOptions {
  host: string;
  port: number;
  tls?: { port: number; key: Buffer; cert: Buffer };
  connectTimeoutMs: number;
  maxConnectionsPerAddress: number;
  maxConnectBytes: number;
  maxPacketBytes: number;
  log: Logger;
}

export class Listeners {
  private readonly servers: net.Server[] = [];
  private readonly ports: number[] = [];
  private readonly sockets = new Set<net.Socket>();
  private readonly counter: ConnectionCounter;

  private constructor(
    private readonly options: ListenerOptions,
    private readonly serve: (socket: net.Socket, guard: PacketGuard) => void,
  ) {
    this.counter = new ConnectionCounter(options.maxConnectionsPerAddress);
  }

  /** Listens; `serve` gets each accepted connection with its guard (set `authenticated` on it
   * once the CONNECT is accepted). */
  static async start(options: ListenerOptions, serve: (socket: net.Socket, guard: PacketGuard) => void): Promise<Listeners> {
    const listeners = new Listeners(options, serve);
    try {
      const plain = net.createServer();
      plain.on('connection', (socket: net.Socket) => listeners.accept(socket) && listeners.guarded(socket));
      await listeners.listen(plain, options.port);
      if (options.tls) {
        const secure = tls.createServer({ key: options.tls.key, cert: options.tls.cert, minVersion: 'TLSv1.2', handshakeTimeout: options.connectTimeoutMs });
        secure.on('connection', (socket: net.Socket) => listeners.accept(socket));
        secure.on('secureConnection', (socket: tls.TLSSocket) => listeners.guarded(socket));
        secure.on('tlsClientError', (err) => options.log.debug({ err: err.message }, 'MQTT TLS handshake failed'));
        await listeners.listen(secure, options.tls.port);
      }
    } catch (err) {
      await listeners.close();
      throw err;
    }
    return listeners;
  }

  get port(): number {
    return this.ports[0] ?? 0;
  }

  /** The TLS listener's port (0: none). */
  get tlsPort(): number {
    return this.options.tls ? (this.ports[1] ?? 0) : 0;
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

  private guarded(socket: net.Socket): void {
    const guard = new PacketGuard(this.options.maxConnectBytes, this.options.maxPacketBytes);
    guardReads(socket, guard, (reason) => this.options.log.debug({ address: addressOf(socket), reason }, 'MQTT connection closed'));
    this.serve(socket, guard);
  }

  /** Stops listening; `closing` ends what the broker holds, then every other connection goes. */
  async close(closing: () => Promise<void> = async () => undefined): Promise<void> {
    const closed = this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())));
    await closing();
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(closed);
  }
}
