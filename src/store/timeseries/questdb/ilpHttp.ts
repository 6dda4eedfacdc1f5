// Sending ILP chunks to QuestDB's HTTP /write over several keep-alive connections. Each request
// is one QuestDB transaction; its 204 means the rows are in the table's WAL (durable, not yet
// readable: see QuestDbTimeSeriesStore.waitApplied). A chunk is sent again after a network
// error or a 5xx until `retryMs` has passed: QuestDB's DEDUP UPSERT KEYS make a re-sent chunk
// replace itself, so a retry after an answer that was lost stores nothing twice.
import http from 'node:http';
import https from 'node:https';
import { backoffDelay } from '../../retry.ts';
import { TimeSeriesUnavailable } from '../types.ts';

/** QuestDB refused the text (a bug of ours: the rows were validated before). Not retried. */
export class IlpRefused extends Error {}

export interface IlpHttpOptions {
  /** QUESTDB_HTTP_URL; user and password in it become Basic authentication. */
  url: string;
  /** Connections (requests in flight) at most. */
  connections: number;
  retryMs: number;
}

export class IlpHttp {
  private readonly agent: http.Agent;
  private readonly target: URL;
  private readonly headers: Record<string, string>;

  constructor(private readonly options: IlpHttpOptions) {
    const url = new URL(options.url);
    this.headers = { 'content-type': 'text/plain' };
    if (url.username) this.headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    url.username = '';
    url.password = '';
    this.target = new URL('/write', url);
    const Agent = url.protocol === 'https:' ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  }

  private once(body: Uint8Array): Promise<{ status: number; text: string }> {
    const client = this.target.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = client.request(this.target, { method: 'POST', agent: this.agent, headers: { ...this.headers, 'content-length': String(body.byteLength) }, timeout: 120_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString().slice(0, 2000) }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('QuestDB /write timed out')));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Sends one chunk until it is acknowledged (204). */
  async send(body: Uint8Array): Promise<void> {
    const deadline = Date.now() + this.options.retryMs;
    for (let attempt = 0; ; attempt += 1) {
      let problem: string;
      try {
        const res = await this.once(body);
        if (res.status === 204) return;
        if (res.status < 500) throw new IlpRefused(`QuestDB refused an ILP chunk: ${res.status} ${res.text}`);
        problem = `${res.status} ${res.text}`;
      } catch (err) {
        if (err instanceof IlpRefused) throw err;
        problem = (err as Error).message;
      }
      if (Date.now() >= deadline) throw new TimeSeriesUnavailable(`QuestDB did not take the readings: ${problem}`);
      await new Promise((r) => setTimeout(r, Math.max(50, backoffDelay(attempt, { baseMs: 100, capMs: 2_000 }))));
    }
  }

  close(): void {
    this.agent.destroy();
  }
}
