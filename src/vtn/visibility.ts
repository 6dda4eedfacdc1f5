// Who reads what in a VTN: the one rule behind REST privacy (objects.ts), webhook matching
// (outbox.ts), the MQTT per-VEN topics (mqttTopics.ts) and the broker's check at delivery.
//
// Programs and events are for everyone when untargeted; a targeted one reaches a VEN when it
// shares a target key with the VEN's reach:
//   - the VEN's own `targets`;
//   - the `targets` of the VEN's resources (OpenADR 3.1.0, "Object Privacy": a VEN is granted
//     the targets "in their associated ven or resource objects");
//   - `VEN_NAME` with its name, when the name is granted: a business-logic client created,
//     renamed or confirmed the VEN under that name. A VEN client's own create grants nothing
//     and its rename ends the grant, so no client reaches events addressed to a name it picked
//     (another VEN's, or a deleted VEN's).
// A VEN client may set none of these (403): only business-logic clients write targets.
// The reach is stored beside each VEN (`vtn_vens.reach_keys`), recomputed in the transaction
// of every write of the VEN or of one of its resources (`refreshReach`), so every reader uses
// the same keys. A VEN client reads what any VEN bound to it (`clientID`) may read.
//
// Reports and subscriptions belong to the credential that wrote them; VENs and resources to the
// credential the VEN is bound to. Business-logic clients read everything of their organization.
import type { Queryable } from '../store/database.ts';
import type { VtnCaller } from './access.ts';
import type { ReadCache } from './readCache.ts';
import type { ObjectKind } from './schemas.ts';
import { query } from './sql.ts';
import { targetKeys, VEN_NAME_TARGET, type ValuesMap } from './targets.ts';
import { targetsTo301 } from './v31/representation.ts';

/** Recomputes what reaches one VEN (its targets, its resources' targets, its granted name). */
export async function refreshReach(tx: Queryable, organizationId: number, venId: string): Promise<void> {
  await query(
    tx,
    `UPDATE vtn_vens v SET reach_keys = ARRAY(
       SELECT DISTINCT k FROM (
         SELECT unnest(v.target_keys) AS k
         UNION ALL SELECT unnest(r.target_keys) FROM vtn_resources r WHERE r.organization_id = v.organization_id AND r.ven_id = v.id
         UNION ALL SELECT '${VEN_NAME_TARGET}' || chr(31) || v.ven_name WHERE v.name_granted
       ) keys ORDER BY k)
     WHERE v.organization_id = $1 AND v.id = $2`,
    [organizationId, venId],
  );
}

/** SQL for the target keys reaching a VEN client: the reach of every VEN bound to it. `org` and
 * `client` are SQL expressions (parameters or columns). */
export function clientReachSql(org: string, client: string): string {
  return `(SELECT coalesce(array_agg(k), '{}') FROM vtn_vens rv, unnest(rv.reach_keys) k WHERE rv.organization_id = ${org} AND rv.client_id = ${client})`;
}

/** SQL for the VEN clients an object with target keys `objectKeys` (an SQL text[]) reaches,
 * among `owners` (an SQL query of (organization_id, client_id) rows): rows (organization_id,
 * client_id), one per client with a VEN whose reach shares a key with the object. Each VEN's own
 * (short) reach is compared with the object's keys once. Comparing each subscription with its
 * client's whole reach (every key of every VEN) cost subscriptions × VENs: 0.7 s for one event
 * to 2,000 subscriptions of a client with 2,000 VENs. */
export function clientsReachedSql(owners: string, objectKeys: string): string {
  return `SELECT DISTINCT rv.organization_id, rv.client_id FROM vtn_vens rv
    WHERE (rv.organization_id, rv.client_id) IN (${owners}) AND rv.reach_keys && ${objectKeys}`;
}

/** SQL condition: a targeted object (keys in `objectKeys`, an SQL text[]) reaches VEN row `v`. */
export function reachesVenSql(objectKeys: string, v = 'v'): string {
  return `(cardinality(${objectKeys}) = 0 OR ${v}.reach_keys && ${objectKeys})`;
}

/** Whether a program or event with these target keys reaches a holder of `reach`. */
export function targetedVisible(objectKeys: readonly string[], reach: ReadonlySet<string>): boolean {
  return objectKeys.length === 0 || objectKeys.some((k) => reach.has(k));
}

/** What a VEN client reaches now: its VENs, each with its reach keys. */
export interface Reach {
  /** VEN id → the target keys reaching it. */
  readonly vens: ReadonlyMap<string, ReadonlySet<string>>;
  /** The union of the VENs' keys. */
  readonly keys: ReadonlySet<string>;
}

const parsed = new WeakMap<object, Reach>();

function reachOf(json: string | Buffer): Reach {
  if (typeof json !== 'string') {
    const known = parsed.get(json);
    if (known) return known;
  }
  const rows = JSON.parse(json.toString()) as [string, string[]][];
  const vens = new Map(rows.map(([id, keys]) => [id, new Set(keys)] as const));
  const reach: Reach = { vens, keys: new Set(rows.flatMap(([, keys]) => keys)) };
  if (typeof json !== 'string') parsed.set(json, reach);
  return reach;
}

const reachKey = (organizationId: number, clientId: string) => `${organizationId}|reach|${clientId}`;

/** The VENs bound to a client and their reach, from the read cache (kept correct by the VEN
 * group's version: any VEN or resource write anywhere invalidates it), so calling it for every
 * delivered message costs a map lookup. */
export async function loadReach(db: Queryable, cache: ReadCache, organizationId: number, clientId: string): Promise<Reach> {
  const json = await cache.get(organizationId, ['VEN'], reachKey(organizationId, clientId), async () => {
    const rows = await query<{ id: string; keys: string[] }>(db, 'SELECT id, reach_keys AS keys FROM vtn_vens WHERE organization_id = $1 AND client_id = $2 ORDER BY seq', [
      organizationId,
      clientId,
    ]);
    return JSON.stringify(rows.map((r) => [r.id, r.keys]));
  });
  return reachOf(json ?? '[]');
}

/** The reach as cached now, without waiting (aedes' `authorizeForward` is synchronous), or
 * undefined when it is not cached or stale (a VEN or resource changed since): then `loadReach`
 * and decide again. */
export function cachedReach(cache: ReadCache, organizationId: number, clientId: string): Reach | undefined {
  const json = cache.peek(organizationId, ['VEN'], reachKey(organizationId, clientId));
  return json === undefined ? undefined : reachOf(json);
}

/** An object as the privacy rule sees it. */
export interface Readable {
  kind: ObjectKind;
  /** Target keys of a program or event (targets.ts). */
  targetKeys: readonly string[];
  /** Report, subscription: its writer; VEN, resource: the VEN's client (null: unbound). */
  ownerClientId: string | null;
}

/** Whether `caller` may read the object. `reach` is required for VEN clients (loadReach). */
export function mayRead(caller: VtnCaller, reach: Reach | undefined, object: Readable): boolean {
  if (!caller.ven) return true;
  if (object.kind === 'PROGRAM' || object.kind === 'EVENT') return reach !== undefined && targetedVisible(object.targetKeys, reach.keys);
  return object.ownerClientId !== null && object.ownerClientId === caller.clientId;
}

/** The MQTT message shape (mqttPublisher.ts): a 3.1 notification. */
interface Message {
  objectType?: unknown;
  operation?: unknown;
  object?: { targets?: unknown; clientID?: unknown; venID?: unknown } | null;
}

/** The target keys of a 3.1 message's object; undefined when they are not a list of strings
 * (never published so: then nothing is delivered). */
function keysOf31(targets: unknown): string[] | undefined {
  if (targets === null || targets === undefined) return [];
  if (!Array.isArray(targets) || !targets.every((t) => typeof t === 'string')) return undefined;
  return targetKeys(targetsTo301(targets) as ValuesMap[]);
}

/**
 * Whether an MQTT message published on `topic` may be delivered to `caller` now (the broker's
 * delivery-time check). Business-logic clients get every topic of their organization. A VEN
 * client gets only its VENs' topics (`openadr3/<org>/vens/<venID>/…` of a VEN bound to it now),
 * and programs and events there only while that VEN may read them. A deletion of its own VEN or
 * resource is delivered although the object is gone: the message names the client
 * (`object.clientID`) the object belonged to.
 */
export function mayReceive(caller: VtnCaller, reach: Reach | undefined, topic: string, message: Message): boolean {
  const prefix = `openadr3/${caller.organizationId}/`;
  if (!topic.startsWith(prefix)) return false;
  if (!caller.ven) return true;
  const [collection, venId, kind] = topic.slice(prefix.length).split('/');
  if (collection !== 'vens' || venId === undefined) return false;
  const venKeys = reach?.vens.get(venId);
  if (venKeys === undefined) {
    const ownDeletion = message.operation === 'DELETE' && (message.objectType === 'VEN' || message.objectType === 'RESOURCE');
    return ownDeletion && message.object?.clientID === caller.clientId;
  }
  if (kind === 'programs' || kind === 'events') {
    const keys = keysOf31(message.object?.targets);
    return keys !== undefined && targetedVisible(keys, venKeys);
  }
  return true;
}
