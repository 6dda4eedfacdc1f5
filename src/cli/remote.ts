// Remote mode of the command-line tools: the platform's API instead of its database, with a
// bearer token (an access token from POST /oauth/token, or a personal access token). Requests are
// paced under the rate limit the server announces: when X-Rate-Limit-Remaining reaches 0 the next
// request waits for X-Rate-Limit-Reset, and a 429 waits for Retry-After and is sent again.
import { setTimeout as sleep } from 'node:timers/promises';

export interface RemoteOptions {
  url: string;
  token: string;
}

export class RemoteError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly problem: { detail?: string; errors?: { path: string; message: string }[] } | undefined,
  ) {
    super(message);
  }
}

const MAX_RATE_LIMIT_RETRIES = 100;

export class RemoteApi {
  private readonly base: string;
  private notBefore = 0;
  /** Times a request waited for the rate limit (reported in the summary). */
  waits = 0;

  constructor(
    readonly options: RemoteOptions,
    private readonly signal?: AbortSignal,
  ) {
    this.base = options.url.replace(/\/+$/, '');
  }

  get where(): string {
    return this.base;
  }

  /** Sends a request; answers the response text of a 2xx, throws RemoteError otherwise. */
  async request(method: 'GET' | 'POST', path: string, body?: string): Promise<{ status: number; text: string; headers: Headers }> {
    for (let attempt = 0; ; attempt += 1) {
      const wait = this.notBefore - Date.now();
      if (wait > 0) {
        this.waits += 1;
        await sleep(wait, undefined, { signal: this.signal });
      }
      const res = await fetch(this.base + path, {
        method,
        headers: { authorization: `Bearer ${this.options.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), 'accept-encoding': 'gzip, br' },
        body,
        signal: this.signal,
      });
      const text = await res.text();
      this.pace(res.headers);
      if (res.status === 429 && attempt < MAX_RATE_LIMIT_RETRIES) {
        const seconds = Number(res.headers.get('retry-after') ?? '1');
        this.notBefore = Math.max(this.notBefore, Date.now() + (Number.isFinite(seconds) ? seconds : 1) * 1000);
        continue;
      }
      if (res.status >= 200 && res.status < 300) return { status: res.status, text, headers: res.headers };
      let problem: RemoteError['problem'];
      try {
        problem = JSON.parse(text);
      } catch {
        problem = undefined;
      }
      throw new RemoteError(`${method} ${path.split('?')[0]}: ${res.status} ${problem?.detail ?? text.slice(0, 200)}`, res.status, problem);
    }
  }

  async getJson<T>(path: string): Promise<T> {
    return JSON.parse((await this.request('GET', path)).text) as T;
  }

  private pace(headers: Headers): void {
    if (headers.get('x-rate-limit-remaining') !== '0') return;
    const reset = Date.parse(headers.get('x-rate-limit-reset') ?? '');
    if (Number.isFinite(reset)) this.notBefore = Math.max(this.notBefore, reset);
  }
}

/** `--url` and `--token` (or FLEX_URL and FLEX_TOKEN): remote mode when a URL is given. */
export function remoteOptions(url: string | undefined, token: string | undefined, env: NodeJS.ProcessEnv = process.env): RemoteOptions | string | undefined {
  const u = url ?? env.FLEX_URL;
  const t = token ?? env.FLEX_TOKEN;
  if (!u) return t ? '--token needs --url (remote mode)' : undefined;
  if (!/^https?:\/\/[^/\s]+/.test(u)) return `--url must be the server's base URL such as https://flex.example.com, got ${JSON.stringify(u)}`;
  if (!t) return 'remote mode needs --token (or FLEX_TOKEN): an access token from POST /oauth/token or a personal access token';
  return { url: u, token: t };
}
