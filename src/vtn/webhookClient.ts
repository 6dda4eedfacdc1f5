// One webhook POST: keep-alive connections per scheme, a hard timeout on the whole exchange,
// no redirects (node:http never follows them; a 3xx is a refusal), and the internal-address
// check on every address the host resolves to (callbackUrl.ts) unless allowed. The answer is
// classified with the shared retry table: 2xx delivered; 408/425/429/5xx and network failures
// retried; anything else refused for good.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { RETRYABLE_HTTP_STATUSES } from '../store/retry.ts';
import { isLocalName } from './callbackUrl.ts';
import { specialPurposeRange } from './specialAddresses.ts';

export interface DeliveryResult {
  delivered: boolean;
  /** Worth another attempt (network failure, retryable status). */
  retryable: boolean;
  /** The shutdown cut the attempt short: neither success nor failure. */
  aborted?: boolean;
  status?: number;
  error?: string;
  /** The receiver's Retry-After, in milliseconds. */
  retryAfterMs?: number;
}

/** dns.lookup's shape; replaceable so that tests can make a name resolve anywhere. */
export type Lookup = (hostname: string, options: dns.LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void) => void;

export interface WebhookClientOptions {
  timeoutMs: number;
  allowInternal: boolean;
  maxSockets: number;
  /** Name resolution (default dns.lookup). */
  lookup?: Lookup;
}

const INTERNAL_ADDRESS = 'EINTERNALADDRESS';

/** Why a resolved address may not be called, or undefined. Fails closed: what is not a valid
 * IP address is refused too. */
function refusal(address: string): string | undefined {
  if (net.isIP(address) === 0) return 'not an IP address';
  return specialPurposeRange(address);
}

/** A lookup that refuses names resolving to a special-purpose address. It runs when the socket
 * connects, so the address checked is the address called: a name re-pointed at an internal
 * address after the subscription was written (DNS rebinding) is refused too. */
function publicOnly(lookup: Lookup): Lookup {
  return (hostname, options, callback) =>
    lookup(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const addresses = Array.isArray(address) ? address.map((a) => a.address) : [address];
      for (const a of addresses) {
        const why = refusal(a);
        if (why) {
          const refused = Object.assign(new Error(`${hostname} resolves to ${a}, a special-purpose address (${why})`), { code: INTERNAL_ADDRESS });
          return callback(refused, address, family);
        }
      }
      callback(null, address, family);
    });
}

function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function classify(status: number, retryAfter: string | string[] | undefined, location: string | undefined): DeliveryResult {
  if (status >= 200 && status < 300) return { delivered: true, retryable: false, status };
  if (status >= 300 && status < 400) return { delivered: false, retryable: false, status, error: `HTTP ${status}: redirects are not followed${location ? ` (Location: ${location.slice(0, 200)})` : ''}` };
  const retryable = RETRYABLE_HTTP_STATUSES.has(status);
  return { delivered: false, retryable, status, error: `HTTP ${status}`, retryAfterMs: retryable ? retryAfterMs(retryAfter) : undefined };
}

export class WebhookClient {
  private readonly agents: { http: http.Agent; https: https.Agent };
  private readonly lookup: Lookup | undefined;

  constructor(private readonly options: WebhookClientOptions) {
    const lookup = options.lookup ?? (dns.lookup as Lookup);
    this.lookup = options.allowInternal ? options.lookup : publicOnly(lookup);
    this.agents = {
      http: new http.Agent({ keepAlive: true, maxSockets: options.maxSockets }),
      https: new https.Agent({ keepAlive: true, maxSockets: options.maxSockets }),
    };
  }

  post(target: string, body: string, headers: Record<string, string>, signal: AbortSignal): Promise<DeliveryResult> {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return Promise.resolve({ delivered: false, retryable: false, error: 'callbackUrl is not a valid URL' });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.resolve({ delivered: false, retryable: false, error: 'callbackUrl must use http or https' });
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    // An IP literal is connected to without a lookup: check it here.
    const literal = this.options.allowInternal ? undefined : isLocalName(host) ? 'localhost' : net.isIP(host) ? specialPurposeRange(host) : undefined;
    if (literal) return Promise.resolve({ delivered: false, retryable: false, error: `callbackUrl points at a special-purpose address (${literal})` });
    const secure = url.protocol === 'https:';
    return new Promise<DeliveryResult>((resolve) => {
      let settled = false;
      const finish = (result: DeliveryResult) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      };
      const request = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? this.agents.https : this.agents.http,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: this.lookup as never,
      });
      // The whole exchange, connection to last byte, gets timeoutMs.
      const timer = setTimeout(() => request.destroy(new Error(`no complete answer within ${this.options.timeoutMs} ms`)), this.options.timeoutMs);
      const onAbort = () => {
        finish({ delivered: false, retryable: true, aborted: true, error: 'shutting down' });
        request.destroy();
      };
      signal.addEventListener('abort', onAbort);
      request.on('response', (res) => {
        const result = classify(res.statusCode ?? 0, res.headers['retry-after'], res.headers.location);
        // Drain the body so the connection can be reused; its content does not matter.
        res.on('data', () => undefined);
        res.on('end', () => {
          clearTimeout(timer);
          finish(result);
        });
        res.on('error', (err) => finish({ delivered: false, retryable: true, status: res.statusCode, error: err.message }));
      });
      request.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        finish({ delivered: false, retryable: err.code !== INTERNAL_ADDRESS, error: err.code ? `${err.code}: ${err.message}` : err.message });
      });
      request.end(body);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
