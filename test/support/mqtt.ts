// Support for the MQTT tests: real `mqtt` clients on the embedded broker (from a chosen local
// address when a test needs several client addresses: 127.0.0.0/8 is all loopback on Linux),
// the SUBACK codes a broker grants, and raw CONNECT packets for what `mqtt` refuses to send.
import net from 'node:net';
import mqtt, { MqttClient, type IClientOptions } from 'mqtt';

export interface Received {
  topic: string;
  body: any;
}

export interface Session {
  client: MqttClient;
  messages: Received[];
  /** Whether the broker said it kept a session for this client id (CONNACK). */
  sessionPresent: boolean;
  closed: boolean;
}

export interface ConnectOptions {
  username?: string;
  password?: string;
  clientId?: string;
  clean?: boolean;
  /** Source address of the TCP connection (default: the system's choice, 127.0.0.1). */
  localAddress?: string;
  protocol?: 'mqtt' | 'mqtts';
  /** For mqtts: the CA to trust. */
  ca?: string | Buffer;
  /** Called with each message as it arrives (from the first byte on). */
  onMessage?: (topic: string, body: any) => void;
}

/** Connects (no reconnection), collecting every message from the first byte on. Rejects with
 * the CONNACK return code in `code` when refused. */
export function connectSession(port: number, options: ConnectOptions): Promise<Session> {
  const opts: IClientOptions = {
    host: '127.0.0.1',
    port,
    protocol: options.protocol ?? 'mqtt',
    username: options.username,
    password: options.password,
    clientId: options.clientId,
    clean: options.clean ?? true,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    ca: options.ca,
    rejectUnauthorized: options.ca !== undefined,
    servername: 'localhost',
  };
  const client = options.localAddress
    ? new MqttClient(() => net.connect({ host: '127.0.0.1', port, localAddress: options.localAddress }), opts)
    : mqtt.connect(opts);
  const session: Session = { client, messages: [], sessionPresent: false, closed: false };
  client.on('message', (topic, payload) => {
    let body: unknown;
    try {
      body = JSON.parse(payload.toString());
    } catch {
      body = payload.toString();
    }
    session.messages.push({ topic, body });
    options.onMessage?.(topic, body);
  });
  client.on('close', () => (session.closed = true));
  return new Promise((resolve, reject) => {
    client.once('connect', (connack) => {
      session.sessionPresent = connack.sessionPresent;
      resolve(session);
    });
    client.once('error', (err) => {
      client.end(true);
      reject(err);
    });
    client.once('close', () => reject(Object.assign(new Error('connection closed before CONNACK'), { code: -1 })));
  });
}

/** The CONNACK return code a login gets (0: accepted; -1: closed without one). */
export async function connackCode(port: number, options: ConnectOptions): Promise<number> {
  try {
    const s = await connectSession(port, options);
    await s.client.endAsync(true);
    return 0;
  } catch (err) {
    return (err as { code?: number }).code ?? -1;
  }
}

/** The QoS the broker grants each filter of one SUBSCRIBE (128: refused). */
export async function granted(client: MqttClient, filters: string[]): Promise<number[]> {
  try {
    return (await client.subscribeAsync(filters, { qos: 1 })).map((g) => g.qos);
  } catch (err) {
    const packet = (err as { packet?: { granted?: number[] } }).packet;
    if (packet?.granted) return packet.granted;
    throw err;
  }
}

function mqttString(value: string | Buffer): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  const length = Buffer.alloc(2);
  length.writeUInt16BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

export function remainingLength(n: number): Buffer {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return Buffer.from(out);
}

/** A raw MQTT 3.1.1 CONNECT (the `mqtt` package will not send a password without a user name). */
export function connectPacket(options: { clientId: string; username?: string; password?: string; clean?: boolean; keepalive?: number }): Buffer {
  let flags = options.clean === false ? 0 : 0x02;
  if (options.username !== undefined) flags |= 0x80;
  if (options.password !== undefined) flags |= 0x40;
  const keepalive = Buffer.alloc(2);
  keepalive.writeUInt16BE(options.keepalive ?? 30);
  const body = Buffer.concat([
    mqttString('MQTT'),
    Buffer.from([4, flags]),
    keepalive,
    mqttString(options.clientId),
    ...(options.username !== undefined ? [mqttString(options.username)] : []),
    ...(options.password !== undefined ? [mqttString(options.password)] : []),
  ]);
  return Buffer.concat([Buffer.from([0x10]), remainingLength(body.length), body]);
}

/** Sends raw bytes and resolves with what the broker answered: once `enough` bytes came, the
 * connection closed, or `waitMs` passed. */
export function rawExchange(port: number, bytes: Buffer, waitMs = 2000, enough = 4): Promise<{ reply: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ reply: Buffer.concat(chunks), closed });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (Buffer.concat(chunks).length >= enough) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.write(bytes);
  });
}

/** A raw MQTT 3.1.1 SUBSCRIBE of `filters` at QoS 1. */
export function subscribePacket(packetId: number, filters: string[]): Buffer {
  const id = Buffer.alloc(2);
  id.writeUInt16BE(packetId);
  const body = Buffer.concat([id, ...filters.flatMap((f) => [mqttString(f), Buffer.from([1])])]);
  return Buffer.concat([Buffer.from([0x82]), remainingLength(body.length), body]);
}

/** A raw connection for what the `mqtt` package will not send: write bytes, wait for what came. */
export interface RawSession {
  write(bytes: Buffer): void;
  /** Everything received so far. */
  received(): Buffer;
  /** Resolves once `enough(received)` holds; rejects after `waitMs`. */
  until(what: string, enough: (received: Buffer) => boolean, waitMs?: number): Promise<Buffer>;
  close(): void;
}

export function rawSession(port: number): Promise<RawSession> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let data = Buffer.alloc(0);
    const waiters = new Set<() => void>();
    socket.on('data', (c: Buffer) => {
      data = Buffer.concat([data, c]);
      for (const w of waiters) w();
    });
    socket.once('error', reject);
    socket.once('connect', () =>
      resolve({
        write: (bytes) => void socket.write(bytes),
        received: () => data,
        until: (what, enough, waitMs = 5000) =>
          new Promise((ok, fail) => {
            const check = () => {
              if (!enough(data)) return;
              waiters.delete(check);
              clearTimeout(timer);
              ok(data);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`${what}: not received within ${waitMs} ms (${data.length} bytes came)`));
            }, waitMs);
            waiters.add(check);
            check();
          }),
        close: () => void socket.destroy(),
      }),
    );
  });
}
