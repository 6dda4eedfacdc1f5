// Scale-out: requests per second of one Flex instance and of two instances on the same
// PostgreSQL, in the same run: an authenticated GET (JWT, permission + feature + organization
// check, one query) and POST /api/readings (10 registers × 4 quarter-hours per request, upserted).
// Two instances get half the connections each, at the same time; their figures are added.
//   npm run bench:scale            (DURATION=10 CONNECTIONS=50 HTTP_SERVER=node by default)
// On a small machine the instances, PostgreSQL and the load generator share the same cores: the
// ratio shows where the ceiling is (docs/architecture.md, "Scale-out").
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { call, clientToken } from './support/bootApp.ts';
import { printTable, runLoad, writeResults, type LoadResult } from './support/load.ts';
import { createFleet } from './support/meterSetup.ts';
import { monthStart, readingsBody } from './support/readingsData.ts';
import { startBenchDatabase, startServerProcess, type ServerProcess } from './support/serverProcess.ts';

const duration = Number(process.env.DURATION ?? 10);
const connections = Number(process.env.CONNECTIONS ?? 50);
const httpServer = process.env.HTTP_SERVER ?? 'node';

const db = await startBenchDatabase();
const adminToken = `flex_pat_bench_${randomBytes(24).toString('base64url')}`;
const env = {
  ADMIN_TOKEN: adminToken,
  HTTP_SERVER: httpServer,
  MQTT_PORT: '0',
  RATE_LIMIT_STORE: 'postgres',
  RATE_LIMIT_READINGS_PER_SECOND: '1000000',
  RATE_LIMIT_READINGS_PER_MINUTE: '100000000',
  DB_POOL_MAX: '20',
};
const start = (name: string): Promise<ServerProcess> => startServerProcess({ databaseUrl: db.postgres.connectionString, dataDir: `${db.dataDir}/${name}`, env });
const a = await start('a');
const b = await start('b');

const { organizationId, token } = await clientToken(a.baseUrl, adminToken, ['OpenADR'], ['Organization.Organization.ReadWrite']);
for (let i = 0; i < 3; i += 1) await call(a.baseUrl, 'POST', '/api/openadr/vtn/credential', token, { organizationId, name: `ven-${i}`, scopes: ['read_all'] });
const getPath = `/api/openadr/vtn/credential?organizationId=${organizationId}`;
const fleet = await createFleet(a.baseUrl, adminToken, { meters: 1, registersPerMeter: 10, permissions: ['Meter.Organization.ReadWrite'] });
const body = readingsBody(fleet.meters, monthStart(0), 4).toString();

interface Case {
  name: string;
  path: string;
  token: string;
  method?: string;
  body?: string;
}
const cases: Case[] = [
  { name: 'authenticated GET credential list (1 query)', path: getPath, token },
  { name: 'POST /api/readings (40 readings)', path: '/api/readings', token: fleet.token, method: 'POST', body },
];

const rows: (LoadResult & { instances: number; vsOne?: string })[] = [];
for (const c of cases) {
  const options = (base: string, conns: number) => ({
    name: c.name,
    url: base + c.path,
    connections: conns,
    durationSeconds: duration,
    warmupSeconds: 2,
    method: c.method,
    body: c.body,
    headers: { authorization: `Bearer ${c.token}`, ...(c.body ? { 'content-type': 'application/json' } : {}) },
  });
  const one = await runLoad(options(a.baseUrl, connections));
  rows.push({ ...one, instances: 1 });
  const half = Math.max(1, Math.round(connections / 2));
  const [ra, rb] = await Promise.all([runLoad(options(a.baseUrl, half)), runLoad(options(b.baseUrl, half))]);
  const two: LoadResult = {
    name: c.name,
    requestsPerSecond: ra.requestsPerSecond + rb.requestsPerSecond,
    p50Ms: Math.max(ra.p50Ms, rb.p50Ms),
    p99Ms: Math.max(ra.p99Ms, rb.p99Ms),
    errors: ra.errors + rb.errors,
    non2xx: ra.non2xx + rb.non2xx,
    total: ra.total + rb.total,
  };
  rows.push({ ...two, instances: 2, vsOne: `${(two.requestsPerSecond / one.requestsPerSecond).toFixed(2)}x` });
}
printTable(rows as never);
const machine = { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadAverage: os.loadavg().map((x) => Number(x.toFixed(2))) };
console.log(`HTTP_SERVER=${httpServer}; ${machine.cpus} CPUs, load average ${machine.loadAverage.join(' ')} at the end`);
const file = writeResults('scale-out', { date: new Date().toISOString(), machine, httpServer, connections, durationSeconds: duration, rows });
console.log(`written ${file}`);
await a.stop();
await b.stop();
await db.close();
process.exit(0);
