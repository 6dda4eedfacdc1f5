// Query-string parsing. Repeated parameters become arrays (`?registerId=1&registerId=2`), and
// parameters the route's schema declares as arrays are also split on commas
// (`?registerId=1,2`). Values stay strings here; the route's query schema coerces them.
import { HttpError } from './errors.ts';

export type RawQuery = Record<string, string | string[]>;

function decode(component: string): string {
  const spaced = component.includes('+') ? component.replace(/\+/g, ' ') : component;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    throw new HttpError('malformed_request', 'The query string contains an invalid percent-encoding');
  }
}

export function parseQuery(raw: string, arrayKeys: ReadonlySet<string> = new Set()): RawQuery {
  const out: RawQuery = Object.create(null);
  if (raw === '') return out;
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = decode(eq === -1 ? part : part.slice(0, eq));
    const value = eq === -1 ? '' : decode(part.slice(eq + 1));
    const values = arrayKeys.has(key) ? value.split(',').filter((v) => v !== '') : [value];
    const existing = out[key];
    if (existing === undefined) {
      out[key] = arrayKeys.has(key) ? values : (values[0] as string);
    } else if (Array.isArray(existing)) {
      existing.push(...values);
    } else {
      out[key] = [existing, ...values];
    }
  }
  return out;
}

/** Names of the properties a query schema declares as arrays. */
export function arrayKeysOf(schema: Record<string, unknown> | undefined): Set<string> {
  const keys = new Set<string>();
  const properties = (schema?.properties ?? {}) as Record<string, { type?: unknown }>;
  for (const [name, prop] of Object.entries(properties)) {
    if (prop.type === 'array') keys.add(name);
  }
  return keys;
}
