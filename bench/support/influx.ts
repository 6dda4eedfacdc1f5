// InfluxDB 1.x (Debian's `influxdb` package) as the peer in the meter-data benchmarks: started
// here on loopback with its own temporary meta/data/WAL directories and configuration (no auth,
// no request log, no _internal monitor database), fed line protocol over HTTP, queried with
// InfluxQL over HTTP. Durability is its default: the WAL is fsynced before a write is answered
// (wal-fsync-delay 0s), as PostgreSQL's commit is.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { mapConcurrent, timedRequest } from './measure.ts';

export const INFLUX_INSTALL = 'apt-get update && apt-get install -y influxdb';

export interface Influx {
  url: string;
  pid: number;
  version: string;
  /** Its meta, data and WAL directories are under this one (`data/<db>`, `wal/<db>`). */
  dir: string;
  /** Bytes on disk of a database: its TSM files, indexes and WAL, as allocated (its series file is
   * preallocated and sparse: its apparent size, 33 MB for a thousand series, is not on disk). */
  diskBytes(db: string): number;
  query(q: string, db?: string): Promise<{ ms: number; bytes: number; body: string }>;
  /** Writes the batches with `concurrency` requests in flight; ms from the first byte sent to the last 204. */
  writeBatches(db: string, batches: readonly string[], concurrency: number): Promise<number>;
  stop(): Promise<void>;
}

/** The influxd binary, installing the Debian package when we are root and may; otherwise
 * undefined after printing the command that would install it. */
export function ensureInfluxd(): string | undefined {
  const which = () => spawnSync('which', ['influxd'], { encoding: 'utf8' }).stdout.trim();
  if (which()) return which();
  if (process.getuid?.() === 0 && process.env.BENCH_NO_INSTALL !== '1' && spawnSync('which', ['apt-get']).status === 0) {
    console.log(`InfluxDB is not installed: running \`${INFLUX_INSTALL}\``);
    spawnSync('sh', ['-c', `${INFLUX_INSTALL} >/dev/null`], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (which()) return which();
  }
  console.log(`InfluxDB (influxd) is not installed; the peer comparison is skipped. Install it with: ${INFLUX_INSTALL}`);
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function config(dir: string, httpPort: number, rpcPort: number, extraData: string): string {
  return `reporting-disabled = true
bind-address = "127.0.0.1:${rpcPort}"
[meta]
  dir = "${dir}/meta"
  logging-enabled = false
[data]
  dir = "${dir}/data"
  wal-dir = "${dir}/wal"
  index-version = "inmem"
  query-log-enabled = false
  trace-logging-enabled = false
${extraData}
[coordinator]
  log-queries-after = "0s"
[monitor]
  store-enabled = false
[subscriber]
  enabled = false
[continuous_queries]
  enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:${httpPort}"
  auth-enabled = false
  log-enabled = false
  suppress-write-log = true
  pprof-enabled = false
  max-body-size = 0
[logging]
  level = "warn"
`;
}

/** `extraData`: more lines for the [data] section (the query bench lets the cache go to TSM
 * files sooner, as in steady state). */
export async function startInflux(binary: string, extraData = ''): Promise<Influx> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-bench-influx-'));
  const [httpPort, rpcPort] = [await freePort(), await freePort()];
  fs.writeFileSync(path.join(dir, 'influxdb.conf'), config(dir, httpPort, rpcPort, extraData));
  const child = spawn(binary, ['run', '-config', path.join(dir, 'influxdb.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${httpPort}`;
  const deadline = Date.now() + 30_000;
  let version = '';
  while (true) {
    try {
      const res = await fetch(`${url}/ping`);
      if (res.status === 204) {
        version = res.headers.get('x-influxdb-version') ?? '';
        break;
      }
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`influxd did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const influx: Influx = {
    url,
    pid: child.pid!,
    version,
    dir,
    diskBytes(db) {
      const size = (p: string): number => {
        if (!fs.existsSync(p)) return 0;
        const st = fs.statSync(p);
        return st.isDirectory() ? fs.readdirSync(p).reduce((n, f) => n + size(path.join(p, f)), 0) : st.blocks * 512;
      };
      return size(path.join(dir, 'data', db)) + size(path.join(dir, 'wal', db));
    },
    async query(q, db) {
      const params = new URLSearchParams({ q, ...(db ? { db } : {}) });
      const r = await timedRequest(`${url}/query`, 'POST', { 'content-type': 'application/x-www-form-urlencoded' }, params.toString(), true);
      if (r.status !== 200 || r.body.includes('"error"')) throw new Error(`InfluxQL ${q.slice(0, 200)}: ${r.status} ${r.body.slice(0, 500)}`);
      return r;
    },
    async writeBatches(db, batches, concurrency) {
      const target = `${url}/write?db=${encodeURIComponent(db)}&precision=s`;
      const t0 = performance.now();
      await mapConcurrent(batches, concurrency, async (body) => {
        const r = await timedRequest(target, 'POST', { 'content-type': 'text/plain' }, body);
        if (r.status !== 204) throw new Error(`InfluxDB write: ${r.status} ${r.body}`);
      });
      return performance.now() - t0;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return influx;
}
