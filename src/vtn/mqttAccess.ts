// What an MQTT session may receive, decided again for every message the embedded broker delivers
// or queues (aedes' `authorizeForward`, synchronous, once per message and subscriber: the
// fan-out's hot path), so that a filter stored or granted earlier never outlives the rights
// behind it. The rules are the REST privacy rules (access.ts, targets.ts), held in memory per
// credential:
// - a business-logic client receives everything under its organization's prefix;
// - a VEN client receives, under `vens/<venID>/` of a VEN bound to it now, a program or an event
//   that is untargeted or shares a target key with what reaches that VEN (its reach: the keys the
//   MQTT outbox routes by, `venReachKeys`), and a VEN or a resource it owns (a VEN's own deletion
//   reaches the client it was bound to when deleted);
// - nothing else: another organization's topics, `$SYS`, a message whose object is unknown.
// The rights of a credential are read at CONNECT, at a SUBSCRIBE naming a VEN they do not hold,
// and whenever the broker publishes a change of a VEN or a resource of its organization (before
// publishing anything after it, so no later message is judged by older rights). A revoked
// credential (deleted, secret rotated, organization without OpenADR) loses its sessions, live
// and persistent, at the broker's periodic check (mqttBroker.ts).
import type { Queryable } from '../store/database.ts';
import { topicPrefix } from './mqttTopics.ts';
import { VEN_NAME_TARGET } from './targets.ts';

/** SQL for the target keys reaching VEN row `v`: those the MQTT outbox routes a VEN's programs
 * and events by (mqttTopics.ts), its targets and its name. */
function venReachKeys(v: string): string {
  return `(${v}.target_keys || ('${VEN_NAME_TARGET}' || chr(31) || ${v}.ven_name))`;
}

/** What a published message is about, given by the publisher beside the payload. */
export interface MessageAbout {
  /** The object's kind (PROGRAM, EVENT, REPORT, SUBSCRIPTION, VEN, RESOURCE). */
  kind: string;
  /** CREATE, UPDATE or DELETE. */
  operation: string;
  /** The credential owning the object (a VEN's or a resource's VEN's client), if any. */
  owner: string | null;
  /** The object's target keys (targets.ts); empty: untargeted. */
  keys: readonly string[];
}

/** The rights of one credential (as one kind of client) in its organization. Shared by all the
 * sessions of that credential; updated in place. */
export interface Rights {
  readonly key: string;
  readonly organizationId: number;
  /** The credential's public client id (or `user:<id>`). */
  readonly subject: string;
  readonly ven: boolean;
  /** Under the organization's topics, with a trailing slash. */
  readonly prefix: string;
  /** The VENs bound to this credential, each with the target keys reaching it (VEN clients). */
  vens: ReadonlyMap<string, ReadonlySet<string>>;
  /** The ids of those VENs (what the SUBSCRIBE check takes). */
  venIds: ReadonlySet<string>;
}

const NONE: ReadonlyMap<string, ReadonlySet<string>> = new Map();
const NO_IDS: ReadonlySet<string> = new Set();
const VENS = 'vens/';

/** Whether a session with these rights may receive a message on `topic` about `about`. */
export function mayDeliver(rights: Rights, topic: string, about: MessageAbout | undefined): boolean {
  if (!topic.startsWith(rights.prefix)) return false;
  if (!rights.ven) return true;
  if (!about || !topic.startsWith(VENS, rights.prefix.length)) return false;
  const start = rights.prefix.length + VENS.length;
  const end = topic.indexOf('/', start);
  if (end === -1) return false;
  const reach = rights.vens.get(topic.slice(start, end));
  switch (about.kind) {
    case 'PROGRAM':
    case 'EVENT':
      return reach !== undefined && (about.keys.length === 0 || about.keys.some((k) => reach.has(k)));
    case 'RESOURCE':
      return reach !== undefined && about.owner === rights.subject;
    case 'VEN':
      return about.owner === rights.subject && (reach !== undefined || about.operation === 'DELETE');
    default:
      return false;
  }
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
      const rights: Rights = { key, organizationId, subject, ven, prefix: topicPrefix(organizationId), vens: NONE, venIds: NO_IDS };
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
    for (const { rights } of this.entries.values()) if (rights.ven && (!organizations || organizations.has(rights.organizationId))) out.push(rights);
    return out;
  }

  /** Reads the VENs of these VEN clients' credentials and their reach now (one query). */
  async refresh(list: readonly Rights[]): Promise<void> {
    const ven = list.filter((r) => r.ven);
    if (ven.length === 0) return;
    const { rows } = await this.db.query<{ org: number; client: string; id: string; keys: string[] }>({
      name: 'vtn_mqtt_rights',
      text: `SELECT q.org, q.client, v.id, ${venReachKeys('v')} AS keys
             FROM unnest($1::int[], $2::text[]) AS q(org, client)
             JOIN vtn_vens v ON v.organization_id = q.org AND v.client_id = q.client`,
      values: [ven.map((r) => r.organizationId), ven.map((r) => r.subject)],
    });
    const found = new Map<string, Map<string, ReadonlySet<string>>>();
    for (const row of rows) {
      const key = `${row.org}:${row.client}`;
      let vens = found.get(key);
      if (!vens) found.set(key, (vens = new Map()));
      vens.set(row.id, new Set(row.keys));
    }
    for (const rights of ven) {
      rights.vens = found.get(`${rights.organizationId}:${rights.subject}`) ?? NONE;
      rights.venIds = new Set(rights.vens.keys());
    }
  }
}
