// The cost of compressed answers: a register-year of 15-minute readings (GET /api/readings, 35,136
// readings, ~5 MB of JSON) under load without compression and with each coding this Node offers,
// in the same run: requests/s, p50/p99 latency, bytes on the wire, and the compression time of
// one answer alone (node:zlib on the thread pool). Loopback hides what compression is for
// (bandwidth): the wire column shows what a 100 Mbit/s link would take per answer.
//   npm run bench:compression          (DURATION=8 CONNECTIONS=4 by default)
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { ZSTD_AVAILABLE, compressPieces, type Encoding } from '../src/http/compression.ts';
import { bootApp, call } from './support/bootApp.ts';
import { pinServerToLastCore, printTable, runLoad, writeResults } from './support/load.ts';
import { timedRequest } from './support/measure.ts';
import { createFleet } from './support/meterSetup.ts';

const duration = Number(process.env.DURATION ?? 8);
const connections = Number(process.env.CONNECTIONS ?? 4);

const bench = await bootApp({ RATE_LIMIT_READINGS_PER_SECOND: '1000', RATE_LIMIT_READINGS_PER_MINUTE: '100000', READINGS_MAX_POINTS: '100000' });
pinServerToLastCore();
const base = bench.app.baseUrl;
const fleet = await createFleet(base, bench.adminToken, { meters: 1, registersPerMeter: 1, permissions: ['Meter.Organization.ReadWrite'] });
const [meter] = fleet.meters;
const [register] = fleet.registers;
const t0 = Date.parse('2024-01-01T00:00:00Z');
const readings = Array.from({ length: 366 * 96 }, (_, i) => ({ timestamp: new Date(t0 + i * 900_000).toISOString(), value: Math.round(Math.abs(Math.sin(i / 40)) * 4000) / 1000, resolution: 900 }));
for (let i = 0; i < readings.length; i += 10_000) {
  await call(base, 'POST', '/api/readings', fleet.token, { meters: [{ id: meter!.externalId, registers: [{ id: register!.externalId, values: readings.slice(i, i + 10_000) }] }] });
}
const path = `/api/readings?organizationId=${fleet.organizationId}&registerId=${register!.id}&start=2024-01-01T00:00:00Z&end=2025-01-01T00:00:00Z`;
const auth = { authorization: `Bearer ${fleet.token}` };

const encodings: (Encoding | 'identity')[] = ['identity', 'gzip', 'br', ...(ZSTD_AVAILABLE ? (['zstd'] as const) : [])];
const identityBody = Buffer.from((await timedRequest(base + path, 'GET', auth, undefined, true)).body);
const rows = [];
for (const encoding of encodings) {
  const headers = encoding === 'identity' ? auth : { ...auth, 'accept-encoding': encoding };
  const one = await timedRequest(base + path, 'GET', headers);
  let compressMs = 0;
  if (encoding !== 'identity') {
    const times = [];
    for (let i = 0; i < 5; i += 1) {
      const start = performance.now();
      await compressPieces([identityBody], encoding);
      times.push(performance.now() - start);
    }
    compressMs = times.sort((a, b) => a - b)[2]!;
  }
  const load = await runLoad({ name: encoding, url: base + path, connections, durationSeconds: duration, warmupSeconds: 2, headers });
  rows.push({
    encoding,
    'req/s': Number((load.total / duration).toFixed(2)),
    'p50 ms': load.p50Ms,
    'p99 ms': load.p99Ms,
    'bytes on the wire': one.bytes,
    'ratio to identity': Number((one.bytes / identityBody.length).toFixed(3)),
    'compress one answer ms': Number(compressMs.toFixed(1)),
    'at 100 Mbit/s ms': Math.round((one.bytes * 8) / 100_000),
    errors: load.errors + load.non2xx,
  });
}
const identity = rows[0]!;
for (const row of rows) Object.assign(row, { 'req/s vs identity': Number((row['req/s'] / identity['req/s']).toFixed(2)) });
printTable(rows);
const file = writeResults('compression', { node: process.version, load: os.loadavg(), cpus: os.availableParallelism(), duration, connections, answerBytes: identityBody.length, rows });
console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; written to ${file}`);
await bench.close();
