// VTN load: the hot read of a VEN fleet and the webhook fan-out, against a bare uWebSockets.js
// handler answering the same bytes, in the same run, on the same machine.
//   1. GET /api/openadr/v1/events?programID=…&limit=50 with 10,000 stored events in that program
//      (and 1,000 in another): autocannon, and wrk when installed; through the read cache (the
//      default) and, from a second instance on the same database with VTN_READ_CACHE_MS=0,
//      straight from PostgreSQL.
//   2. POST /api/openadr/v1/events with 100 subscriptions matching every event: request rate and
//      latency, and notifications delivered per second to a receiver in its own process.
//   npm run bench:vtn            (DURATION=10 CONNECTIONS=50 EVENTS=10000 by default)
import { spawn } from 'node:child_process';
import os from 'node:os';
import { createServer } from 'node:http';
import { loadUws } from '../src/http/uwsLoader.ts';
import { bootApp, call } from './support/bootApp.ts';
import { pinServerToLastCore, printTable, runLoad, runWrk, writeResults, type LoadResult } from './support/load.ts';

const duration = Number(process.env.DURATION ?? 10);
const connections = Number(process.env.CONNECTIONS ?? 50);
const eventCount = Number(process.env.EVENTS ?? 10_000);
const SUBSCRIPTIONS = 100;
const VTN = '/api/openadr/v1';

const bench = await bootApp({ VTN_WEBHOOK_ALLOW_PRIVATE: 'true', VTN_WEBHOOK_CONCURRENCY: '128' });
pinServerToLastCore();
const base = bench.app.baseUrl;

// A business-logic VTN credential in an OpenADR organization.
const org = await call(base, 'POST', '/api/admin/organizations', bench.adminToken, { name: `bench-vtn-${Date.now()}`, features: ['OpenADR'] });
const credential = await call(base, 'POST', '/api/openadr/vtn/credential', bench.adminToken, {
  organizationId: org.id,
  name: 'bench-bl',
  scopes: ['read_all', 'write_programs', 'write_events', 'write_subscriptions', 'write_vens'],
});
const tokenRes = await fetch(`${base}/oauth/token`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ grant_type: 'client_credentials', client_id: credential.clientId, client_secret: credential.clientSecret, audience: 'flex-api' }),
});
const token = ((await tokenRes.json()) as { access_token: string }).access_token;
const auth = { authorization: `Bearer ${token}` };

/** A day-ahead price event: 4 hourly intervals, a group target, a payload descriptor (~700 bytes). */
function event(programID: string, i: number) {
  const start = new Date(Date.UTC(2024, 0, 1) + (i % 365) * 86_400_000).toISOString().replace('.000Z', 'Z');
  return {
    programID,
    eventName: `price-${i}`,
    priority: i % 7 === 0 ? null : i % 10,
    targets: [{ type: 'GROUP', values: [`group-${i % 20}`] }],
    payloadDescriptors: [{ objectType: 'EVENT_PAYLOAD_DESCRIPTOR', payloadType: 'PRICE', units: 'KWH', currency: 'EUR' }],
    intervalPeriod: { start, duration: 'PT1H' },
    intervals: [0, 1, 2, 3].map((id) => ({ id, payloads: [{ type: 'PRICE', values: [Math.round(((i * 7 + id * 13) % 100) * 10) / 1000] }] })),
  };
}

async function createEvents(programID: string, count: number, offset: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await call(base, 'POST', `${VTN}/events`, token, event(programID, offset + i));
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

const program = await call(base, 'POST', `${VTN}/programs`, token, { programName: 'day-ahead', programType: 'PRICING_TARIFF', country: 'NL' });
const other = await call(base, 'POST', `${VTN}/programs`, token, { programName: 'other' });
let started = Date.now();
await createEvents(program.id, eventCount, 0);
await createEvents(other.id, Math.round(eventCount / 10), eventCount);
console.log(`stored ${eventCount + Math.round(eventCount / 10)} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);

// A second instance on the same database, without the read cache and without a dispatcher.
const uncached = await bootApp({ DATABASE_URL: bench.app.pool.options.connectionString!, VTN_READ_CACHE_MS: '0', VTN_DISPATCHER: 'false' });
const uncachedBase = uncached.app.baseUrl;

const listPath = `${VTN}/events?programID=${program.id}&limit=50`;
const sample = await fetch(base + listPath, { headers: auth });
const sampleBody = await sample.text();
console.log(`GET ${listPath}: ${sample.status}, ${JSON.parse(sampleBody).length} events, ${sampleBody.length} bytes`);

// The baseline: the app's own HTTP library (HTTP_SERVER) answering the same body with no work.
async function bareServer(): Promise<number> {
  const uws = loadUws();
  if (bench.app.httpServer === 'uws' && uws.ok) {
    const bare = uws.uws.App().get('/bare', (res) => {
      res.cork(() => res.writeHeader('Content-Type', 'application/json').end(sampleBody));
    });
    return new Promise<number>((resolve) => bare.listen('127.0.0.1', 0, (s) => resolve(uws.uws.us_socket_local_port(s as never))));
  }
  const bare = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(sampleBody));
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  return (bare.address() as { port: number }).port;
}
const barePort = await bareServer();
const bareUrl = `http://127.0.0.1:${barePort}/bare`;

const results: LoadResult[] = [];
const load = { connections, durationSeconds: duration, warmupSeconds: 2 };
results.push(await runLoad({ name: `bare ${bench.app.httpServer} handler, same bytes`, url: bareUrl, ...load }));
results.push(await runLoad({ name: 'GET events?programID&limit=50', url: base + listPath, headers: auth, ...load }));
results.push(await runLoad({ name: 'same, read cache off (PostgreSQL)', url: uncachedBase + listPath, headers: auth, ...load }));
const wrk: LoadResult[] = [];
const bareWrk = await runWrk({ name: `bare ${bench.app.httpServer} handler, same bytes`, url: bareUrl, ...load });
if (bareWrk) {
  wrk.push(bareWrk);
  const getWrk = await runWrk({ name: 'GET events?programID&limit=50', url: base + listPath, headers: auth, ...load });
  if (getWrk) wrk.push(getWrk);
  const dbWrk = await runWrk({ name: 'same, read cache off (PostgreSQL)', url: uncachedBase + listPath, headers: auth, ...load });
  if (dbWrk) wrk.push(dbWrk);
}
await uncached.close();

// Webhook fan-out: a receiver in its own process (so it does not share the server's core)
// answering 200 and counting; 100 subscriptions to EVENT POST of one program.
const receiver = spawn(
  process.execPath,
  [
    '-e',
    `let n = 0; const s = require('node:http').createServer((q, r) => { if (q.method === 'GET') return r.end(String(n)); q.resume(); q.on('end', () => { n++; r.end('ok'); }); });
     s.keepAliveTimeout = 60000; s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const receiverPort = await new Promise<number>((resolve) => receiver.stdout!.once('data', (d) => resolve(Number(String(d).trim()))));
const receiverUrl = `http://127.0.0.1:${receiverPort}`;
const delivered = async () => Number(await (await fetch(receiverUrl)).text());
const fanout = await call(base, 'POST', `${VTN}/programs`, token, { programName: 'fan-out' });
for (let i = 0; i < SUBSCRIPTIONS; i += 1) {
  await call(base, 'POST', `${VTN}/subscriptions`, token, {
    clientName: `subscriber-${i}`,
    programID: fanout.id,
    objectOperations: [{ objects: ['EVENT'], operations: ['POST'], callbackUrl: `${receiverUrl}/hook/${i}`, bearerToken: `token-${i}` }],
  });
}
started = Date.now();
const post = await runLoad({
  name: `POST events, ${SUBSCRIPTIONS} matching subscriptions`,
  url: `${base}${VTN}/events`,
  method: 'POST',
  headers: { ...auth, 'content-type': 'application/json' },
  body: JSON.stringify(event(fanout.id, 1)),
  connections: 10,
  durationSeconds: duration,
});
// The outbox knows how many notifications the load wrote (requests still in flight when the load
// generator stopped count too).
const outbox = async () => (await bench.app.pool.query<{ total: number; pending: number }>("SELECT count(*) AS total, count(*) FILTER (WHERE state = 'pending') AS pending FROM vtn_notifications")).rows[0]!;
let count = await delivered();
let queued = await outbox();
while ((queued.pending > 0 || count < queued.total) && Date.now() - started < 600_000) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  count = await delivered();
  queued = await outbox();
}
const expected = queued.total;
const created = expected / SUBSCRIPTIONS;
const seconds = (Date.now() - started) / 1000;
const notificationsPerSecond = Math.round(count / seconds);
receiver.kill();
results.push(post);

const withBase = (rows: LoadResult[]) => rows.map((r) => ({ ...r, vsBare: `${Math.round((r.requestsPerSecond / rows[0]!.requestsPerSecond) * 100)}%` }));
console.log('autocannon:');
printTable(withBase(results));
if (wrk.length > 0) {
  console.log('wrk:');
  printTable(withBase(wrk));
}
console.log(`webhooks: ${created} events × ${SUBSCRIPTIONS} subscriptions = ${expected} notifications; ${count} delivered in ${seconds.toFixed(1)} s = ${notificationsPerSecond} notifications/s`);
const file = writeResults('vtn-load', {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
  storedEvents: { inProgram: eventCount, other: Math.round(eventCount / 10) },
  responseBytes: sampleBody.length,
  connections,
  durationSeconds: duration,
  autocannon: results,
  wrk,
  webhooks: { subscriptions: SUBSCRIPTIONS, eventsCreated: created, notificationsExpected: expected, notificationsDelivered: count, seconds, notificationsPerSecond },
});
console.log(`written ${file}`);
await bench.close();
process.exit(0);
