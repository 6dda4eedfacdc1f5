// Regression: with an external broker (MQTT_URL) down, the MQTT
// publisher logged a warning every second (each retry), and the connection was retried every
// second however long the outage. Now the outage is logged once when publishing first fails and
// once when the broker is back (with how many notifications waited), and reconnections back off
// (1 s doubling to 30 s). The broker here is a plain TCP listener that drops every connection,
// then a real MQTT broker (aedes) on the same port.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Writable } from 'node:stream';
import { Aedes } from 'aedes';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { Api, createTestDatabase } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, vtnClient, waitFor } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';

interface Line {
  level: number;
  msg: string;
  pending?: number;
}

function listen(server: net.Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
}

describe('the MQTT publisher while an external broker is down', () => {
  let app: App;
  let api: Api;
  let port: number;
  const lines: Line[] = [];
  let attempts = 0;
  let dropping: net.Server;
  let aedes: Aedes | undefined;
  let brokerServer: net.Server | undefined;

  beforeAll(async () => {
    dropping = net.createServer((socket) => {
      attempts += 1;
      socket.destroy();
    });
    await listen(dropping, 0);
    port = (dropping.address() as net.AddressInfo).port;
    const adminToken = `flex_pat_test_${randomBytes(24).toString('base64url')}`;
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: await createTestDatabase(),
      ADMIN_TOKEN: adminToken,
      DB_POOL_MAX: '5',
      DATA_DIR: '/tmp/flex-test-unused',
      MQTT_URL: `mqtt://127.0.0.1:${port}`,
      VTN_DISPATCH_POLL_MS: '100',
    });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const text of chunk.toString().split('\n')) if (text) lines.push(JSON.parse(text) as Line);
        callback();
      },
    });
    app = await createApp(config, { log: pino({ level: 'debug' }, sink) });
    api = new Api(app.baseUrl);
    const bl = await vtnClient(api, adminToken, BL_SCOPES);
    const program = await expectStatus(api.post(`${V31}/programs`, { programName: 'outage' }, bl.token), 201);
    for (const name of ['one', 'two']) await expectStatus(api.post(`${V31}/events`, { programID: program.id, eventName: name }, bl.token), 201);
  });
  afterAll(async () => {
    await app?.close();
    dropping?.close();
    brokerServer?.close();
    aedes?.close();
  });

  it('logs the outage once, backs off, and logs once when the broker is back with what waited', async () => {
    // About 6 s of outage: every-second retries would have logged about six warnings.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    const warnings = lines.filter((l) => l.level >= 40 && /MQTT/.test(l.msg));
    expect(warnings.map((l) => l.msg)).toEqual(['MQTT broker unavailable: notifications wait in the outbox until it is back']);
    // Connection attempts at about 0, 1, 3 s (then 7 s): not one a second.
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(attempts).toBeLessThanOrEqual(4);
    const { rows } = await app.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM vtn_mqtt_messages WHERE state = 'pending'");
    const waiting = rows[0]!.n;
    expect(waiting).toBe(3);

    // A real broker on the same port: the next attempt connects and the outbox drains.
    await new Promise<void>((resolve) => dropping.close(() => resolve()));
    aedes = await Aedes.createBroker();
    brokerServer = net.createServer(aedes.handle);
    await listen(brokerServer, port);
    await waitFor('an empty outbox', async () => (await app.pool.query("SELECT count(*)::int AS n FROM vtn_mqtt_messages WHERE state = 'pending'")).rows[0].n === 0, 40_000);
    const back = lines.filter((l) => /MQTT broker back/.test(l.msg));
    expect(back).toHaveLength(1);
    expect(back[0]!.pending).toBe(waiting);
    expect(lines.filter((l) => l.level >= 40 && /MQTT/.test(l.msg))).toHaveLength(1);
  }, 60_000);
});
