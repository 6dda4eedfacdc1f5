// Regression: the embedded MQTT broker read whatever an unauthenticated connection sent: a
// CONNECT header announcing 268,435,455 bytes was answered by buffering the bytes that followed
// until the CONNECT deadline (10 s), any number of such connections from one address were
// accepted, and no packet had a maximum size, before or after authentication. Now a packet
// larger than allowed (a CONNECT above MQTT_MAX_CONNECT_BYTES, any packet above
// MQTT_MAX_PACKET_BYTES) closes the connection as soon as its header is read, an address has at
// most MQTT_MAX_CONNECTIONS_PER_ADDRESS connections, and a CONNECT must arrive within
// MQTT_CONNECT_TIMEOUT_MS.
import net from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../../src/http/rateLimit.ts';
import { EmbeddedBroker } from '../../src/vtn/mqttBroker.ts';
import { connectSession, remainingLength } from '../support/mqtt.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { VEN_SCOPES, vtnClient, waitFor, type VtnClient } from '../support/vtn.ts';

const CONNECTIONS_PER_ADDRESS = 5;

/** Opens a raw connection from `localAddress`; resolves once the server accepted or closed it. */
function rawSocket(port: number, localAddress = '127.0.0.1'): Promise<{ socket: net.Socket; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    let closed = false;
    const socket = net.connect({ host: '127.0.0.1', port, localAddress });
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, closed: () => closed }));
    socket.once('error', reject);
  });
}

describe('what an MQTT connection may send', () => {
  let t: TestApp;
  let ven: VtnClient;

  beforeAll(async () => {
    t = await startTestApp({ MQTT_MAX_CONNECTIONS_PER_ADDRESS: String(CONNECTIONS_PER_ADDRESS), MQTT_MAX_PACKET_BYTES: '1024' });
    ven = await vtnClient(t.api, t.adminToken, VEN_SCOPES);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('closes a connection whose CONNECT announces more than the limit, on its header', async () => {
    const { socket, closed } = await rawSocket(t.app.mqttPort);
    // CONNECT, remaining length 268,435,455 (the largest MQTT can say), then filler.
    socket.write(Buffer.concat([Buffer.from([0x10]), remainingLength(268_435_455), Buffer.alloc(64 * 1024, 0x61)]));
    await waitFor('the connection to be closed', closed, 5000);
  });

  it('accepts at most MQTT_MAX_CONNECTIONS_PER_ADDRESS connections from one address', async () => {
    const held = [];
    for (let i = 0; i < CONNECTIONS_PER_ADDRESS; i++) held.push(await rawSocket(t.app.mqttPort, '127.0.0.3'));
    const extra = await rawSocket(t.app.mqttPort, '127.0.0.3');
    await waitFor('the connection over the limit to be closed', extra.closed, 5000);
    expect(held.some((h) => h.closed())).toBe(false);
    // Another address is not affected; closing one frees a slot.
    const elsewhere = await connectSession(t.app.mqttPort, { username: ven.clientId, password: ven.token, localAddress: '127.0.0.4' });
    await elsewhere.client.endAsync();
    held.pop()!.socket.destroy();
    await waitFor('a freed slot', async () => {
      const s = await connectSession(t.app.mqttPort, { username: ven.clientId, password: ven.token, localAddress: '127.0.0.3' }).catch(() => undefined);
      await s?.client.endAsync();
      return s !== undefined;
    }, 5000);
    for (const h of held) h.socket.destroy();
  });

  it('closes an authenticated connection sending a packet above MQTT_MAX_PACKET_BYTES', async () => {
    const s = await connectSession(t.app.mqttPort, { username: ven.clientId, password: ven.token });
    s.client.subscribe(`openadr3/${ven.organizationId}/vens/${'x'.repeat(2000)}/events/+`, { qos: 1 });
    await waitFor('the connection to be closed', () => s.closed, 5000);
    s.client.end(true);
  });

  it('closes a connection that sends no CONNECT within the deadline', async () => {
    const store = new MemoryRateLimitStore();
    const broker = await EmbeddedBroker.start({
      host: '127.0.0.1',
      port: 0,
      pool: t.app.pool,
      auth: { authenticate: async () => Promise.reject(new Error('no')), recheck: async () => new Map(), credentials: async () => new Map() },
      limits: { store, perClient: [{ seconds: 60, max: 30 }], perAddress: [{ seconds: 60, max: 30 }] },
      recheckMs: 1000,
      connectTimeoutMs: 300,
      log: pino({ level: 'silent' }),
    });
    try {
      const { closed } = await rawSocket(broker.port);
      await waitFor('the silent connection to be closed', closed, 5000);
    } finally {
      await broker.close();
      store.close();
    }
  });
});
