// Dispatch of a clearing's transactions to the VENs (docs/flexibility-loop.md): TRANSACTIONS
// flexibility transactions of VENS bound grid resources, committed in one statement (as a
// clearing commits its transactions); the time until every event is written into the provider's
// VTN, and until the last VEN notification arrived, over MQTT (each VEN's client subscribed to
// its own vens/<venID>/events/create) and over webhooks (each VEN's subscription to the zone's
// program), with the p50/p99 of the per-notification delays. The VENs run in a child process.
//   npm run bench:dispatch     (TRANSACTIONS=10000 VENS=100 ROUNDS=3 by default)
import { fork } from 'node:child_process';
import os from 'node:os';
import { bootApp, call, clientToken } from './support/bootApp.ts';
import { writeResults } from './support/load.ts';

const TRANSACTIONS = Number(process.env.TRANSACTIONS ?? 10_000);
const VENS = Number(process.env.VENS ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const V31 = '/api/openadr/3.1.0';

const bench = await bootApp({ VTN_WEBHOOK_ALLOW_PRIVATE: 'true', VTN_DISPATCH_POLL_MS: '100', VTN_WEBHOOK_CONCURRENCY: '128', RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE: '100000' });
const base = bench.app.baseUrl;
const admin = bench.adminToken;
const pool = bench.app.pool;
const loadAtStart = os.loadavg();
console.log(`load average at start: ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`);

async function token(clientId: string, clientSecret: string): Promise<string> {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

// The market: a grid operator and a provider in a zone; the provider's VTN, with VENS VENs, each
// with its own credential and one resource controlling one grid resource.
let started = Date.now();
const operator = await clientToken(base, admin, ['Grid'], ['Order.Organization.ReadWrite']);
const provider = await clientToken(base, admin, ['Grid', 'OpenADR'], ['Order.Organization.ReadWrite', 'Resource.Organization.ReadWrite']);
const zoneName = `Bench zone ${Date.now()}`;
const zone = await call(base, 'POST', '/api/admin/zones', admin, { name: zoneName, timeResolution: 1, orderQuantityResolution: 1, organizationIds: [operator.organizationId, provider.organizationId] });
const blCred = await call(base, 'POST', '/api/openadr/vtn/credential', admin, { organizationId: provider.organizationId, name: 'bench-bl', scopes: ['read_all', 'write_programs', 'write_events', 'write_subscriptions', 'write_vens'] });
const bl = await token(blCred.clientId, blCred.clientSecret);
// The zone's program exists before the VENs subscribe to it; dispatch finds it by name.
const program = await call(base, 'POST', `${V31}/programs`, bl, { programName: zoneName });
interface Ven {
  id: string;
  clientId: string;
  token: string;
  resourceId: number;
}
const vens: Ven[] = new Array(VENS);
let next = 0;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (next < VENS) {
      const i = next++;
      const cred = await call(base, 'POST', '/api/openadr/vtn/credential', admin, { organizationId: provider.organizationId, name: `bench-ven-${i}`, scopes: ['read_all', 'write_reports', 'write_subscriptions', 'write_vens'] });
      const ven = await call(base, 'POST', `${V31}/vens`, bl, { objectType: 'BL_VEN_REQUEST', venName: `ven-${i}`, clientID: cred.clientId });
      const resource = await call(base, 'POST', `${V31}/resources`, bl, { objectType: 'BL_RESOURCE_REQUEST', resourceName: 'battery', venID: ven.id, clientID: cred.clientId });
      const grid = await call(base, 'POST', '/api/admin/resources', admin, { organizationId: provider.organizationId, name: `battery ${i}`, type: 3, regulationType: 3, maxQuantity: 1000, marketZoneId: zone.id });
      await call(base, 'PUT', `/api/grid/resource/${grid.id}/binding`, provider.token, { organizationId: provider.organizationId, venID: ven.id, resourceID: resource.id });
      vens[i] = { id: ven.id, clientId: cred.clientId, token: await token(cred.clientId, cred.clientSecret), resourceId: grid.id };
    }
  }),
);
console.log(`${VENS} VENs with bound resources in ${((Date.now() - started) / 1000).toFixed(1)} s`);

// The VENs' side: MQTT clients and a webhook receiver in a child process.
started = Date.now();
const fleet = fork(new URL('./support/dispatchSubscribers.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const nextMessage = <T>(pred: (m: any) => boolean) =>
  new Promise<T>((resolve) => {
    const on = (m: any) => {
      if (pred(m)) {
        fleet.off('message', on);
        resolve(m as T);
      }
    };
    fleet.on('message', on);
  });
const topic = (await call(base, 'GET', `${V31}/notifiers/mqtt/topics/vens/${vens[0]!.id}/events`, vens[0]!.token)).topics.CREATE as string;
// One MQTT connection per VEN, each with its own credential's token.
const ready = nextMessage<{ ready: number; webhookUrl: string }>((m) => m.ready !== undefined);
fleet.send({ url: `mqtt://127.0.0.1:${bench.app.mqttPort}`, clients: vens.map((v) => ({ username: v.clientId, password: v.token, topic: topic.replace(vens[0]!.id, v.id) })) });
const { webhookUrl } = await ready;
for (const v of vens) {
  await call(base, 'POST', `${V31}/subscriptions`, v.token, { clientName: `ven-${v.id}`, programID: program.id, objectOperations: [{ objects: ['EVENT'], operations: ['CREATE'], callbackUrl: `${webhookUrl}/${v.id}`, bearerToken: 'ven-secret' }] });
}
console.log(`${VENS} MQTT subscribers and webhook subscriptions in ${((Date.now() - started) / 1000).toFixed(1)} s`);

// One flexibility order; each round's transactions are written by one INSERT, as a clearing writes them.
const HOUR = 3_600_000;
const firstStart = Math.ceil((Date.now() + 2 * HOUR) / HOUR) * HOUR;
const { rows: orders } = await pool.query<{ id: number }>(
  `INSERT INTO flexibility_orders (organization_id, market_zone_id, market_id, product_type, start, "end", expires_at, unit_price, min_quantity, max_quantity, remaining_quantity, created_by)
   VALUES ($1, $2, $3, 1, $4, $5, $4::timestamptz - interval '1 hour', 0.5, 1, 1e9, 1e9, 'bench') RETURNING id`,
  [operator.organizationId, zone.id, zone.markets[0].marketId, new Date(firstStart), new Date(firstStart + 24 * HOUR)],
);
const resourceIds = vens.map((v) => v.resourceId);

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
interface Round {
  writtenMs: number;
  mqtt: { p50: number; p99: number; last: number };
  webhook: { p50: number; p99: number; last: number };
}
const rounds: Round[] = [];
for (let r = 0; r < ROUNDS; r += 1) {
  const armed = nextMessage((m) => m.armed === r);
  fleet.send({ round: r, expected: TRANSACTIONS });
  await armed;
  const arrived = nextMessage<{ round: number; mqtt: number[]; webhook: number[] }>((m) => m.round === r && m.mqtt !== undefined);
  const start = firstStart + r * HOUR;
  await pool.query(
    `INSERT INTO flexibility_transactions (flexibility_order_id, seller_organization_id, buyer_organization_id, seller_created_by, buyer_created_by, resource_id,
       market_id, market_zone_id, product_type, start, "end", quantity, unit_price)
     SELECT $1, $2, $3, 'bench', 'bench', ($4::int[])[1 + (g % cardinality($4::int[]))], $5, $6, 1, $7, $8, 10 + (g % 5), 0.5 FROM generate_series(0, $9 - 1) g`,
    [orders[0]!.id, provider.organizationId, operator.organizationId, resourceIds, zone.markets[0].marketId, zone.id, new Date(start), new Date(start + HOUR), TRANSACTIONS],
  );
  const t0 = Date.now();
  bench.app.kickDispatch();
  let writtenAt = 0;
  for (;;) {
    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM flexibility_dispatches WHERE state = 'pending'");
    if (rows[0]!.n === 0) {
      writtenAt = Date.now();
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const { mqtt, webhook } = await arrived;
  const delays = (times: number[]) => times.map((t) => t - t0);
  const m = delays(mqtt);
  const w = delays(webhook);
  const round: Round = {
    writtenMs: writtenAt - t0,
    mqtt: { p50: pct(m, 50), p99: pct(m, 99), last: Math.max(...m) },
    webhook: { p50: pct(w, 50), p99: pct(w, 99), last: Math.max(...w) },
  };
  rounds.push(round);
  console.log(
    `round ${r + 1}: ${TRANSACTIONS} events written in ${round.writtenMs} ms; MQTT p50 ${round.mqtt.p50} / p99 ${round.mqtt.p99} / last ${round.mqtt.last} ms; ` +
      `webhooks p50 ${round.webhook.p50} / p99 ${round.webhook.p99} / last ${round.webhook.last} ms`,
  );
}
const stopped = new Promise((resolve) => fleet.once('exit', resolve));
fleet.send({ stop: true });
await stopped;

const median = (values: number[]) => pct(values, 50);
const summary = {
  transactions: TRANSACTIONS,
  vens: VENS,
  rounds: ROUNDS,
  medianOfRounds: {
    writtenMs: median(rounds.map((r) => r.writtenMs)),
    mqtt: { p50Ms: median(rounds.map((r) => r.mqtt.p50)), p99Ms: median(rounds.map((r) => r.mqtt.p99)), lastMs: median(rounds.map((r) => r.mqtt.last)) },
    webhook: { p50Ms: median(rounds.map((r) => r.webhook.p50)), p99Ms: median(rounds.map((r) => r.webhook.p99)), lastMs: median(rounds.map((r) => r.webhook.last)) },
  },
  perRound: rounds,
  loadAverageAtStart: loadAtStart,
  loadAverageAtEnd: os.loadavg(),
  cpus: os.cpus().length,
};
const s = summary.medianOfRounds;
console.log(`\n${TRANSACTIONS} transactions of ${VENS} bound resources committed at once, median of ${ROUNDS} rounds:`);
console.log(`  all events written into the VTN after ${s.writtenMs} ms (${Math.round((TRANSACTIONS / s.writtenMs) * 1000)} events/s)`);
console.log(`  MQTT notifications: p50 ${s.mqtt.p50Ms} ms, p99 ${s.mqtt.p99Ms} ms, the last after ${s.mqtt.lastMs} ms`);
console.log(`  webhook notifications: p50 ${s.webhook.p50Ms} ms, p99 ${s.webhook.p99Ms} ms, the last after ${s.webhook.lastMs} ms`);
console.log(`  webhooks / MQTT, last notification: ${(s.webhook.lastMs / s.mqtt.lastMs).toFixed(1)}x`);
console.log(`load average at end: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`results: ${writeResults('dispatch', summary)}`);
await bench.close();
