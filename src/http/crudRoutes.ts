// The five routes of an admin collection: list, get, create (201 with the object and its id),
// replace (PUT) and delete (204). Domains supply the schemas and the storage functions.
import { notFound } from './errors.ts';
import { arrayOf, idParams, pageQueryProperties, pageReply, querySchema, totalCountHeader, type Page } from './schemas.ts';
import type { ApiRequest, AuthRequirement, JsonSchema, RouteDef } from './types.ts';

export interface CrudSpec<T, I> {
  /** `/api/admin/organizations` */
  basePath: string;
  /** Singular noun for messages and summaries: `organization`. */
  noun: string;
  tag: string;
  auth: AuthRequirement;
  /** Schema of the stored object (responses). */
  object: JsonSchema;
  /** Schema of the create/replace body. */
  input: JsonSchema;
  /** A realistic create/replace body for the OpenAPI document. */
  example: unknown;
  /** Schema of the create response when it differs (e.g. carries a one-time token). */
  created?: JsonSchema;
  /** A page in id order and the total across all pages. */
  list(page: { limit: number; offset: number }): Promise<Page<T>>;
  get(id: number): Promise<T | undefined>;
  create(input: I, req: ApiRequest): Promise<T>;
  update(id: number, input: I, req: ApiRequest): Promise<T | undefined>;
  remove(id: number, req: ApiRequest): Promise<boolean>;
}

/** A store module's five functions, each taking the database first (`identity.listRoles(pool, page)`). */
export interface CrudStore<D, T, I> {
  list(db: D, page: { limit: number; offset: number }): Promise<Page<T>>;
  get(db: D, id: number): Promise<T | undefined>;
  create(db: D, input: I): Promise<T>;
  update(db: D, id: number, input: I): Promise<T | undefined>;
  remove(db: D, id: number): Promise<boolean>;
}

/** The storage functions of a CrudSpec, taken from a store module and bound to the database. */
export function storeOperations<D, T, I>(db: D, store: CrudStore<D, T, I>): Pick<CrudSpec<T, I>, 'list' | 'get' | 'create' | 'update' | 'remove'> {
  return {
    list: (page) => store.list(db, page),
    get: (id) => store.get(db, id),
    create: (input) => store.create(db, input),
    update: (id, input) => store.update(db, id, input),
    remove: (id) => store.remove(db, id),
  };
}

export function crudRoutes<T, I>(spec: CrudSpec<T, I>): RouteDef[] {
  const { basePath, noun, tag, auth } = spec;
  const itemPath = `${basePath}/:id`;
  const title = noun.charAt(0).toUpperCase() + noun.slice(1);
  const missing = (id: number) => notFound(`${title} ${id}`);
  return [
    {
      method: 'GET',
      path: basePath,
      summary: `List ${noun}s`,
      description: `A page of ${noun}s in id order; X-Total-Count gives the number of ${noun}s across all pages.`,
      tags: [tag],
      auth,
      query: querySchema(pageQueryProperties),
      responses: { 200: { description: `The ${noun}s, by id`, schema: arrayOf(spec.object), headers: totalCountHeader } },
      handler: async (req) => pageReply(await spec.list(req.query as { limit: number; offset: number })),
    },
    {
      method: 'POST',
      path: basePath,
      summary: `Create a ${noun}`,
      tags: [tag],
      auth,
      body: spec.input,
      bodyExample: spec.example,
      responses: { 201: { description: `The created ${noun} with its id`, schema: spec.created ?? spec.object } },
      handler: async (req) => ({ status: 201, body: await spec.create(req.body as I, req) }),
    },
    {
      method: 'GET',
      path: itemPath,
      summary: `Get a ${noun}`,
      tags: [tag],
      auth,
      params: idParams('id'),
      responses: { 200: { description: `The ${noun}`, schema: spec.object } },
      handler: async (req) => {
        const found = await spec.get(req.params.id);
        if (!found) throw missing(req.params.id);
        return { status: 200, body: found };
      },
    },
    {
      method: 'PUT',
      path: itemPath,
      summary: `Replace a ${noun}`,
      tags: [tag],
      auth,
      params: idParams('id'),
      body: spec.input,
      bodyExample: spec.example,
      responses: { 200: { description: `The updated ${noun}`, schema: spec.object } },
      handler: async (req) => {
        const updated = await spec.update(req.params.id, req.body as I, req);
        if (!updated) throw missing(req.params.id);
        return { status: 200, body: updated };
      },
    },
    {
      method: 'DELETE',
      path: itemPath,
      summary: `Delete a ${noun}`,
      description: `409 when other objects still refer to the ${noun}.`,
      tags: [tag],
      auth,
      params: idParams('id'),
      responses: { 204: { description: 'Deleted' } },
      handler: async (req) => {
        if (!(await spec.remove(req.params.id, req))) throw missing(req.params.id);
        return { status: 204 };
      },
    },
  ];
}
