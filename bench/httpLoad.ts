// HTTP load on both servers in the same run: the same Router (JWT, permission + feature +
// organization check, query validation, PostgreSQL, fast-json-stringify) served by node:http and
// by uWebSockets.js (where a build loads), each against a bare handler of its own library returning
// the same bytes.
//   npm run bench:http            (DURATION=10 CONNECTIONS=50 by default)
import { createServer } from 'node:http';
import os from 'node:os';
import { pino } from 'pino';
import { HttpMetrics } from '../src/http/metrics.ts';
import { createHttpServer, type HttpServer, type HttpServerKind } from '../src/http/server.ts';
import { loadUws } from '../src/http/uwsLoader.ts';
import { bootApp, call, clientToken } from './support/bootApp.ts';
import { pinServerToLastCore, printTable, runLoad, runWrk, writeResults, type LoadResult } from './support/load.ts';

const duration = Number(process.env.DURATION ?? 10);
const connections = Number(process.env.CONNECTIONS ?? 50);

const bench = await bootApp({ HTTP_SERVER: 'node' });
pinServerToLastCore();
const base = bench.app.baseUrl;
const { organizationId, token } = await clientToken(base, bench.adminToken, ['OpenADR'], ['Organization.Organization.ReadWrite']);
for (let i = 0; i < 3; i += 1) await call(base, 'POST', '/api/openadr/vtn/credential', token, { organizationId, name: `ven-${i}`, scopes: ['read_all'] });
const authenticatedPath = `/api/openadr/vtn/credential?organizationId=${organizationId}`;
const sampleBody = await (await fetch(base + authenticatedPath, { headers: { authorization: `Bearer ${token}` } })).text();

// The app's own server is node:http; uWebSockets.js serves the same router on a second port.
const servers: { kind: HttpServerKind; base: string; bare: string }[] = [];
const extra: HttpServer[] = [];
const bareNode = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(sampleBody));
await new Promise<void>((resolve) => bareNode.listen(0, '127.0.0.1', resolve));
servers.push({ kind: 'node', base, bare: `http://127.0.0.1:${(bareNode.address() as { port: number }).port}/bare` });
const uws = loadUws();
if (uws.ok) {
  const { server } = createHttpServer(bench.app.router, { host: '127.0.0.1', port: 0, bodyLimit: 1 << 20, trustProxy: false, log: pino({ level: 'warn' }), metrics: new HttpMetrics() }, 'uws');
  extra.push(server);
  const port = await server.listen();
  const bare = uws.uws.App().get('/bare', (res) => {
    res.cork(() => res.writeHeader('Content-Type', 'application/json').end(sampleBody));
  });
  const barePort = await new Promise<number>((resolve) => bare.listen('127.0.0.1', 0, (s) => resolve(uws.uws.us_socket_local_port(s as never))));
  servers.push({ kind: 'uws', base: `http://127.0.0.1:${port}`, bare: `http://127.0.0.1:${barePort}/bare` });
} else {
  console.log(`uWebSockets.js does not load here (${uws.reason}): node:http only`);
}

const auth = { authorization: `Bearer ${token}` };
const results: (LoadResult & { server: string })[] = [];
for (const s of servers) {
  const label = s.kind === 'uws' ? 'uWebSockets.js' : 'node:http';
  const rows = [
    await runLoad({ name: `${label}: bare handler`, url: s.bare, connections, durationSeconds: duration, warmupSeconds: 2 }),
    await runLoad({ name: `${label}: authenticated GET /api/me (no storage)`, url: `${s.base}/api/me`, connections, durationSeconds: duration, warmupSeconds: 2, headers: auth }),
    await runLoad({ name: `${label}: authenticated GET /api/openadr/vtn/credential (1 query)`, url: s.base + authenticatedPath, connections, durationSeconds: duration, warmupSeconds: 2, headers: auth }),
    await runLoad({ name: `${label}: public GET /health (DB ping)`, url: `${s.base}/health`, connections, durationSeconds: duration, warmupSeconds: 2 }),
  ];
  for (const r of rows) results.push({ ...r, server: s.kind, vsBare: `${Math.round((r.requestsPerSecond / rows[0]!.requestsPerSecond) * 100)}%` } as never);
}
printTable(results as never);
const rps = (kind: string, i: number) => results.filter((r) => r.server === kind)[i]?.requestsPerSecond;
if (servers.length === 2) {
  for (const [i, what] of [[1, 'GET /api/me'], [2, 'GET credential list (1 query)'], [3, 'GET /health']] as const) {
    console.log(`autocannon: ${what}: uWebSockets.js / node:http = ${(rps('uws', i)! / rps('node', i)!).toFixed(2)}x`);
  }
}

// With wrk when installed (apt-get install wrk): autocannon needs about one core of this 2-core
// machine for itself, which caps the figures; wrk leaves more to the server.
const wrkResults: LoadResult[] = [];
for (const s of servers) {
  const label = s.kind === 'uws' ? 'uWebSockets.js' : 'node:http';
  const me = await runWrk({ name: `${label}: authenticated GET /api/me`, url: `${s.base}/api/me`, connections, durationSeconds: duration, warmupSeconds: 2, headers: auth });
  if (!me) break;
  wrkResults.push(me);
  const db = await runWrk({ name: `${label}: authenticated GET credential list`, url: s.base + authenticatedPath, connections, durationSeconds: duration, warmupSeconds: 2, headers: auth });
  if (db) wrkResults.push(db);
}
if (wrkResults.length > 0) printTable(wrkResults as never);
else console.log('wrk not installed: skipped the wrk comparison (apt-get install wrk)');

const file = writeResults('http-load', {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, loadAverage: os.loadavg() },
  uws: uws.ok ? uws.binary.split('/node_modules/')[1] : null,
  connections,
  durationSeconds: duration,
  results,
  wrk: wrkResults,
});
console.log(`written ${file}`);
for (const server of extra) await server.close(1000);
bareNode.close();
await bench.close();
process.exit(0);
