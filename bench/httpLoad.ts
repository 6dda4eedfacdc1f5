// HTTP load: an authenticated GET through the full stack (JWT, permission + feature +
// organization check, query validation, PostgreSQL, fast-json-stringify) against a bare
// uWebSockets.js handler returning the same bytes, in the same run, on the same machine.
//   npm run bench:http            (DURATION=10 CONNECTIONS=50 by default)
import os from 'node:os';
import uWS from 'uWebSockets.js';
import { bootApp, call, clientToken } from './support/bootApp.ts';
import { pinServerToLastCore, printTable, runLoad, runWrk, writeResults, type LoadResult } from './support/load.ts';

const duration = Number(process.env.DURATION ?? 10);
const connections = Number(process.env.CONNECTIONS ?? 50);

const bench = await bootApp();
pinServerToLastCore();
const base = bench.app.baseUrl;
const { organizationId, token } = await clientToken(base, bench.adminToken, ['OpenADR'], ['Organization.Organization.ReadWrite']);
for (let i = 0; i < 3; i += 1) await call(base, 'POST', '/api/openadr/vtn/credential', token, { organizationId, name: `ven-${i}`, scopes: ['read_all'] });
const authenticatedPath = `/api/openadr/vtn/credential?organizationId=${organizationId}`;
const sample = await fetch(base + authenticatedPath, { headers: { authorization: `Bearer ${token}` } });
const sampleBody = await sample.text();

// The baseline: uWebSockets.js answering the same body with no work at all.
const bare = uWS.App().get('/bare', (res) => {
  res.cork(() => res.writeHeader('Content-Type', 'application/json').end(sampleBody));
});
const barePort = await new Promise<number>((resolve) => bare.listen('127.0.0.1', 0, (s) => resolve(uWS.us_socket_local_port(s as never))));

const results: LoadResult[] = [];
results.push(await runLoad({ name: 'bare uWS handler', url: `http://127.0.0.1:${barePort}/bare`, connections, durationSeconds: duration, warmupSeconds: 2 }));
results.push(
  await runLoad({
    name: 'authenticated GET /api/me (no storage)',
    url: `${base}/api/me`,
    connections,
    durationSeconds: duration,
    warmupSeconds: 2,
    headers: { authorization: `Bearer ${token}` },
  }),
);
results.push(
  await runLoad({
    name: 'authenticated GET /api/openadr/vtn/credential (1 query)',
    url: base + authenticatedPath,
    connections,
    durationSeconds: duration,
    warmupSeconds: 2,
    headers: { authorization: `Bearer ${token}` },
  }),
);
results.push(await runLoad({ name: 'public GET /health (DB ping)', url: `${base}/health`, connections, durationSeconds: duration, warmupSeconds: 2 }));

const ratio = results[1]!.requestsPerSecond / results[0]!.requestsPerSecond;
const withBase = (rows: LoadResult[]) => rows.map((r) => ({ ...r, vsBare: `${Math.round((r.requestsPerSecond / rows[0]!.requestsPerSecond) * 100)}%` }));
printTable(withBase(results));
console.log(`autocannon: authenticated (/api/me) / bare requests per second: ${(ratio * 100).toFixed(1)}% (target ≥ 50%)`);

// The same pair with wrk when installed (apt-get install wrk): autocannon needs about one core
// of this 2-core machine for itself, which caps the bare figure; wrk leaves more to the server.
const wrkResults: LoadResult[] = [];
const bareWrk = await runWrk({ name: 'bare uWS handler', url: `http://127.0.0.1:${barePort}/bare`, connections, durationSeconds: duration, warmupSeconds: 2 });
if (bareWrk) {
  wrkResults.push(bareWrk);
  const meWrk = await runWrk({ name: 'authenticated GET /api/me', url: `${base}/api/me`, connections, durationSeconds: duration, warmupSeconds: 2, headers: { authorization: `Bearer ${token}` } });
  if (meWrk) wrkResults.push(meWrk);
  const dbWrk = await runWrk({ name: 'authenticated GET /api/openadr/vtn/credential', url: base + authenticatedPath, connections, durationSeconds: duration, warmupSeconds: 2, headers: { authorization: `Bearer ${token}` } });
  if (dbWrk) wrkResults.push(dbWrk);
  printTable(withBase(wrkResults));
  console.log(`wrk: authenticated (/api/me) / bare requests per second: ${((wrkResults[1]!.requestsPerSecond / bareWrk.requestsPerSecond) * 100).toFixed(1)}%`);
} else {
  console.log('wrk not installed: skipped the wrk comparison (apt-get install wrk)');
}
const file = writeResults('http-load', {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
  connections,
  durationSeconds: duration,
  results,
  ratioAuthenticatedToBare: ratio,
  wrk: wrkResults,
});
console.log(`written ${file}`);
await bench.close();
process.exit(0);
