// MQTT fan-out (OpenADR 3.1 notifier) against webhooks, in the same run on the same machine:
// 10,000 VENs, each with an MQTT client connected to the embedded broker and subscribed to its
// own `vens/<venID>/events/create` topic (the subscribers run in a child process); one untargeted
// event is created for all of them; the time from the POST to the moment the last VEN has it.
// Then the same fan-out by webhooks: 10,000 subscriptions of the program's EVENT creations, each
// with its own callback path on a local receiver (its own process).
//   npm run bench:mqtt        (VENS=10000 ROUNDS=10 WEBHOOK_ROUNDS=3 by default; MQTT_BROKER_CONCURRENCY)
import { fork, spawn } from 'node:child_process';
import os from 'node:os';
import { bootApp, call } from './support/bootApp.ts';
import { writeResults } from './support/load.ts';

const VENS = Number(process.env.VENS ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 10);
const WEBHOOK_ROUNDS = Number(process.env.WEBHOOK_ROUNDS ?? 3);
const V31 = '/api/openadr/3.1.0';

// All subscribers connect from 127.0.0.1: the per-address connection limit is raised for them.
const bench = await bootApp({ MQTT_PORT: '0', MQTT_MAX_CONNECTIONS_PER_ADDRESS: String(VENS + 100), MQTT_BROKER_CONCURRENCY: process.env.MQTT_BROKER_CONCURRENCY ?? '100', VTN_WEBHOOK_ALLOW_PRIVATE: 'true', VTN_WEBHOOK_CONCURRENCY: '128', VTN_DISPATCH_POLL_MS: '100' });
const base = bench.app.baseUrl;
console.log(`load average at start: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);

async function token(clientId: string, clientSecret: string): Promise<string> {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, audience: 'flex-api' }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

const org = await call(base, 'POST', '/api/admin/organizations', bench.adminToken, { name: `bench-mqtt-${Date.now()}`, features: ['OpenADR'] });
const blCred = await call(base, 'POST', '/api/openadr/vtn/credential', bench.adminToken, { organizationId: org.id, name: 'bench-bl', scopes: ['read_all', 'write_programs', 'write_events', 'write_subscriptions', 'write_vens'] });
const venCred = await call(base, 'POST', '/api/openadr/vtn/credential', bench.adminToken, { organizationId: org.id, name: 'bench-vens', scopes: ['read_all', 'write_reports', 'write_subscriptions', 'write_vens'] });
const bl = await token(blCred.clientId, blCred.clientSecret);
const ven = await token(venCred.clientId, venCred.clientSecret);

// The fleet: VENs bound to one VEN credential (one token for all; the broker checks each
// subscription against the VENs bound to it).
let started = Date.now();
const venIds: string[] = new Array(VENS);
let next = 0;
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next < VENS) {
      const i = next++;
      venIds[i] = (await call(base, 'POST', `${V31}/vens`, bl, { objectType: 'BL_VEN_REQUEST', venName: `ven-${i}`, clientID: venCred.clientId })).id;
    }
  }),
);
const program = await call(base, 'POST', `${V31}/programs`, bl, { programName: 'fan-out' });
console.log(`${VENS} VENs in ${((Date.now() - started) / 1000).toFixed(1)} s`);

const topics = await Promise.all(venIds.slice(0, 1).map(async (id) => (await call(base, 'GET', `${V31}/notifiers/mqtt/topics/vens/${id}/events`, ven)).topics.CREATE as string));
const topicOf = (id: string) => topics[0]!.replace(venIds[0]!, id);

// The subscribers.
started = Date.now();
const fleet = fork(new URL('./support/mqttSubscribers.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const nextMessage = <T>(pred: (m: any) => boolean) => new Promise<T>((resolve) => {
  const on = (m: any) => {
    if (pred(m)) {
      fleet.off('message', on);
      resolve(m as T);
    }
  };
  fleet.on('message', on);
});
const ready = nextMessage<{ ready: number }>((m) => m.ready !== undefined);
fleet.send({ url: `mqtt://127.0.0.1:${bench.app.mqttPort}`, username: venCred.clientId, password: ven, topics: venIds.map(topicOf) });
console.log(`${(await ready).ready} MQTT subscribers connected and subscribed in ${((Date.now() - started) / 1000).toFixed(1)} s`);

const event = (i: number) => ({ programID: program.id, eventName: `fan-out ${i}`, intervalPeriod: { start: '2026-01-01T16:00:00Z', duration: 'PT1H' }, intervals: [{ id: 0, payloads: [{ type: 'PRICE', values: [1.5] }] }] });

const mqttTimes: number[] = [];
for (let r = 0; r < ROUNDS; r += 1) {
  const armed = nextMessage((m) => m.armed === r);
  fleet.send({ round: r });
  await armed;
  const done = nextMessage<{ round: number; first: number; last: number }>((m) => m.round === r && m.last !== undefined);
  const t0 = Date.now();
  await call(base, 'POST', `${V31}/events`, bl, event(r));
  const result = await done;
  mqttTimes.push(result.last - t0);
  console.log(`MQTT round ${r + 1}: first VEN after ${result.first - t0} ms, last (${VENS}th) after ${result.last - t0} ms`);
}
const stopped = new Promise((resolve) => fleet.once('exit', resolve));
fleet.send({ stop: true });
await stopped;

// Webhooks (WEBHOOK_ROUNDS=0: skipped): a receiver in its own process counting POSTs per path prefix.
const webhookTimes: number[] = [];
if (WEBHOOK_ROUNDS > 0) {
  const receiver = spawn(
    process.execPath,
    [
      '-e',
      `let n = 0; const s = require('node:http').createServer((q, r) => { if (q.method === 'GET') { const v = n; if (q.url === '/reset') n = 0; return r.end(String(v)); } q.resume(); q.on('end', () => { n++; r.end('ok'); }); });
       s.keepAliveTimeout = 60000; s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const receiverUrl = `http://127.0.0.1:${await new Promise<number>((resolve) => receiver.stdout!.once('data', (d) => resolve(Number(String(d).trim()))))}`;
  started = Date.now();
  next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < VENS) {
        const i = next++;
        await call(base, 'POST', `${V31}/subscriptions`, ven, {
          clientName: `ven-${i}`,
          programID: program.id,
          objectOperations: [{ objects: ['EVENT'], operations: ['CREATE'], callbackUrl: `${receiverUrl}/ven/${i}`, bearerToken: `token-${i}` }],
        });
      }
    }),
  );
  console.log(`${VENS} webhook subscriptions in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  for (let r = 0; r < WEBHOOK_ROUNDS; r += 1) {
    await fetch(`${receiverUrl}/reset`);
    const t0 = Date.now();
    await call(base, 'POST', `${V31}/events`, bl, event(100 + r)).catch((err) => {
      throw new Error(`the event's POST failed after ${Date.now() - t0} ms`, { cause: err });
    });
    const answered = Date.now() - t0;
    for (;;) {
      const n = Number(await (await fetch(receiverUrl)).text());
      if (n >= VENS) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    webhookTimes.push(Date.now() - t0);
    console.log(`webhook round ${r + 1}: the event's POST answered after ${answered} ms, the last of ${VENS} notifications after ${Date.now() - t0} ms`);
  }
  receiver.kill();
}

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const summary = {
  vens: VENS,
  mqtt: { rounds: ROUNDS, p50Ms: pct(mqttTimes, 50), p99Ms: pct(mqttTimes, 99), times: mqttTimes },
  webhooks: { rounds: WEBHOOK_ROUNDS, p50Ms: pct(webhookTimes, 50), p99Ms: pct(webhookTimes, 99), times: webhookTimes },
  loadAverageAtEnd: os.loadavg(),
  cpus: os.cpus().length,
};
console.log(`\n${VENS} VENs, one event for all, time until the last has it:`);
console.log(`  MQTT (embedded broker), ${ROUNDS} rounds: p50 ${summary.mqtt.p50Ms} ms, p99 ${summary.mqtt.p99Ms} ms`);
console.log(`  webhooks (local receiver), ${WEBHOOK_ROUNDS} rounds: p50 ${summary.webhooks.p50Ms} ms, p99 ${summary.webhooks.p99Ms} ms`);
console.log(`  webhooks / MQTT, p50: ${(summary.webhooks.p50Ms / summary.mqtt.p50Ms).toFixed(1)}x`);
console.log(`load average at end: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`results: ${writeResults('mqtt-fanout', summary)}`);
await bench.close();
