// A small client of Flex's public HTTP API for the demo seeding: JSON and form requests with a
// bearer token, the status each call must answer, and an error naming the call otherwise.

export class DemoApiError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly text: string,
  ) {
    super(`${method} ${path} answered ${status}: ${text.slice(0, 500)}`);
  }
}

export interface CallOptions {
  token?: string;
  json?: unknown;
  /** A body already written as JSON text (large reading batches). */
  jsonText?: string;
  form?: Record<string, string>;
  /** The status the call must answer (default 200). */
  expect?: number;
}

export class DemoApi {
  constructor(readonly baseUrl: string) {}

  async call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<{ body: T; headers: Headers }> {
    const headers: Record<string, string> = {};
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.json !== undefined || options.jsonText !== undefined) {
      headers['content-type'] = 'application/json';
      body = options.jsonText ?? JSON.stringify(options.json);
    } else if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body });
    const text = await res.text();
    if (res.status !== (options.expect ?? 200)) throw new DemoApiError(method, path, res.status, text);
    return { body: (text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text) as T, headers: res.headers };
  }

  get<T = any>(path: string, token: string): Promise<T> {
    return this.call<T>('GET', path, { token }).then((r) => r.body);
  }

  /** POST a JSON body; `expect` defaults to 201 (a create). */
  post<T = any>(path: string, json: unknown, token: string, expect = 201): Promise<T> {
    return this.call<T>('POST', path, { token, json, expect }).then((r) => r.body);
  }

  /** An access token by OAuth 2.0 client credentials (POST /oauth/token). */
  async token(clientId: string, clientSecret: string): Promise<string> {
    const { body } = await this.call<{ access_token: string }>('POST', '/oauth/token', { form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, audience: 'flex-api' } });
    return body.access_token;
  }
}
