// Small measuring tools for the meter-data benchmarks: timed HTTP requests over a keep-alive
// agent (node:http, no fetch machinery in the timing), and the statistics we report.
import fs from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export interface Timed {
  status: number;
  ms: number;
  bytes: number;
  body: string;
}

/** Sends one request; `ms` runs from just before the first body byte is handed to the socket
 * until the response has been read completely. */
export function timedRequest(url: string, method: string, headers: Record<string, string>, body?: Buffer | string, keepBody = false): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname + u.search, method, agent, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          if (keepBody || res.statusCode! >= 300) chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - t0, bytes, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    const t0 = performance.now();
    req.end(body);
  });
}

export function median(xs: readonly number[]): number {
  return percentile(xs, 50);
}

/** Nearest-rank percentile. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function spread(xs: readonly number[]): Spread {
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), runs: [...xs] };
}

/** 1234567 → "1,234,567". */
export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
export const mib = (bytes: number) => `${fmt(bytes / 2 ** 20)} MiB`;

/** Runs `fn` over `items` with at most `concurrency` in flight. */
export async function mapConcurrent<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  return out;
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Waits until the processes together use less than `share` of one core over a second (a
 * background compaction or vacuum has finished), at most `maxMs`. Returns the ms waited. */
export async function waitForCpuIdle(pids: readonly number[], share = 0.05, maxMs = 120_000): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < maxMs) {
    const before = pids.reduce((n, pid) => n + cpuSeconds(pid), 0);
    await new Promise((r) => setTimeout(r, 1000));
    const used = pids.reduce((n, pid) => n + cpuSeconds(pid), 0) - before;
    if (used < share) break;
  }
  return Date.now() - start;
}
