// The embedded broker's sessions meet changes of rights that happen outside MQTT:
// - when the broker publishes a change of a VEN or a resource (`rightsChanged`, before routing
//   anything published after it): the rights of the organization's VEN clients are read again,
//   and a session subscribed to a VEN no longer bound to its credential is dropped, connected or
//   away (its client may connect again and subscribe to what is still its own);
// - every AUTH_CACHE_MS (`recheckSessions`): the tokens of connected sessions are read again in
//   one query (Authenticator.recheck); for those that fail, and for the persistent sessions that
//   are away, the credential is read (one more query). A token that merely expired closes its
//   connection and keeps its persistent session (the client comes back with a fresh token); a
//   credential deleted or rotated (token_version bumped), or an organization without OpenADR,
//   drops every session of it. Persistent sessions away longer than MQTT_SESSION_EXPIRY_SECONDS
//   are dropped too.
import type { Principal } from '../http/types.ts';
import type { RightsCache, Rights } from './mqttAccess.ts';
import type { Live, SessionStore } from './mqttSessions.ts';
import { venOfFilter } from './mqttTopics.ts';

export interface SessionHost {
  store: SessionStore;
  rights: RightsCache;
  auth: {
    recheck(tokens: Iterable<string>): Promise<Map<string, Principal | undefined>>;
    credentials(clientRowIds: readonly number[]): Promise<Map<number, { tokenVersion: number; features: string[] }>>;
  };
  /** The connected sessions. */
  connected(): Iterable<Live>;
  /** The filters a connected session holds. */
  filters(live: Live): string[];
  /** Ends a session, its connection and its persistent state. */
  drop(id: string, why: string): Promise<void>;
  /** Closes a session's connection, keeping its persistent state. */
  disconnect(id: string, why: string): void;
}

/** A VEN named by these filters that is no longer bound to the rights' credential. */
function lostVen(rights: Rights, filters: Iterable<string>): string | undefined {
  for (const filter of filters) {
    const venId = venOfFilter(filter, rights.caller.organizationId);
    if (venId !== undefined && !rights.venIds.has(venId)) return venId;
  }
  return undefined;
}

export async function rightsChanged(host: SessionHost, organizations: ReadonlySet<number>): Promise<void> {
  const list = host.rights.venRights(organizations);
  if (list.length === 0) return;
  await host.rights.refresh(list);
  const concerned = (rights: Rights) => rights.caller.ven && organizations.has(rights.caller.organizationId);
  for (const live of [...host.connected()]) {
    const venId = concerned(live.rights) ? lostVen(live.rights, host.filters(live)) : undefined;
    if (venId !== undefined) await host.drop(live.id, `VEN ${venId} is no longer bound to its credential`);
  }
  for (const session of [...host.store.all()]) {
    if (session.connected || !concerned(session.rights)) continue;
    const venId = lostVen(session.rights, (await host.store.subscriptionsByClient({ id: session.id })).map((s) => s.topic));
    if (venId !== undefined) await host.drop(session.id, `VEN ${venId} is no longer bound to its credential`);
  }
}

export async function recheckSessions(host: SessionHost, sessionExpiryMs: number): Promise<void> {
  const now = Date.now();
  for (const s of [...host.store.all()]) if (!s.connected && now - s.lastSeen > sessionExpiryMs) await host.drop(s.id, 'it was not connected for MQTT_SESSION_EXPIRY_SECONDS');
  const away = [...host.store.all()].filter((s) => !s.connected);
  const lives = [...host.connected()];
  if (lives.length > 0 || away.length > 0) {
    // Personal access tokens do not expire: one that fails was revoked.
    const awayUsers = away.filter((s) => s.clientRowId === null);
    const verdicts = await host.auth.recheck([...lives.map((l) => l.token), ...awayUsers.map((s) => s.token)]);
    const failing = lives.filter((l) => {
      const p = verdicts.get(l.token);
      return !p || !p.features.has('OpenADR') || p.organizationId !== l.rights.caller.organizationId;
    });
    const rowIds = new Set<number>();
    for (const l of failing) if (l.principal.clientRowId !== null) rowIds.add(l.principal.clientRowId);
    for (const s of away) if (s.clientRowId !== null) rowIds.add(s.clientRowId);
    const credentials = rowIds.size > 0 ? await host.auth.credentials([...rowIds]) : new Map<number, { tokenVersion: number; features: string[] }>();
    const revoked = (rowId: number | null, version: number | null, token: string) => {
      if (rowId === null) return !verdicts.get(token)?.features.has('OpenADR');
      const c = credentials.get(rowId);
      return !c || c.tokenVersion !== version || !c.features.includes('OpenADR');
    };
    const why = 'its credential was deleted or rotated, or lost OpenADR';
    for (const l of failing) {
      if (revoked(l.principal.clientRowId, l.tokenVersion, l.token)) await host.drop(l.id, why);
      else host.disconnect(l.id, 'its access token expired');
    }
    for (const s of away) if (host.store.get(s.id) && revoked(s.clientRowId, s.tokenVersion, s.token)) await host.drop(s.id, why);
  }
  const held = new Set<Rights>();
  for (const live of host.connected()) held.add(live.rights);
  for (const s of host.store.all()) held.add(s.rights);
  host.rights.retain(held);
}
