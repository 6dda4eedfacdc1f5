// The VENs of the dispatch benchmark, in a process of their own: one MQTT client per VEN (its own credential)
// subscribed to its `vens/<venID>/events/create` topic, and one HTTP receiver for every VEN's
// webhook subscription. The parent announces a round ({round, expected}); every event
// notification of that round is timed on arrival, and once `expected` arrived over each path the
// process answers {round, mqtt: arrival times, webhook: arrival times} (ms since the epoch; the
// parent's clock is the same machine's).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import mqtt, { type MqttClient } from 'mqtt';

interface Setup {
  url: string;
  clients: { username: string; password: string; topic: string }[];
}

const setup = await new Promise<Setup>((resolve) => process.once('message', (m) => resolve(m as Setup)));
let round = -1;
let expected = 0;
let mqttTimes: number[] = [];
let webhookTimes: number[] = [];
let reported = false;
const clients: MqttClient[] = [];

function check(): void {
  if (!reported && round >= 0 && mqttTimes.length >= expected && webhookTimes.length >= expected) {
    reported = true;
    process.send!({ round, mqtt: mqttTimes, webhook: webhookTimes });
  }
}

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (round >= 0) webhookTimes.push(Date.now());
    res.end('ok');
    check();
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

let next = 0;
await Promise.all(
  Array.from({ length: 50 }, async () => {
    while (next < setup.clients.length) {
      const { username, password, topic } = setup.clients[next++]!;
      const client = await mqtt.connectAsync(setup.url, { username, password, reconnectPeriod: 1000, keepalive: 300, connectTimeout: 60_000 });
      client.on('message', () => {
        if (round < 0) return;
        mqttTimes.push(Date.now());
        check();
      });
      await client.subscribeAsync(topic, { qos: 1 });
      clients.push(client);
    }
  }),
);
process.send!({ ready: clients.length, webhookUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
process.on('message', (m: { round?: number; expected?: number; stop?: boolean }) => {
  if (m.stop) {
    void Promise.all(clients.map((c) => c.endAsync(true))).then(() => process.exit(0));
    return;
  }
  round = m.round!;
  expected = m.expected!;
  mqttTimes = [];
  webhookTimes = [];
  reported = false;
  process.send!({ armed: round });
});
