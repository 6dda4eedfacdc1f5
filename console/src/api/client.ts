// Every call the console makes goes through here, to this server's public API with the signed-in
// token, so the console shows exactly what the token may see. A refused call becomes an ApiError
// (api/errors.ts) whose message the view shows instead of an empty chart.
import { ApiError, errorOf } from './errors.ts';
import { currentSession, signOut } from './session.ts';

export { ApiError };

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  query?: Record<string, string | number | readonly (string | number)[] | undefined>;
  json?: unknown;
  signal?: AbortSignal;
}

export function buildUrl(path: string, query: CallOptions['query'] = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    params.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** Calls the API and returns the response's text (JSON parsing is the caller's, so that large
 * readings responses can be timed and parsed once). */
export async function callText(path: string, options: CallOptions = {}): Promise<string> {
  const session = currentSession();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (session) headers.authorization = `Bearer ${session.token}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(buildUrl(path, options.query), {
      method: options.method ?? 'GET',
      headers,
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
      signal: options.signal,
      cache: 'no-store',
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, `The server cannot be reached: ${(err as Error).message}`);
  }
  if (!res.ok) {
    const error = await errorOf(res);
    if (error.status === 401 && session) signOut('expired');
    throw error;
  }
  return res.text();
}

export async function call<T>(path: string, options: CallOptions = {}): Promise<T> {
  const text = await callText(path, options);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Every page of a VTN listing (`skip`/`limit`, at most 50 per page), up to `max` objects. */
export async function allPages<T>(path: string, query: CallOptions['query'] = {}, max = 2000): Promise<T[]> {
  const out: T[] = [];
  for (let skip = 0; skip < max; skip += 50) {
    const page = await call<T[]>(path, { query: { ...query, skip, limit: 50 } });
    out.push(...page);
    if (page.length < 50) break;
  }
  return out;
}
