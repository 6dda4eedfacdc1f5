// The platform as its own process for the meter-data benchmarks: the bench process (which
// builds 70 MB bodies, sends them and times them) then shares no event loop and no heap with
// the server, the server's peak RSS can be read from /proc, and `node --cpu-prof` can profile
// it. PostgreSQL is the embedded server with the platform's own DEFAULT_SETTINGS, started here
// so the bench can also load the same `readings` table directly (the COPY ceiling).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { pino } from 'pino';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/store/embeddedPostgres.ts';
import { timedRequest } from './measure.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface BenchDatabase {
  postgres: RunningPostgres;
  pool: pg.Pool;
  dataDir: string;
  close(): Promise<void>;
}

/** Embedded PostgreSQL 18 in a fresh temporary DATA_DIR, production settings (fsync on). */
export async function startBenchDatabase(settings: Record<string, string> = {}): Promise<BenchDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-bench-'));
  fs.chmodSync(dataDir, 0o755);
  const postgres = await startEmbeddedPostgres({ dataDir, port: 0, log: pino({ level: "error" }), settings });
  const pool = new pg.Pool({ connectionString: postgres.connectionString, max: 4 });
  return {
    postgres,
    pool,
    dataDir,
    async close() {
      await pool.end();
      await postgres.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  baseUrl: string;
  adminToken: string;
  /** SIGTERM and wait (a --cpu-prof profile is written at exit). */
  stop(): Promise<void>;
}

export interface ServerOptions {
  databaseUrl: string;
  dataDir: string;
  env?: Record<string, string>;
  /** When set, the server runs under `node --cpu-prof` and writes its profile here at exit. */
  cpuProfDir?: string;
  /** Called with each line the server writes on stdout (its log), after the start. */
  onLine?: (line: string) => void;
}

/** `node --import tsx src/main.ts` against the given database, like `npm run dev`. */
export async function startServerProcess(o: ServerOptions): Promise<ServerProcess> {
  const adminToken = `flex_pat_bench_${randomBytes(24).toString('base64url')}`;
  const serverDir = path.join(o.dataDir, 'server');
  fs.mkdirSync(serverDir, { recursive: true });
  const nodeArgs = o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`, '--cpu-prof-interval=500'] : [];
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    // MQTT_PORT 0: the embedded broker on a free port, so a Flex already running on 1883 does not
    // stop the bench's server (a bench that measures MQTT passes its own).
    env: { ...process.env, PORT: '0', MQTT_PORT: '0', LOG_LEVEL: 'info', DATA_DIR: serverDir, DATABASE_URL: o.databaseUrl, ADMIN_TOKEN: adminToken, ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.includes('"flex is listening"'));
      if (line) resolve(JSON.parse(line).port as number);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then(() => reject(new Error(`the server exited during start:\n${output}`)));
  });
  // Keep draining its output (warnings) so the pipe never fills.
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    if (!o.onLine) return;
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) o.onLine(line);
  });
  return {
    child,
    pid: child.pid!,
    baseUrl: `http://127.0.0.1:${port}`,
    adminToken,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Peak resident set size since the last reset (VmHWM), in bytes. */
export function peakRss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

export function currentRss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0: write 5 to clear_refs). False when not allowed. */
export function resetPeakRss(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface PostFigures {
  ms: number;
  /** The server's peak RSS during the POST (VmHWM, or sampled every 20 ms where it cannot be reset). */
  peakRss: number;
}

/** POST /api/readings of `body`, timed from the first byte sent to the 204. */
export async function postReadings(server: ServerProcess, token: string, body: Buffer): Promise<PostFigures> {
  const exact = resetPeakRss(server.pid);
  let sampled = currentRss(server.pid);
  const sampler = setInterval(() => (sampled = Math.max(sampled, currentRss(server.pid))), 20);
  const r = await timedRequest(`${server.baseUrl}/api/readings`, 'POST', { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body);
  clearInterval(sampler);
  if (r.status !== 204) throw new Error(`POST /api/readings: ${r.status} ${r.body.slice(0, 1000)}`);
  return { ms: r.ms, peakRss: exact ? peakRss(server.pid) : sampled };
}
