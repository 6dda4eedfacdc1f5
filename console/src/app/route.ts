// A tiny hash router: the view and its state live in the URL (`#/readings?org=1&r=4,5`), so a
// view can be bookmarked, reloaded and linked, and the server serves one page for all of them.
import { useEffect, useState } from 'preact/hooks';

export const VIEWS = ['readings', 'coverage', 'demand-response', 'market'] as const;
export type ViewName = (typeof VIEWS)[number];

export interface Route {
  view: ViewName;
  params: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const [name = '', query = ''] = text.split('?', 2);
  const view = (VIEWS as readonly string[]).includes(name) ? (name as ViewName) : 'readings';
  return { view, params: new URLSearchParams(query) };
}

export function hrefOf(view: ViewName, params: Record<string, string | undefined> | URLSearchParams = {}): string {
  const p = params instanceof URLSearchParams ? new URLSearchParams(params) : new URLSearchParams();
  if (!(params instanceof URLSearchParams)) for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') p.set(k, v);
  const qs = p.toString();
  return `#/${view}${qs ? `?${qs}` : ''}`;
}

/** Replaces some parameters of the current view (history entry replaced, not pushed). */
export function setParams(changes: Record<string, string | undefined>): void {
  const route = parseHash(location.hash);
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === '') route.params.delete(k);
    else route.params.set(k, v);
  }
  history.replaceState(null, '', hrefOf(route.view, route.params));
  dispatchEvent(new HashChangeEvent('hashchange'));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
