// What an MQTT session may receive, decided again for every message the embedded broker delivers
// or queues (aedes' `authorizeForward`, synchronous, once per message and subscriber: the
// fan-out's hot path), so that a filter stored or granted earlier never outlives the rights
// behind it. The rule is the VTN's one rule of who reads what (visibility.ts, `mayReceive`): a
// business-logic client gets its organization's topics; a VEN client the topics of a VEN bound to
// it now, and programs and events there only while they reach that VEN; the deletion of a VEN or
// resource it held. What this module adds is where the rule's inputs come from, so that the check
// needs no database round trip:
// - each credential's VENs and their reach (`vtn_vens.reach_keys`) are held in memory, shared by
//   its sessions, read when the first of its sessions connects, at a SUBSCRIBE naming a VEN they do not
//   hold, when a persistent session with waiting messages resumes, and whenever the broker
//   publishes a change of a VEN or a resource of its organization (before routing anything
//   published after it: no message is judged by rights older than the change it follows; the read
//   cache's copy, `cachedReach`, goes stale at the change's commit, before its message, and would
//   refuse messages routed in between);
// - each published payload is parsed once (`parseMessage`), not per subscriber.
// A revoked credential (deleted, secret rotated, organization without OpenADR) loses its sessions,
// live and persistent, at the broker's periodic check (mqttRevocation.ts).
import type { Queryable } from '../store/database.ts';
import type { VtnCaller } from './access.ts';
import { mayReceive, type Reach } from './visibility.ts';

/** A published notification as the rule reads it (a 3.1 notification; mqttPublisher.ts). */
export type Message = Parameters<typeof mayReceive>[3];

/** The notification in a payload; undefined when it is none (then a VEN client gets nothing). */
export function parseMessage(payload: Buffer): Message | undefined {
  try {
    const message: unknown = JSON.parse(payload.toString('utf8'));
    return typeof message === 'object' && message !== null && !Array.isArray(message) ? (message as Message) : undefined;
  } catch {
    return undefined;
  }
}

/** The rights of one credential (as one kind of client) in its organization. Shared by all the
 * sessions of that credential; updated in place. */
export interface Rights {
  readonly key: string;
  readonly caller: VtnCaller;
  /** The VENs bound to the credential and the keys reaching each (VEN clients). */
  reach: Reach;
  /** The ids of those VENs (what the SUBSCRIBE check takes). */
  venIds: ReadonlySet<string>;
}

const NO_REACH: Reach = { vens: new Map(), keys: new Set() };

/** Whether a session with these rights may receive `message` on `topic`. */
export function mayDeliver(rights: Rights, topic: string, message: Message | undefined): boolean {
  if (message === undefined) return !rights.caller.ven && topic.startsWith(`openadr3/${rights.caller.organizationId}/`);
  return mayReceive(rights.caller, rights.reach, topic, message);
}

/** How long rights nobody holds are kept (a session may be between reading and holding them). */
const KEEP_UNUSED_MS = 60_000;

/** The rights of every credential with a session, read from the database in batches. */
export class RightsCache {
  private readonly entries = new Map<string, { rights: Rights; loaded: Promise<void>; acquiredAt: number }>();

  constructor(private readonly db: Queryable) {}

  /** The rights of a credential, shared with its other sessions and updated in place. Read from
   * the database (one query for a VEN client) when no session holds them yet; once held, every
   * published change of a VEN or a resource of the organization reads them again before the
   * messages after it are routed (EmbeddedBroker.publish), so they are never older than what is
   * published. */
  async acquire(organizationId: number, subject: string, ven: boolean): Promise<Rights> {
    const key = `${ven ? 'ven' : 'bl'}:${organizationId}:${subject}`;
    let entry = this.entries.get(key);
    if (!entry) {
      const rights: Rights = { key, caller: { organizationId, clientId: subject, ven }, reach: NO_REACH, venIds: new Set() };
      const loaded = ven ? this.refresh([rights]) : Promise.resolve();
      entry = { rights, loaded, acquiredAt: 0 };
      this.entries.set(key, entry);
      loaded.catch(() => this.entries.get(key) === entry && this.entries.delete(key));
    }
    entry.acquiredAt = Date.now();
    await entry.loaded;
    return entry.rights;
  }

  /** Forgets the rights no session holds any more. */
  retain(held: Iterable<Rights>, now = Date.now()): void {
    const keep = new Set(held);
    for (const [key, entry] of this.entries) if (!keep.has(entry.rights) && now - entry.acquiredAt > KEEP_UNUSED_MS) this.entries.delete(key);
  }

  /** The VEN clients' rights held in these organizations (all when undefined). */
  venRights(organizations?: ReadonlySet<number>): Rights[] {
    const out: Rights[] = [];
    for (const { rights } of this.entries.values()) if (rights.caller.ven && (!organizations || organizations.has(rights.caller.organizationId))) out.push(rights);
    return out;
  }

  /** Reads the VENs of these VEN clients' credentials and their reach now (one query). */
  async refresh(list: readonly Rights[]): Promise<void> {
    const ven = list.filter((r) => r.caller.ven);
    if (ven.length === 0) return;
    const { rows } = await this.db.query<{ org: number; client: string; id: string; keys: string[] }>({
      name: 'vtn_mqtt_rights',
      text: `SELECT q.org, q.client, v.id, v.reach_keys AS keys
             FROM unnest($1::int[], $2::text[]) AS q(org, client)
             JOIN vtn_vens v ON v.organization_id = q.org AND v.client_id = q.client`,
      values: [ven.map((r) => r.caller.organizationId), ven.map((r) => r.caller.clientId)],
    });
    const found = new Map<string, Map<string, ReadonlySet<string>>>();
    for (const row of rows) {
      const key = `${row.org}:${row.client}`;
      let vens = found.get(key);
      if (!vens) found.set(key, (vens = new Map()));
      vens.set(row.id, new Set(row.keys));
    }
    for (const rights of ven) {
      const vens = found.get(`${rights.caller.organizationId}:${rights.caller.clientId}`) ?? new Map<string, ReadonlySet<string>>();
      rights.reach = { vens, keys: new Set([...vens.values()].flatMap((k) => [...k])) };
      rights.venIds = new Set(vens.keys());
    }
  }
}
