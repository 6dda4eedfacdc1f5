// The OpenADR 3.1.0 surface (VTN31_BASE_PATH, default /api/openadr/3.1.0) over the same programs,
// events, reports, subscriptions, VENs and resources as /api/openadr/v1: every request goes
// through the same stores (events.ts, …: rules, privacy, outbox) after its body is mapped to the
// stored representation, and every answer is mapped back (representation.ts). Plus what only
// 3.1 has: first-level resources, the active-event filter, /auth/server, /notifiers and the MQTT
// topic endpoints. Mapping and refusals: docs/openadr-3.1.md.
import type { VtnScope } from '../../auth/catalogue.ts';
import { badRequest, forbidden, notFound } from '../../http/errors.ts';
import { INT32_MAX, objectSchema, querySchema } from '../../http/schemas.ts';
import type { ApiRequest, RouteDef } from '../../http/types.ts';
import type { Queryable } from '../../store/database.ts';
import { SCOPES, vtnAuth, vtnCaller, type VtnCaller } from '../access.ts';
import { targetFilter, targetQuery, UnknownReference, type VtnDeps } from '../context.ts';
import { collectionRoutes, type CollectionSpec } from '../crud.ts';
import { createEvent, deleteEvent, getEvent, listEvents, updateEvent } from '../events.ts';
import { operationTopics } from '../mqttTopics.ts';
import { findObject } from '../objects.ts';
import { createProgram, deleteProgram, getProgram, listPrograms, updateProgram } from '../programs.ts';
import { createReport, deleteReport, getReport, listReports, updateReport } from '../reports.ts';
import { createResource, deleteResource, getResource, listAllResources, updateResource } from '../resources.ts';
import { objectId } from '../schemas.ts';
import { query } from '../sql.ts';
import { createSubscription, deleteSubscription, getSubscription, listSubscriptions, updateSubscription } from '../subscriptions.ts';
import { targetKeys } from '../targets.ts';
import { createVen, deleteVen, getVen, listVens, updateVen } from '../vens.ts';
import { targetsTo301, to31, TO_301_OPERATION, type Operation31 } from './representation.ts';
import { authServerInfo, event31, notifiersResponse, program31, report31, resource31, subscription31, target31, topicsResponse, ven31 } from './schemas.ts';

export const TAG_PREFIX_31 = 'OpenADR 3.1.0';

export interface MqttInfo {
  uris: string[];
}

export interface V31Options {
  basePath: string;
  /** The MQTT notifier binding, or undefined when MQTT is off. */
  mqtt: () => MqttInfo | undefined;
  /** PUBLIC_BASE_URL: where clients reach the server; unset: from the request. */
  publicBaseUrl?: string;
  /** TRUST_PROXY: X-Forwarded-Proto and X-Forwarded-Host come from a proxy we trust. */
  trustProxy?: boolean;
}

const HOST = /^(?:[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** Where the client reached this server: PUBLIC_BASE_URL; else, behind a trusted proxy, the
 * first X-Forwarded-Proto/X-Forwarded-Host; else the Host header over plain http (the server
 * itself speaks no TLS). A Host that is not a host name or address (with a port) is 400: the
 * answer is a URL the client will send its secret to. */
export function requestBaseUrl(headers: Readonly<Record<string, string | undefined>>, options: Pick<V31Options, 'publicBaseUrl' | 'trustProxy'>): string {
  if (options.publicBaseUrl) return options.publicBaseUrl;
  const first = (value: string | undefined) => value?.split(',')[0]!.trim() || undefined;
  const forwardedProto = options.trustProxy ? first(headers['x-forwarded-proto'])?.toLowerCase() : undefined;
  const forwardedHost = options.trustProxy ? first(headers['x-forwarded-host']) : undefined;
  const proto = forwardedProto === 'https' || forwardedProto === 'http' ? forwardedProto : 'http';
  const host = forwardedHost ?? headers.host;
  if (host === undefined || !HOST.test(host)) {
    throw badRequest('The Host header must name this server (host or address, optional port); or configure PUBLIC_BASE_URL', [{ path: 'header.host', message: 'must be a host name or address with an optional port' }]);
  }
  return `${proto}://${host}`;
}

type Doc = Record<string, any>;
type Kind = 'PROGRAM' | 'EVENT' | 'REPORT' | 'SUBSCRIPTION' | 'VEN' | 'RESOURCE';

/** What 3.1 serves beside the stored document: `ext` fields and clientID, by object id. */
const EXTRAS: Partial<Record<Kind, string>> = {
  PROGRAM: 'SELECT id, ext, NULL AS client FROM vtn_programs WHERE organization_id = $1 AND id = ANY($2::text[]) AND ext IS NOT NULL',
  EVENT: 'SELECT id, ext, NULL AS client FROM vtn_events WHERE organization_id = $1 AND id = ANY($2::text[]) AND ext IS NOT NULL',
  REPORT: 'SELECT id, NULL::jsonb AS ext, owner_client_id AS client FROM vtn_reports WHERE organization_id = $1 AND id = ANY($2::text[])',
  SUBSCRIPTION: 'SELECT id, NULL::jsonb AS ext, owner_client_id AS client FROM vtn_subscriptions WHERE organization_id = $1 AND id = ANY($2::text[])',
  RESOURCE: `SELECT r.id, NULL::jsonb AS ext, v.client_id AS client FROM vtn_resources r
    JOIN vtn_vens v ON v.organization_id = r.organization_id AND v.id = r.ven_id WHERE r.organization_id = $1 AND r.id = ANY($2::text[])`,
};

type Extras = Map<string, { ext: Doc | null; client: string | null }>;

async function extrasOf(db: Queryable, kind: Kind, caller: VtnCaller, ids: string[]): Promise<Extras> {
  const sql = EXTRAS[kind];
  const extras: Extras = new Map();
  if (sql && ids.length > 0) {
    for (const row of await query<{ id: string; ext: Doc | null; client: string | null }>(db, sql, [caller.organizationId, ids])) extras.set(row.id, row);
  }
  return extras;
}

async function present(db: Queryable, kind: Kind, caller: VtnCaller, docs: Doc[], known?: Extras): Promise<Doc[]> {
  const extras = known ?? (await extrasOf(db, kind, caller, docs.map((d) => d.id)));
  return docs.map((d) => to31(kind, d, { ext: extras.get(d.id)?.ext, clientID: extras.get(d.id)?.client }));
}

/** Maps a stored answer (JSON text of one object or an array) to 3.1. */
async function one(db: Queryable, kind: Kind, caller: VtnCaller, json: string | undefined, known?: Extras): Promise<string | undefined> {
  if (json === undefined) return undefined;
  return JSON.stringify((await present(db, kind, caller, [JSON.parse(json) as Doc], known))[0]);
}
async function many(db: Queryable, kind: Kind, caller: VtnCaller, json: string): Promise<string> {
  return JSON.stringify(await present(db, kind, caller, JSON.parse(json) as Doc[]));
}

/** A delete's answer: what 3.1 serves beside the document is read before the row goes. */
async function removed(db: Queryable, kind: Kind, caller: VtnCaller, id: string, remove: () => Promise<string | undefined>): Promise<string | undefined> {
  const known = await extrasOf(db, kind, caller, [id]);
  return one(db, kind, caller, await remove(), known);
}

// Query parameters of 3.1.
const limit31 = { type: 'integer', minimum: 0, maximum: 50, default: 50, description: 'Maximum objects returned, 0–50 (default 50).' } as const;
const skip31 = { type: 'integer', minimum: 0, maximum: INT32_MAX, default: 0, description: 'Objects to skip (paging).' } as const;
const targetsQuery = { type: 'array', items: target31, minItems: 1, description: 'Keep objects having any of these targets (repeat the parameter).' } as const;
const page = { skip: skip31, limit: limit31 };
/** The target filters of a 3.1 list: its `targets`, and 3.0.1's `targetType` + `targetValues`,
 * which 3.1 clients written against 3.0.1 still send (docs/openadr-3.1.md, "Interoperability"). */
const targetFilters = { targets: targetsQuery, ...targetQuery };

interface Query31 {
  skip: number;
  limit: number;
  targets?: string[];
  targetType?: string;
  targetValues?: string[];
  [name: string]: unknown;
}

/** The stores' query: the target keys of 3.1's `targets` and of 3.0.1's `targetType` +
 * `targetValues` together (an object having any of them matches, as on v1, in webhook
 * subscriptions' targets and on MQTT); limit 0 answers [] without a query. */
function storeQuery(q: Query31): Query31 & { targetKeys?: string[] } {
  const { targets, targetType, targetValues, ...rest } = q;
  const keys = [...(targets ? targetKeys(targetsTo301(targets)) : []), ...(targetFilter({ targetType, targetValues }) ?? [])];
  return keys.length > 0 ? { ...rest, targetKeys: keys } : rest;
}

/** A write's unknown references (an event's program, …) are 409 here (UnknownReference). */
async function referencing<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    throw err instanceof UnknownReference ? err.asConflict() : err;
  }
}

const stripped = (body: Doc, ...names: string[]) => Object.fromEntries(Object.entries(body).filter(([k]) => !names.includes(k)));
const withTargets = (body: Doc) => ('targets' in body ? { ...body, targets: targetsTo301(body.targets) } : body);

function eventBody(body: Doc): { body: Doc; ext: Doc | null } {
  const { duration, ...rest } = body;
  const mapped = withTargets(rest);
  if (Array.isArray(mapped.reportDescriptors)) {
    mapped.reportDescriptors = mapped.reportDescriptors.map((d: Doc, i: number) => {
      if (d.reportIntervals !== undefined && d.reportIntervals !== 'INTERVALS') {
        throw badRequest('reportIntervals other than INTERVALS cannot be represented in OpenADR 3.0.1 (docs/openadr-3.1.md)', [
          { path: `reportDescriptors[${i}].reportIntervals`, message: 'must be INTERVALS' },
        ]);
      }
      return withTargets(stripped(d, 'reportIntervals'));
    });
  }
  return { body: mapped, ext: duration === undefined ? null : { duration } };
}

function programBody(body: Doc): { body: Doc; ext: Doc | null } {
  const { attributes, ...rest } = body;
  return { body: withTargets(rest), ext: attributes === undefined ? null : { attributes } };
}

function subscriptionBody(body: Doc): Doc {
  if (body.programID === undefined) {
    throw badRequest('A subscription must name its programID here: both OpenADR versions serve it, and 3.0.1 requires one (docs/openadr-3.1.md)', [
      { path: 'programID', message: 'is required' },
    ]);
  }
  const mapped = withTargets(stripped(body, 'clientID'));
  mapped.objectOperations = (body.objectOperations as Doc[]).map((o) => ({ ...o, operations: (o.operations as Operation31[]).map((op) => TO_301_OPERATION[op]) }));
  return mapped;
}

/** A report as stored: without clientID (the writer's); no programID = the event's (reports.ts). */
const reportBody = (body: Doc): Doc => stripped(body, 'clientID');

/** The VEN of a resource the caller may see, or undefined. */
async function resourceVen(db: Queryable, caller: VtnCaller, id: string): Promise<string | undefined> {
  const found = await findObject(db, 'vtn_resources', caller, id, { visibility: 'resource', columns: 't.ven_id AS "venId"' });
  return found?.venId as string | undefined;
}

export function v31Routes(deps: VtnDeps, options: V31Options): RouteDef[] {
  const base = options.basePath;
  const db = deps.pool;
  const spec = <Q, B>(s: Omit<CollectionSpec<Q, B>, 'cache' | 'tagPrefix'>): CollectionSpec<Q, B> => ({ ...s, cache: deps.cache, tagPrefix: TAG_PREFIX_31 });
  const empty = (q: Query31) => q.limit === 0;

  const routes: RouteDef[] = [
    ...collectionRoutes<Query31, Doc>(
      spec({
        path: `${base}/programs`,
        idParam: 'programID',
        noun: 'program',
        schema: program31,
        example: { programName: 'ResTOU', intervalPeriod: { start: '2024-06-15T00:00:00Z', duration: 'P1Y' }, targets: ['group-1'], attributes: [{ type: 'CUSTOMER_CLASS', values: ['residential'] }] },
        query: querySchema({ ...targetFilters, ...page }),
        readScopes: SCOPES.readPrograms,
        writeScopes: SCOPES.writePrograms,
        readsFrom: (caller) => (caller.ven ? ['PROGRAM', 'VEN'] : ['PROGRAM']),
        list: async (caller, q) => (empty(q) ? '[]' : many(db, 'PROGRAM', caller, await listPrograms(db, caller, storeQuery(q)))),
        create: async (caller, body) => {
          const m = programBody(body);
          return (await one(db, 'PROGRAM', caller, await createProgram(deps, caller, m.body as never, m.ext)))!;
        },
        get: async (caller, id) => one(db, 'PROGRAM', caller, await getProgram(db, caller, id)),
        update: async (caller, id, body) => {
          const m = programBody(body);
          return one(db, 'PROGRAM', caller, await updateProgram(deps, caller, id, m.body as never, m.ext));
        },
        remove: (caller, id) => removed(db, 'PROGRAM', caller, id, () => deleteProgram(deps, caller, id)),
      }),
    ),
    ...collectionRoutes<Query31, Doc>(
      spec({
        path: `${base}/events`,
        idParam: 'eventID',
        noun: 'event',
        schema: event31,
        example: {
          programID: 'program-1',
          eventName: 'Evening peak',
          priority: 0,
          targets: ['group-1'],
          duration: 'PT2H',
          intervalPeriod: { start: '2024-06-15T16:00:00Z', duration: 'PT1H' },
          intervals: [{ id: 0, payloads: [{ type: 'PRICE', values: [1.25] }] }],
        },
        query: querySchema({ programID: { ...objectId, description: 'Keep events of this program.' }, ...targetFilters, active: { type: 'boolean', description: 'true: leave out events that have ended (their span, docs/vtn.md, ends before now).' }, ...page }),
        readScopes: SCOPES.readEvents,
        writeScopes: SCOPES.writeEvents,
        readsFrom: (caller) => (caller.ven ? ['EVENT', 'VEN'] : ['EVENT']),
        notes: { list: 'active=true keeps events whose span has not ended (the time of the request); not cached beyond the read cache lifetime.' },
        list: async (caller, q) => {
          if (empty(q)) return '[]';
          const { active, ...rest } = storeQuery(q);
          const window = active === true ? { 'x-start': new Date().toISOString() } : {};
          return many(db, 'EVENT', caller, await listEvents(db, caller, { ...(rest as object), ...window } as never));
        },
        create: async (caller, body) => {
          const m = eventBody(body);
          return (await one(db, 'EVENT', caller, await referencing(createEvent(deps, caller, m.body as never, m.ext))))!;
        },
        get: async (caller, id) => one(db, 'EVENT', caller, await getEvent(db, caller, id)),
        update: async (caller, id, body) => {
          // An unknown id is 404 before anything in the body is looked at.
          if ((await getEvent(db, caller, id)) === undefined) return undefined;
          const m = eventBody(body);
          return one(db, 'EVENT', caller, await referencing(updateEvent(deps, caller, id, m.body as never, m.ext)));
        },
        remove: (caller, id) => removed(db, 'EVENT', caller, id, () => deleteEvent(deps, caller, id)),
      }),
    ),
    ...collectionRoutes<Query31, Doc>(
      spec({
        path: `${base}/reports`,
        idParam: 'reportID',
        noun: 'report',
        schema: report31,
        example: {
          eventID: 'event-1',
          clientName: 'VEN-1',
          reportName: 'Usage',
          resources: [{ resourceName: 'meter-1', intervalPeriod: { start: '2024-06-15T16:00:00Z', duration: 'PT1H' }, intervals: [{ id: 0, payloads: [{ type: 'USAGE', values: [2.5] }] }] }],
        },
        query: querySchema({ programID: objectId, eventID: objectId, clientName: { type: 'string', minLength: 1, maxLength: 128 }, ...page }),
        readScopes: SCOPES.readReports,
        writeScopes: SCOPES.writeReports,
        readsFrom: () => ['REPORT'],
        notes: { create: 'programID may be left out (3.1): it is the event’s.' },
        list: async (caller, q) => (empty(q) ? '[]' : many(db, 'REPORT', caller, await listReports(db, caller, storeQuery(q) as never))),
        create: async (caller, body) => (await one(db, 'REPORT', caller, await referencing(createReport(deps, caller, reportBody(body) as never))))!,
        get: async (caller, id) => one(db, 'REPORT', caller, await getReport(db, caller, id)),
        update: async (caller, id, body) => one(db, 'REPORT', caller, await referencing(updateReport(deps, caller, id, reportBody(body) as never))),
        remove: (caller, id) => removed(db, 'REPORT', caller, id, () => deleteReport(deps, caller, id)),
      }),
    ),
    ...collectionRoutes<Query31, Doc>(
      spec({
        path: `${base}/subscriptions`,
        idParam: 'subscriptionID',
        noun: 'subscription',
        schema: subscription31,
        example: {
          clientName: 'VEN-1',
          programID: 'program-1',
          objectOperations: [{ objects: ['EVENT'], operations: ['CREATE', 'UPDATE', 'DELETE'], callbackUrl: 'https://ven.example.com/notify', bearerToken: 'secret' }],
          targets: ['group-1'],
        },
        query: querySchema({ programID: objectId, clientName: { type: 'string', minLength: 1, maxLength: 128 }, objects: { type: 'array', items: { type: 'string', enum: ['PROGRAM', 'EVENT', 'REPORT', 'SUBSCRIPTION', 'VEN', 'RESOURCE'] } }, ...targetFilters, ...page }),
        readScopes: SCOPES.readSubscriptions,
        writeScopes: SCOPES.writeSubscriptions,
        readsFrom: () => ['SUBSCRIPTION'],
        viewerOf: (caller) => `client:${caller.clientId}`,
        notes: { create: 'programID is required here (3.0.1 requires it and both versions serve the subscription).' },
        list: async (caller, q) => (empty(q) ? '[]' : many(db, 'SUBSCRIPTION', caller, await listSubscriptions(db, caller, storeQuery(q) as never))),
        create: async (caller, body) => (await one(db, 'SUBSCRIPTION', caller, await referencing(createSubscription(deps, caller, subscriptionBody(body) as never, '3.1.0'))))!,
        get: async (caller, id) => one(db, 'SUBSCRIPTION', caller, await getSubscription(db, caller, id)),
        update: async (caller, id, body) => {
          if ((await getSubscription(db, caller, id)) === undefined) return undefined;
          return one(db, 'SUBSCRIPTION', caller, await referencing(updateSubscription(deps, caller, id, subscriptionBody(body) as never, '3.1.0')));
        },
        remove: (caller, id) => removed(db, 'SUBSCRIPTION', caller, id, () => deleteSubscription(deps, caller, id)),
      }),
    ),
    ...collectionRoutes<Query31, Doc>(
      spec({
        path: `${base}/vens`,
        idParam: 'venID',
        noun: 'ven',
        schema: ven31,
        example: { objectType: 'BL_VEN_REQUEST', venName: 'VEN-1', clientID: 'ven-client-1', targets: ['group-1'], attributes: [{ type: 'LOCATION', values: ['north'] }] },
        query: querySchema({ venName: { type: 'string', minLength: 1, maxLength: 128 }, ...targetFilters, ...page }),
        readScopes: SCOPES.readVens,
        writeScopes: SCOPES.writeVens,
        readsFrom: () => ['VEN'],
        list: async (caller, q) => (empty(q) ? '[]' : many(db, 'VEN', caller, await listVens(db, caller, storeQuery(q) as never))),
        create: async (caller, body) => (await one(db, 'VEN', caller, await createVen(deps, caller, withTargets(stripped(body, 'objectType')) as never)))!,
        get: async (caller, id) => one(db, 'VEN', caller, await getVen(db, caller, id)),
        update: async (caller, id, body) => one(db, 'VEN', caller, await updateVen(deps, caller, id, withTargets(stripped(body, 'objectType')) as never)),
        remove: async (caller, id) => one(db, 'VEN', caller, await deleteVen(deps, caller, id)),
      }),
    ),
    ...collectionRoutes<Query31, Doc>(
      spec({
        path: `${base}/resources`,
        idParam: 'resourceID',
        noun: 'resource',
        schema: resource31,
        example: { objectType: 'BL_RESOURCE_REQUEST', resourceName: 'battery-1', venID: 'ven-1', clientID: 'ven-client-1', targets: ['group-1'], attributes: [{ type: 'MAX_POWER_CONSUMPTION', values: [5] }] },
        query: querySchema({ venID: objectId, resourceName: { type: 'string', minLength: 1, maxLength: 128 }, ...targetFilters, ...page }),
        readScopes: SCOPES.readVens,
        writeScopes: SCOPES.writeVens,
        readsFrom: () => ['VEN'],
        notes: { create: 'venID names the VEN (it must exist and be visible: else 409); clientID is the VEN’s and is ignored.', update: 'A resource cannot move to another VEN (400).' },
        list: async (caller, q) => (empty(q) ? '[]' : many(db, 'RESOURCE', caller, await listAllResources(db, caller, storeQuery(q) as never))),
        create: async (caller, body) => {
          // venID is a reference in the body here (in the path on v1: 404 there).
          if (!(await findObject(db, 'vtn_vens', caller, body.venID, { visibility: 'ven' }))) throw new UnknownReference(`Ven ${body.venID} does not exist`, 'venID', 'must name an existing VEN').asConflict();
          return (await one(db, 'RESOURCE', caller, await createResource(deps, caller, body.venID, withTargets(stripped(body, 'objectType', 'clientID', 'venID')) as never)))!;
        },
        get: async (caller, id) => {
          const ven = await resourceVen(db, caller, id);
          return ven === undefined ? undefined : one(db, 'RESOURCE', caller, await getResource(db, caller, ven, id));
        },
        update: async (caller, id, body) => {
          const ven = await resourceVen(db, caller, id);
          if (ven === undefined) return undefined;
          if (body.venID !== ven) throw badRequest('A resource cannot move to another VEN', [{ path: 'venID', message: `must be ${ven}` }]);
          return one(db, 'RESOURCE', caller, await updateResource(deps, caller, ven, id, withTargets(stripped(body, 'objectType', 'clientID', 'venID')) as never));
        },
        remove: async (caller, id) => {
          const ven = await resourceVen(db, caller, id);
          return ven === undefined ? undefined : removed(db, 'RESOURCE', caller, id, () => deleteResource(deps, caller, ven, id));
        },
      }),
    ),
  ];
  return [...routes, ...notifierRoutes(deps, options)];
}

/** OpenADR 3.1's optional `POST /auth/token`: the platform's token endpoint (`/oauth/token`, the
 * same rules, rate limits and errors), with `audience` defaulting to the first TOKEN_AUDIENCES
 * entry, since OpenADR clients do not send one. */
export function openAdr31TokenRoute(oauthToken: RouteDef, basePath: string, audience: string): RouteDef {
  return {
    ...oauthToken,
    path: `${basePath}/auth/token`,
    tags: [`${TAG_PREFIX_31}: auth`],
    summary: 'Get an access token (OpenADR 3.1 client credentials)',
    description: `${oauthToken.description ?? ''} Here \`audience\` may be left out: it defaults to \`${audience}\`.`,
    bodyExample: { grant_type: 'client_credentials', client_id: 'c_9d2f6a1b3e', client_secret: 'the-secret-shown-once' },
    handler: (req) => {
      const body = { audience, ...(req.body as object) };
      // The request's other members may be accessors of its class: a proxy keeps them.
      return oauthToken.handler(new Proxy(req, { get: (target, name) => (name === 'body' ? body : Reflect.get(target, name, target)) }));
    },
  };
}

const ANY_READ: VtnScope[] = ['read_all', 'read_targets', 'read_ven_objects'];

/** /auth/server, /notifiers and the MQTT topic names. */
function notifierRoutes(deps: VtnDeps, options: V31Options): RouteDef[] {
  const base = options.basePath;
  const tags = [`${TAG_PREFIX_31}: notifiers`];
  const common = { tags, contentTypeErrorStatus: 415 as const };
  const topicsReply = (topics: unknown) => ({ status: 200, body: { topics } });
  const responses = { 200: { description: 'Topic names by operation', schema: topicsResponse } };
  const mqttOn = () => {
    if (!options.mqtt()) throw notFound('The MQTT notifier (MQTT_ENABLED=false)');
  };
  /** read_bl: topics of whole collections are for business-logic clients. */
  const blOnly = (req: ApiRequest) => {
    mqttOn();
    const caller = vtnCaller(req.principal);
    if (caller.ven) throw forbidden('These topics are for business-logic clients; a VEN subscribes under its own VEN: GET …/notifiers/mqtt/topics/vens/{venID}/…');
    return caller;
  };
  const venOf = async (req: ApiRequest<{ venID: string }>) => {
    mqttOn();
    const caller = vtnCaller(req.principal);
    const found = await findObject(deps.pool, 'vtn_vens', caller, req.params.venID, { visibility: 'ven' });
    if (!found) throw notFound(`Ven ${req.params.venID}`);
    return caller;
  };
  const collection = (path: string, summary: string): RouteDef => ({
    ...common,
    method: 'GET',
    path: `${base}/notifiers/mqtt/topics/${path}`,
    summary,
    description: 'read_bl in OpenADR 3.1: business-logic clients only (403 for VEN clients).',
    auth: vtnAuth(ANY_READ),
    responses,
    handler: async (req: ApiRequest) => topicsReply(operationTopics(blOnly(req).organizationId, path)),
  });
  const perVen = (suffix: string, summary: string): RouteDef => ({
    ...common,
    method: 'GET',
    path: `${base}/notifiers/mqtt/topics/vens/:venID${suffix}`,
    params: objectSchema({ venID: objectId }, ['venID']),
    summary,
    description: 'For the VEN’s own client (its VENs only; 404 otherwise) and business-logic clients.',
    auth: vtnAuth(ANY_READ),
    responses,
    handler: async (req: ApiRequest<{ venID: string }>) => {
      const caller = await venOf(req);
      return topicsReply(operationTopics(caller.organizationId, `vens/${req.params.venID}${suffix}`, suffix !== ''));
    },
  });
  const programTopics = (suffix: string, summary: string): RouteDef => ({
    ...common,
    method: 'GET',
    path: `${base}/notifiers/mqtt/topics/programs/:programID${suffix}`,
    params: objectSchema({ programID: objectId }, ['programID']),
    summary,
    description: 'Business-logic clients only (403 for VEN clients); 404 for an unknown program.',
    auth: vtnAuth(ANY_READ),
    responses,
    handler: async (req: ApiRequest<{ programID: string }>) => {
      const caller = blOnly(req);
      if (!(await findObject(deps.pool, 'vtn_programs', caller, req.params.programID, { visibility: 'targeted' }))) throw notFound(`Program ${req.params.programID}`);
      return topicsReply(operationTopics(caller.organizationId, `programs/${req.params.programID}${suffix}`, suffix !== ''));
    },
  });
  return [
    {
      ...common,
      tags: [`${TAG_PREFIX_31}: auth`],
      method: 'GET',
      path: `${base}/auth/server`,
      summary: 'The token endpoint',
      description:
        'tokenURL is this surface’s POST …/auth/token (client credentials grant; the platform’s /oauth/token with a default audience), at PUBLIC_BASE_URL when configured, else at the request’s Host (X-Forwarded-Proto and X-Forwarded-Host when TRUST_PROXY=true).',
      auth: 'public',
      responses: { 200: { description: 'Token endpoint', schema: authServerInfo } },
      handler: (req: ApiRequest) => ({ status: 200, body: { tokenURL: `${requestBaseUrl(req.headers, options)}${base}/auth/token` } }),
    },
    {
      ...common,
      method: 'GET',
      path: `${base}/notifiers`,
      summary: 'Notifier bindings',
      description: 'WEBHOOK always; MQTT (embedded broker or MQTT_URL) unless MQTT_ENABLED=false. Authenticate to the broker with a VTN access token as the password.',
      auth: vtnAuth(ANY_READ),
      responses: { 200: { description: 'Bindings', schema: notifiersResponse } },
      handler: () => {
        const mqtt = options.mqtt();
        const body: Record<string, unknown> = { WEBHOOK: true };
        if (mqtt) body.MQTT = { URIS: mqtt.uris, serialization: 'JSON', authentication: { method: 'OAUTH2_BEARER_TOKEN', username: '{clientID}' } };
        return { status: 200, body };
      },
    },
    collection('programs', 'MQTT topics of all programs'),
    programTopics('', 'MQTT topics of one program'),
    collection('events', 'MQTT topics of all events'),
    programTopics('/events', 'MQTT topics of a program’s events'),
    collection('reports', 'MQTT topics of all reports'),
    collection('subscriptions', 'MQTT topics of all subscriptions'),
    collection('vens', 'MQTT topics of all VENs'),
    perVen('', 'MQTT topics of one VEN'),
    collection('resources', 'MQTT topics of all resources'),
    perVen('/events', 'MQTT topics of the events a VEN may read'),
    perVen('/programs', 'MQTT topics of the programs a VEN may read'),
    perVen('/resources', 'MQTT topics of a VEN’s resources'),
  ];
}

