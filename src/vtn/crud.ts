// The five routes of a demand-response collection, as the interface lists them for every kind:
// GET list → 200 array; POST → 201 created object; GET one → 200; PUT → 200 updated object;
// DELETE → 200 deleted object; 404 for an unknown (or not visible) id. Bodies are JSON only
// (415 otherwise). Responses are the stored documents, sent as they are.
import type { VtnScope } from '../auth/catalogue.ts';
import { DOCUMENT_BODY_BYTES } from '../http/body.ts';
import { notFound } from '../http/errors.ts';
import { arrayOf, objectSchema } from '../http/schemas.ts';
import type { ApiRequest, JsonSchema, RouteDef } from '../http/types.ts';
import type { Queryable } from '../store/database.ts';
import { vtnAuth, vtnCaller, type VtnCaller } from './access.ts';
import { jsonReply, TAG_PREFIX, type VtnDeps } from './context.ts';
import type { CacheGroup, ReadCache } from './readCache.ts';
import { nullsAsAbsent } from './nulls.ts';
import { objectId } from './schemas.ts';

type Params = Record<string, string>;

export interface CollectionSpec<Q, B> {
  /** uWS pattern of the collection: `/api/openadr/v1/vens/:venID/resources`. */
  path: string;
  /** Name of the id path parameter: `resourceID`. */
  idParam: string;
  /** `program`, `event`, … for summaries and messages. */
  noun: string;
  schema: JsonSchema;
  /** A realistic create/replace body for the OpenAPI document. */
  example: unknown;
  query: JsonSchema;
  readScopes: readonly VtnScope[];
  writeScopes: readonly VtnScope[];
  /** Read responses are cached until a change in one of these groups (readCache.ts). */
  cache: ReadCache;
  readsFrom: (caller: VtnCaller) => readonly CacheGroup[];
  /** Whose view a read is cached for (default: each VEN client its own, business-logic clients
   * one); subscriptions show their bearer tokens to their writer only, so each caller its own. */
  viewerOf?: (caller: VtnCaller) => string;
  notes?: { list?: string; create?: string; update?: string; remove?: string };
  /** OpenAPI tag prefix (default `OpenADR VTN`; the 3.1.0 surface has its own). */
  tagPrefix?: string;
  list(caller: VtnCaller, query: Q, params: Params): Promise<string>;
  create(caller: VtnCaller, body: B, params: Params): Promise<string>;
  get(caller: VtnCaller, id: string, params: Params): Promise<string | undefined>;
  update(caller: VtnCaller, id: string, body: B, params: Params): Promise<string | undefined>;
  remove(caller: VtnCaller, id: string, params: Params): Promise<string | undefined>;
}

/** The storage functions of a top-level kind as its `<kind>s.ts` module exports them: reads take
 * a connection, writes take the VTN's deps (they record notifications and clear the read cache). */
export interface KindStore<Q, B> {
  list(db: Queryable, caller: VtnCaller, query: Q): Promise<string>;
  create(deps: VtnDeps, caller: VtnCaller, body: B): Promise<string>;
  get(db: Queryable, caller: VtnCaller, id: string): Promise<string | undefined>;
  update(deps: VtnDeps, caller: VtnCaller, id: string, body: B): Promise<string | undefined>;
  remove(deps: VtnDeps, caller: VtnCaller, id: string): Promise<string | undefined>;
}

/** The read cache and the five operations of a top-level collection, bound to the VTN's deps. */
export function kindOperations<Q, B>(deps: VtnDeps, store: KindStore<Q, B>): Pick<CollectionSpec<Q, B>, 'cache' | 'list' | 'create' | 'get' | 'update' | 'remove'> {
  return {
    cache: deps.cache,
    list: (caller, q) => store.list(deps.pool, caller, q),
    create: (caller, body) => store.create(deps, caller, body),
    get: (caller, id) => store.get(deps.pool, caller, id),
    update: (caller, id, body) => store.update(deps, caller, id, body),
    remove: (caller, id) => store.remove(deps, caller, id),
  };
}

export function collectionRoutes<Q, B>(spec: CollectionSpec<Q, B>): RouteDef[] {
  const parentParams = [...spec.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
  const params = (names: string[]) => objectSchema(Object.fromEntries(names.map((n) => [n, objectId])), names);
  const itemPath = `${spec.path}/:${spec.idParam}`;
  const title = spec.noun.charAt(0).toUpperCase() + spec.noun.slice(1);
  const tags = [`${spec.tagPrefix ?? TAG_PREFIX}: ${spec.noun}s`];
  const read = vtnAuth(spec.readScopes);
  const write = vtnAuth(spec.writeScopes);
  const common = { tags, contentTypeErrorStatus: 415 as const, bodyLimit: DOCUMENT_BODY_BYTES };
  const missing = (req: ApiRequest<Params, any, any>) => notFound(`${title} ${req.params[spec.idParam]}`);
  const found = (status: number, req: ApiRequest<Params, any, any>, doc: string | Buffer | undefined) => {
    if (doc === undefined) throw missing(req);
    return jsonReply(status, doc);
  };
  const collectionParams = parentParams.length > 0 ? { params: params(parentParams) } : {};
  // What a caller may see depends on who it is only for VEN clients.
  const viewer = spec.viewerOf ?? ((caller: VtnCaller) => (caller.ven ? `ven:${caller.clientId}` : 'bl'));
  const cached = (caller: VtnCaller, key: string, read: () => Promise<string | undefined>) =>
    spec.cache.get(caller.organizationId, spec.readsFrom(caller), `${caller.organizationId}|${viewer(caller)}|${key}`, read);
  const itemParams = { params: params([...parentParams, spec.idParam]) };
  // OpenADR clients send null for optional members they were not given (nulls.ts).
  const prepareBody = nullsAsAbsent(spec.schema);
  return [
    {
      ...common,
      ...collectionParams,
      method: 'GET',
      path: spec.path,
      summary: `Search ${spec.noun}s`,
      description: spec.notes?.list,
      auth: read,
      query: spec.query,
      responses: { 200: { description: `The ${spec.noun}s, one page`, schema: arrayOf(spec.schema) } },
      handler: async (req: ApiRequest<Params, Q>) => {
        const caller = vtnCaller(req.principal);
        const key = `${spec.path}|${JSON.stringify(req.params)}|${JSON.stringify(req.query)}`;
        return jsonReply(200, (await cached(caller, key, () => spec.list(caller, req.query, req.params)))!);
      },
    },
    {
      ...common,
      ...collectionParams,
      method: 'POST',
      path: spec.path,
      summary: `Create a ${spec.noun}`,
      description: spec.notes?.create,
      auth: write,
      body: spec.schema,
      prepareBody,
      bodyExample: spec.example,
      responses: { 201: { description: `The created ${spec.noun}`, schema: spec.schema } },
      handler: async (req: ApiRequest<Params, unknown, B>) => jsonReply(201, await spec.create(vtnCaller(req.principal), req.body, req.params)),
    },
    {
      ...common,
      ...itemParams,
      method: 'GET',
      path: itemPath,
      summary: `Get a ${spec.noun}`,
      auth: read,
      responses: { 200: { description: `The ${spec.noun}`, schema: spec.schema } },
      handler: async (req: ApiRequest<Params>) => {
        const caller = vtnCaller(req.principal);
        const key = `${itemPath}|${JSON.stringify(req.params)}`;
        return found(200, req, await cached(caller, key, () => spec.get(caller, req.params[spec.idParam]!, req.params)));
      },
    },
    {
      ...common,
      ...itemParams,
      method: 'PUT',
      path: itemPath,
      summary: `Update a ${spec.noun}`,
      description: spec.notes?.update,
      auth: write,
      body: spec.schema,
      prepareBody,
      bodyExample: spec.example,
      responses: { 200: { description: `The updated ${spec.noun}`, schema: spec.schema } },
      handler: async (req: ApiRequest<Params, unknown, B>) => found(200, req, await spec.update(vtnCaller(req.principal), req.params[spec.idParam]!, req.body, req.params)),
    },
    {
      ...common,
      ...itemParams,
      method: 'DELETE',
      path: itemPath,
      summary: `Delete a ${spec.noun}`,
      description: spec.notes?.remove,
      auth: write,
      responses: { 200: { description: `The deleted ${spec.noun}`, schema: spec.schema } },
      handler: async (req: ApiRequest<Params>) => found(200, req, await spec.remove(vtnCaller(req.principal), req.params[spec.idParam]!, req.params)),
    },
  ];
}
