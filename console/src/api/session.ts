// The signed-in token, kept in sessionStorage only (gone when the tab closes; never in
// localStorage or a cookie). Two ways in: a personal access token as it is, or an OAuth client's
// id and secret exchanged at /oauth/token (the secret is not kept).
import { ApiError, errorOf } from './errors.ts';
import type { Me } from './types.ts';

const KEY = 'flex.console.session';

export interface Session {
  token: string;
  method: 'pat' | 'client';
  /** Client id for client credentials; absent for a personal access token. */
  clientId?: string;
  /** Epoch ms when a client-credentials token expires. */
  expiresAt?: number;
  me: Me;
}

type Listener = (session: Session | undefined, reason?: string) => void;
const listeners = new Set<Listener>();

export function onSessionChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function currentSession(): Session | undefined {
  const text = sessionStorage.getItem(KEY);
  if (!text) return undefined;
  try {
    const session = JSON.parse(text) as Session;
    if (session.expiresAt && session.expiresAt <= Date.now()) return undefined;
    return session;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(session));
  for (const l of listeners) l(session);
}

export function signOut(reason?: string): void {
  sessionStorage.removeItem(KEY);
  for (const l of listeners) l(undefined, reason);
}

async function whoAmI(token: string): Promise<Me> {
  const res = await fetch('/api/me', { headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, cache: 'no-store' });
  if (!res.ok) throw await errorOf(res);
  return (await res.json()) as Me;
}

export async function signInWithToken(token: string): Promise<Session> {
  const trimmed = token.trim();
  const session: Session = { token: trimmed, method: 'pat', me: await whoAmI(trimmed) };
  saveSession(session);
  return session;
}

export async function signInWithClient(clientId: string, clientSecret: string, audience: string): Promise<Session> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId.trim(), client_secret: clientSecret, audience: audience.trim() });
  const res = await fetch('/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: form, cache: 'no-store' });
  if (!res.ok) {
    const error = await errorOf(res);
    // The token endpoint's 401 means a wrong id or secret, not an expired session.
    if (error.status === 401 || error.status === 400) throw new ApiError(error.status, `Sign-in refused: ${error.detail ?? error.message}`, error.detail);
    throw error;
  }
  const body = (await res.json()) as { access_token: string; expires_in: number };
  const session: Session = {
    token: body.access_token,
    method: 'client',
    clientId: clientId.trim(),
    expiresAt: Date.now() + body.expires_in * 1000,
    me: await whoAmI(body.access_token),
  };
  saveSession(session);
  return session;
}
