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

export interface RawStep {
  /** Status of the answer to this step's bytes, if one came. */
  status: number | undefined;
  /** The answer's headers (names in lower case), if one came. */
  headers: Record<string, string> | undefined;
  /** The server closed the connection during this step. */
  closed: boolean;
  /** Milliseconds from this step's write to its answer or the close (or to the end of the wait). */
  ms: number;
}

/** Several requests on one connection, each written only once the previous one was answered (a
 * keep-alive client, not a pipelining one). A step ends at its complete answer, at the close, or
 * after `waitMs`; the steps after a close are not sent. */
export function rawConversation(port: number, steps: (Buffer | string)[], waitMs = 1500): Promise<RawStep[]> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const out: RawStep[] = [];
    let received = '';
    let started = 0;
    let timer: NodeJS.Timeout | undefined;
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(out);
    };
    const next = () => {
      clearTimeout(timer);
      if (closed || out.length === steps.length) return finish();
      received = '';
      started = performance.now();
      socket.write(steps[out.length]!);
      timer = setTimeout(() => {
        out.push({ status: undefined, headers: undefined, closed: false, ms: Math.round(performance.now() - started) });
        finish();
      }, waitMs);
    };
    const settle = (answer: { status: number; headers: Record<string, string> } | undefined) => {
      out.push({ status: answer?.status, headers: answer?.headers, closed, ms: Math.round(performance.now() - started) });
      next();
    };
    socket.on('data', (d) => {
      received += d.toString('latin1');
      const [answer] = parseResponses(received);
      if (answer && received.length >= received.indexOf('\r\n\r\n') + 4 + Number(answer.headers['content-length'] ?? 0)) settle(answer);
    });
    const onClose = () => {
      if (closed) return;
      closed = true;
      if (out.length < steps.length && started !== 0) settle(parseResponses(received)[0]);
      else finish();
    };
    socket.on('close', onClose);
    socket.on('error', onClose);
    socket.on('connect', next);
  });
}
