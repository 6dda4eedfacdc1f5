// Raw-socket HTTP for tests that send bytes no HTTP client would: one write, then everything the
// server sends until it closes the connection or `waitMs` passes.
import net from 'node:net';

export interface RawExchange {
  /** Everything received, as latin1 text. */
  text: string;
  /** Status codes of the responses received, in order. */
  statuses: number[];
  /** The server closed the connection (rather than the wait running out). */
  closed: boolean;
  /** Milliseconds from the write to the close (or to the end of the wait). */
  ms: number;
}

export function rawExchange(port: number, data: Buffer | string | (Buffer | string)[], waitMs = 1500): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let started = 0;
    let settled = false;
    const done = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const statuses = [...text.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));
      resolve({ text, statuses, closed, ms: Math.round(performance.now() - started) });
    };
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('close', () => done(true));
    socket.on('error', () => done(true));
    socket.on('connect', () => {
      started = performance.now();
      for (const part of Array.isArray(data) ? data : [data]) socket.write(part);
    });
    const timer = setTimeout(() => done(false), waitMs);
  });
}

/** Splits what a raw exchange received into responses: status, headers, body (by Content-Length;
 * `head[i]` marks the answer to a HEAD request, which has none). */
export function parseResponses(text: string, head: boolean[] = []): { status: number; headers: Record<string, string>; body: string }[] {
  const out: { status: number; headers: Record<string, string>; body: string }[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const isHead = head[out.length] === true;
    const length = isHead ? 0 : Number(headers['content-length'] ?? 0);
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

/** The HTTP servers that run on this machine: node:http always, uWebSockets.js where a build loads. */
export async function availableServerKinds(): Promise<('node' | 'uws')[]> {
  const { loadUws } = await import('../../src/http/uwsLoader.ts');
  return loadUws().ok ? ['node', 'uws'] : ['node'];
}
