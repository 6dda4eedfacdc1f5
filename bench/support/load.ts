// Runs autocannon as a separate process (so the load generator does not share the server's
// event loop) and reduces its JSON to the figures we report.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface LoadResult {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  total: number;
}

export interface LoadOptions {
  name: string;
  url: string;
  connections?: number;
  durationSeconds?: number;
  headers?: Record<string, string>;
  method?: string;
  body?: string;
  warmupSeconds?: number;
}

const hasTaskset = spawnSync('which', ['taskset']).status === 0;

/** On a 2-core machine the load generator and the server fight for CPU; pinning them to
 * different cores (server on the last core, generator on core 0) makes runs repeatable. */
export function pinServerToLastCore(): void {
  const cores = os.availableParallelism();
  if (hasTaskset && cores >= 2) spawnSync('taskset', ['-a', '-cp', String(cores - 1), String(process.pid)]);
}

function generator(command: string, args: string[]): [string, string[]] {
  return hasTaskset && os.availableParallelism() >= 2 ? ['taskset', ['-c', '0', command, ...args]] : [command, args];
}

export function runLoad(o: LoadOptions): Promise<LoadResult> {
  const args = [
    path.join(ROOT, 'node_modules/autocannon/autocannon.js'),
    '-j',
    '-c',
    String(o.connections ?? 50),
    '-d',
    String(o.durationSeconds ?? 10),
    '-m',
    o.method ?? 'GET',
  ];
  if (o.warmupSeconds) args.push('--warmup', '[', '-c', String(o.connections ?? 50), '-d', String(o.warmupSeconds), ']');
  for (const [k, v] of Object.entries(o.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (o.body) args.push('-b', o.body);
  args.push(o.url);
  return new Promise((resolve, reject) => {
    const [command, fullArgs] = generator(process.execPath, args);
    const child = spawn(command, fullArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon failed (${code}): ${err}`));
      // With --warmup autocannon prints the warm-up summary line first; the run is the last line.
      const r = JSON.parse(out.trim().split('\n').pop()!);
      resolve({
        name: o.name,
        requestsPerSecond: Math.round(r.requests.average),
        p50Ms: r.latency.p50,
        p99Ms: r.latency.p99,
        errors: r.errors + r.timeouts,
        non2xx: r.non2xx,
        total: r.requests.total,
      });
    });
  });
}

export function printTable(rows: Record<string, unknown>[]): void {
  console.table(rows);
}

export function writeResults(name: string, data: unknown): string {
  const dir = path.join(ROOT, 'bench/results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

function runCommand(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const [cmd, fullArgs] = generator(command, args);
    const child = spawn(cmd, fullArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', () => resolve(out));
  });
}

/** wrk (C, Debian package `wrk`) generates load with far less CPU than autocannon, so on a
 * small machine it shows more of the server's own ceiling. Optional: undefined when absent.
 * It runs asynchronously: the server under test may live in this very process. */
export async function runWrk(o: LoadOptions): Promise<LoadResult | undefined> {
  if (spawnSync('which', ['wrk']).status !== 0) return undefined;
  const common = ['-t', '1', '-c', String(o.connections ?? 50), '--latency'];
  const rest: string[] = [];
  for (const [k, v] of Object.entries(o.headers ?? {})) rest.push('-H', `${k}: ${v}`);
  rest.push(o.url);
  if (o.warmupSeconds) await runCommand('wrk', [...common, '-d', `${o.warmupSeconds}s`, ...rest]);
  const out = await runCommand('wrk', [...common, '-d', `${o.durationSeconds ?? 10}s`, ...rest]);
  const ms = (label: string) => {
    const m = new RegExp(`\\s${label}%\\s+([\\d.]+)(us|ms|s)`).exec(out);
    if (!m) return NaN;
    const v = Number(m[1]);
    return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
  };
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    name: `${o.name} [wrk]`,
    requestsPerSecond: Math.round(Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0)),
    p50Ms: ms('50'),
    p99Ms: ms('99'),
    errors: errors ? errors.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    total: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
  };
}
