// What every VTN route shares: its dependencies, the write transaction that also writes the
// outbox, the common query parameters (paging, targets, time window) and JSON replies built
// from stored documents.
import { badRequest, HttpError } from '../http/errors.ts';
import { INT32_MAX } from '../http/schemas.ts';
import type { ApiReply } from '../http/types.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import { withTransaction, type Pool, type PoolClient } from '../store/database.ts';
import { enqueueMqtt, enqueueMqttMany } from './mqttTopics.ts';
import { enqueueNotifications, enqueueNotificationsMany, type Change } from './outbox.ts';
import { GROUP_OF, type CacheGroup, type ReadCache } from './readCache.ts';
import { objectId } from './schemas.ts';
import { filterKeys } from './targets.ts';

export interface VtnDeps {
  pool: Pool;
  /** Called after a commit that wrote notifications (wakes the local dispatcher). */
  notificationsWritten: () => void;
  /** Accept callback URLs on loopback and private addresses (tests, closed networks). */
  allowPrivateCallbacks: boolean;
  cache: ReadCache;
  /** MQTT notifications (mqttTopics.ts): written to their outbox with every change when set;
   * `written` wakes the publisher after the commit. */
  mqtt?: { written: () => void };
}

export const TAG_PREFIX = 'OpenADR VTN';
export const VTN = '/api/openadr/v1';

/** Runs a change, its outbox rows and its cache invalidation notice in one transaction;
 * after the commit, invalidates this instance's cache and wakes the dispatcher. */
export async function mutate<T>(deps: VtnDeps, fn: (tx: PoolClient) => Promise<{ result: T; changes: Change[] }>): Promise<T> {
  let afterCommit = () => {};
  const result = await withTransaction(deps.pool, async (tx) => {
    const { result, changes } = await fn(tx);
    afterCommit = await recordChanges(deps, tx, changes);
    return result;
  });
  afterCommit();
  return result;
}

/** Inside a transaction the caller runs (also for changes written on behalf of another domain,
 * in that domain's transaction): the outbox rows and cache notices of `changes`. Returns what to
 * do once the caller has committed (this instance's cache, waking the dispatcher and publisher). */
export async function recordChanges(deps: VtnDeps, tx: PoolClient, changes: readonly Change[]): Promise<() => void> {
  let written = 0;
  if (changes.length > 1) {
    // One statement each for the whole batch (a VEN deleted with its resources, dispatched events).
    written = await enqueueNotificationsMany(tx, changes);
    if (deps.mqtt) await enqueueMqttMany(tx, changes);
  } else {
    for (const change of changes) written += await enqueueNotifications(tx, change);
    if (deps.mqtt) for (const change of changes) await enqueueMqtt(tx, change);
  }
  const byOrganization = new Map<number, CacheGroup[]>();
  for (const c of changes) byOrganization.set(c.organizationId, [...(byOrganization.get(c.organizationId) ?? []), GROUP_OF[c.kind]]);
  for (const [organizationId, groups] of byOrganization) await deps.cache.announce(tx, organizationId, groups);
  return () => {
    for (const change of changes) deps.cache.bump(change.organizationId, GROUP_OF[change.kind]);
    if (written > 0) deps.notificationsWritten();
    if (deps.mqtt && changes.length > 0) deps.mqtt.written();
  };
}

/** A reply whose body is JSON already (stored documents, text or encoded). */
export function jsonReply(status: number, json: string | Buffer): ApiReply {
  return { status, raw: json };
}

export const pageQuery = {
  skip: { type: 'integer', minimum: 0, maximum: INT32_MAX, default: 0, description: 'Objects to skip (paging).' },
  limit: { type: 'integer', minimum: 1, maximum: 50, default: 50, description: 'Maximum objects returned, 1–50 (default 50).' },
} as const;

export const targetQuery = {
  targetType: { type: 'string', minLength: 1, maxLength: 128, description: 'With targetValues: keep objects having a target of this type with any of the values.' },
  targetValues: { type: 'array', items: { type: 'string', maxLength: 1024 }, minItems: 1, description: 'Values of targetType (repeat the parameter or separate with commas).' },
} as const;

export const windowQuery = {
  'x-start': { type: 'string', format: 'utc-date-time', description: 'Extension: keep objects whose time span overlaps [x-start, x-end).' },
  'x-end': { type: 'string', format: 'utc-date-time', description: 'Extension: see x-start.' },
} as const;

export const idQuery = objectId;

export interface PageParams {
  skip: number;
  limit: number;
}

export interface TargetParams {
  targetType?: string;
  targetValues?: string[];
  /** Keys computed by the OpenADR 3.1 surface from its `targets` parameter (not a query parameter). */
  targetKeys?: string[];
}

/** The target filter's keys, or undefined; one parameter without the other is an error. */
export function targetFilter(q: TargetParams): string[] | undefined {
  if (q.targetKeys) return q.targetKeys;
  const hasType = q.targetType !== undefined;
  const hasValues = q.targetValues !== undefined;
  if (hasType !== hasValues) {
    const missing = hasType ? 'targetValues' : 'targetType';
    throw badRequest('targetType and targetValues go together', [{ path: `query.${missing}`, message: `is required with ${hasType ? 'targetType' : 'targetValues'}` }]);
  }
  return hasType ? filterKeys(q.targetType!, q.targetValues!) : undefined;
}

export interface WindowParams {
  'x-start'?: string;
  'x-end'?: string;
}

/** The [x-start, x-end) window, checked to be non-empty. */
export function timeWindow(q: WindowParams): { start?: string; end?: string } {
  const start = q['x-start'];
  const end = q['x-end'];
  if (start !== undefined && end !== undefined && parseUtcTimestamp(start)! >= parseUtcTimestamp(end)!) {
    throw badRequest('x-end must be after x-start', [{ path: 'query.x-end', message: 'must be after x-start' }]);
  }
  return { start, end };
}

/** A body naming an object that does not exist or that the caller may not see (an event's
 * program, a report's event, …). 400 on /api/openadr/v1; the OpenADR 3.1.0 surface answers 409,
 * whose text in that document reads "Could for example be a violation of a foreign key
 * constraint" (docs/openadr-3.1.md, "Interoperability"). */
export class UnknownReference extends HttpError {
  constructor(detail: string, path: string, message: string) {
    super('validation_failed', detail, { errors: [{ path, message }] });
  }

  asConflict(): HttpError {
    return new HttpError('conflict', this.message, { errors: this.errors });
  }
}
