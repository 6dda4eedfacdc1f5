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
import { isInternalAddress, isLocalName } from './callbackUrl.ts';

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

export interface WebhookClientOptions {
  timeoutMs: number;
  allowInternal: boolean;
  maxSockets: number;
}

const INTERNAL_ADDRESS = 'EINTERNALADDRESS';

/** dns.lookup that refuses names resolving to an internal address (DNS re-pointing included). */
function lookupPublicOnly(hostname: string, options: dns.LookupOptions, callback: (...args: any[]) => void): void {
  dns.lookup(hostname, options, (err, address: string | dns.LookupAddress[], family?: number) => {
    if (err) return callback(err, address, family);
    const addresses = Array.isArray(address) ? address.map((a) => a.address) : [address];
    if (addresses.some(isInternalAddress)) {
      const refused = Object.assign(new Error(`${hostname} resolves to a loopback, private or link-local address`), { code: INTERNAL_ADDRESS });
      return callback(refused, address, family);
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

  constructor(private readonly options: WebhookClientOptions) {
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
    if (!this.options.allowInternal && ((net.isIP(host) && isInternalAddress(host)) || isLocalName(host))) {
      return Promise.resolve({ delivered: false, retryable: false, error: 'callbackUrl points at a loopback, private or link-local address' });
    }
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
        lookup: this.options.allowInternal ? undefined : (lookupPublicOnly as never),
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
