// A fleet of MQTT VEN subscribers in its own process (so that they do not share the server's
// event loop): connects one client per topic given on stdin (JSON: {url, username, password,
// topics}), subscribes QoS 1, and for each round the parent announces ({round}) reports when
// every client has received a message of that round ({round, last, first}).
import mqtt, { type MqttClient } from 'mqtt';

interface Setup {
  url: string;
  username: string;
  password: string;
  topics: string[];
}

const setup = await new Promise<Setup>((resolve) => process.once('message', (m) => resolve(m as Setup)));
const n = setup.topics.length;
let round = -1;
let seen = new Uint8Array(n);
let count = 0;
let first = 0;
const clients: MqttClient[] = [];

async function connect(i: number): Promise<void> {
  const client = await mqtt.connectAsync(setup.url, { username: setup.username, password: setup.password, reconnectPeriod: 1000, keepalive: 300, connectTimeout: 60_000 });
  client.on('message', () => {
    if (round < 0 || seen[i]) return;
    seen[i] = 1;
    count += 1;
    const now = Date.now();
    if (count === 1) first = now;
    if (count === n) process.send!({ round, first, last: now });
  });
  await client.subscribeAsync(setup.topics[i]!, { qos: 1 });
  clients.push(client);
}

let next = 0;
await Promise.all(
  Array.from({ length: 100 }, async () => {
    while (next < n) await connect(next++);
  }),
);
process.send!({ ready: clients.length });
process.on('message', (m: { round?: number; stop?: boolean }) => {
  if (m.stop) {
    void Promise.all(clients.map((c) => c.endAsync(true))).then(() => process.exit(0));
    return;
  }
  round = m.round!;
  seen = new Uint8Array(n);
  count = 0;
  process.send!({ armed: round });
});
