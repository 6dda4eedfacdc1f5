// MQTT notifications through an external broker (MQTT_URL): Debian's mosquitto, started here
// with persistence on a free port. While the broker is down, notifications wait in the outbox
// (vtn_mqtt_messages, pending); when it is back they are published in order and a subscriber
// with a persistent session receives every one: a broker restart loses nothing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, vtnClient, waitFor, type VtnClient } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';
const MOSQUITTO = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].find((p) => fs.existsSync(p)) ?? (spawnSync('which', ['mosquitto']).stdout?.toString().trim() || undefined);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

class Mosquitto {
  private child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    private readonly dir: string,
  ) {
    fs.writeFileSync(
      path.join(dir, 'mosquitto.conf'),
      [`listener ${port} 127.0.0.1`, 'allow_anonymous true', 'persistence true', `persistence_location ${dir}/`, 'autosave_interval 1', `pid_file ${dir}/pid`].join('\n') + '\n',
    );
    // mosquitto drops root privileges to its own user: the folder must be writable by it.
    fs.chmodSync(dir, 0o777);
  }

  async start(): Promise<void> {
    this.child = spawn(MOSQUITTO!, ['-c', path.join(this.dir, 'mosquitto.conf')], { stdio: 'ignore' });
    await waitFor('mosquitto listening', () => new Promise<boolean>((resolve) => {
      const s = net.connect(this.port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.on('error', () => resolve(false));
    }), 10_000);
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

describe.skipIf(!MOSQUITTO)('MQTT notifications through an external broker (mosquitto; skipped when it is not installed)', () => {
  let t: TestApp;
  let broker: Mosquitto;
  let bl: VtnClient;
  let dir: string;
  let subscriber: MqttClient | undefined;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-mosquitto-'));
    broker = new Mosquitto(await freePort(), dir);
    await broker.start();
    t = await startTestApp({ MQTT_URL: `mqtt://127.0.0.1:${broker.port}`, VTN_DISPATCH_POLL_MS: '100' });
    bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
  });
  afterAll(async () => {
    await subscriber?.endAsync(true).catch(() => undefined);
    await t?.close();
    await broker?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('announces the external broker and publishes to it', async () => {
    const notifiers = await expectStatus(t.api.get(`${V31}/notifiers`, bl.token), 200);
    expect(notifiers.MQTT.URIS).toEqual([`mqtt://127.0.0.1:${broker.port}`]);
    expect(t.app.mqttPort).toBe(0);
  });

  it('keeps notifications in the outbox while the broker is down and sends them, in order, when it is back', async () => {
    const program = await expectStatus(t.api.post(`${V31}/programs`, { programName: 'external' }, bl.token), 201);
    const { topics } = await expectStatus(t.api.get(`${V31}/notifiers/mqtt/topics/programs/${program.id}/events`, bl.token), 200);
    const received: { operation: string; eventName: string }[] = [];
    subscriber = await mqtt.connectAsync(`mqtt://127.0.0.1:${broker.port}`, { clientId: 'flex-test-subscriber', clean: false, reconnectPeriod: 200 });
    subscriber.on('message', (_topic, payload) => {
      const n = JSON.parse(payload.toString());
      received.push({ operation: n.operation, eventName: n.object.eventName });
    });
    await subscriber.subscribeAsync(topics.ALL, { qos: 1 });

    const first = await expectStatus(t.api.post(`${V31}/events`, { programID: program.id, eventName: 'before' }, bl.token), 201);
    await waitFor('the first event', () => received.length === 1);

    await broker.stop();
    const during: string[] = [];
    for (let i = 0; i < 3; i += 1) during.push((await expectStatus(t.api.post(`${V31}/events`, { programID: program.id, eventName: `during ${i}` }, bl.token), 201)).id);
    await expectStatus(t.api.put(`${V31}/events/${first.id}`, { programID: program.id, eventName: 'before, updated' }, bl.token), 200);
    // Nothing could be published: it waits in the outbox.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const pending = await t.app.pool.query("SELECT count(*)::int AS n FROM vtn_mqtt_messages WHERE state = 'pending' AND object_type = 'EVENT'");
    expect(pending.rows[0].n).toBe(4);

    await broker.start();
    await waitFor('the notifications written while the broker was down', () => received.length >= 5, 20_000);
    // At least once: a batch cut short may be sent again; order per topic holds.
    const names = [...new Map(received.map((r) => [`${r.operation}:${r.eventName}`, r])).values()].map((r) => `${r.operation}:${r.eventName}`);
    expect(names).toEqual(['CREATE:before', 'CREATE:during 0', 'CREATE:during 1', 'CREATE:during 2', 'UPDATE:before, updated']);
    // The outbox empties once the broker acknowledged them.
    await waitFor('an empty outbox', async () => (await t.app.pool.query("SELECT count(*)::int AS n FROM vtn_mqtt_messages WHERE state = 'pending'")).rows[0].n === 0, 20_000);
  });
});
