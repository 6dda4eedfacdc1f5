// A grid resource bound to the OpenADR VEN resource that controls it, in its owner's VTN
// (docs/flexibility-loop.md): PUT and DELETE /api/grid/resource/{resourceId}/binding. The VTN
// is another domain: whether the VEN and its resource exist is asked through `venResources`,
// a function the wiring file passes in; what follows a binding change (transactions of the
// resource dispatched again) is `changed`, run in the binding's own database transaction.
import { HttpError, badRequest, conflict, notFound } from '../http/errors.ts';
import { idParams, int32Id, objectSchema, querySchema } from '../http/schemas.ts';
import type { ApiRequest, Principal, RouteDef } from '../http/types.ts';
import { withTransaction, type Pool, type PoolClient, type Queryable } from '../store/database.ts';
import { sqlState } from '../store/retry.ts';
import { resourceSchema, vtnId } from './resourceRoutes.ts';
import * as resources from './resourceStore.ts';

const bindingInput = objectSchema({ organizationId: int32Id, venID: vtnId, resourceID: vtnId }, ['organizationId', 'venID', 'resourceID'], { title: 'VenBindingInput' });

/** Why the VEN resource cannot be bound (`venID` or `resourceID` at fault), or undefined when it exists. */
export type VenResourceLookup = (organizationId: number, venID: string, resourceID: string) => Promise<{ path: 'venID' | 'resourceID'; message: string } | undefined>;

export interface BindingDeps {
  pool: Pool;
  venResources: VenResourceLookup;
  /** Runs inside the transaction that changed the resource's binding. */
  changed: (tx: PoolClient, resourceId: number) => Promise<void>;
  /** After that transaction committed. */
  afterCommit: () => void;
}

/** Grid resources bound to these VEN resources of one VTN, with their actual register. */
export async function resourcesBoundTo(db: Queryable, organizationId: number, venResourceIds: readonly string[]): Promise<{ resourceId: number; venResourceId: string; actualRegisterId: number | null }[]> {
  const { rows } = await db.query<{ resourceId: number; venResourceId: string; actualRegisterId: number | null }>(
    `SELECT b.resource_id AS "resourceId", b.ven_resource_id AS "venResourceId", r.actual_register_id AS "actualRegisterId"
     FROM grid_resource_bindings b JOIN grid_resources r ON r.id = b.resource_id
     WHERE b.organization_id = $1 AND b.ven_resource_id = ANY($2::text[])`,
    [organizationId, venResourceIds],
  );
  return rows;
}

/** Binding a resource needs OpenADR besides Grid (the route's own check): the VTN is the organization's. */
function requireOpenAdr(principal: Principal, organizationId: number): void {
  if (!principal.globalAdmin && !principal.features.has('OpenADR')) {
    throw new HttpError('feature_disabled', `The OpenADR feature is not enabled for organization ${organizationId}`);
  }
}

async function ownResource(db: Queryable, resourceId: number, organizationId: number): Promise<void> {
  const resource = await resources.getResource(db, resourceId);
  if (!resource || resource.organizationId !== organizationId) throw notFound(`Grid resource ${resourceId}`);
}

type BindingBody = { organizationId: number; venID: string; resourceID: string };

export function bindingRoutes(deps: BindingDeps): RouteDef[] {
  const auth = (where: 'body' | 'query') => ({ permission: 'Resource.Organization.ReadWrite', feature: 'Grid', organization: { in: where, name: 'organizationId' } }) as const;
  const reply = async (resourceId: number) => ({ status: 200, body: (await resources.getResource(deps.pool, resourceId))! });
  return [
    {
      method: 'PUT',
      path: '/api/grid/resource/:resourceId/binding',
      summary: 'Bind a grid resource to the OpenADR VEN resource that controls it',
      description:
        'The VEN and its resource must exist in the VTN of the organization owning the grid resource (features Grid and OpenADR). ' +
        'Flexibility transactions of a bound resource are dispatched to it as OpenADR events, and its usage reports become readings of the actual register ' +
        '(docs/flexibility-loop.md). A VEN resource controls at most one grid resource (409). Replaces an earlier binding; the transactions not ended yet follow it.',
      tags: ['Grid'],
      auth: auth('body'),
      params: idParams('resourceId'),
      body: bindingInput,
      bodyExample: { organizationId: 2, venID: 'Vq3nV0m2bW1xC8dE', resourceID: 'r9LkP2sQ7tUvW4xY' },
      responses: { 200: { description: 'The grid resource with its binding', schema: resourceSchema } },
      async handler(req: ApiRequest<{ resourceId: number }, unknown, BindingBody>) {
        const { organizationId, venID, resourceID } = req.body;
        requireOpenAdr(req.principal!, organizationId);
        await ownResource(deps.pool, req.params.resourceId, organizationId);
        const problem = await deps.venResources(organizationId, venID, resourceID);
        if (problem) throw badRequest('Unknown VEN resource', [{ path: problem.path, message: problem.message }]);
        try {
          await withTransaction(deps.pool, async (tx) => {
            await tx.query(
              `INSERT INTO grid_resource_bindings (resource_id, organization_id, ven_id, ven_resource_id, bound_by) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (resource_id) DO UPDATE SET organization_id = EXCLUDED.organization_id, ven_id = EXCLUDED.ven_id, ven_resource_id = EXCLUDED.ven_resource_id,
                 bound_by = EXCLUDED.bound_by, bound_at = now()`,
              [req.params.resourceId, organizationId, venID, resourceID, req.principal!.subject],
            );
            await deps.changed(tx, req.params.resourceId);
          });
        } catch (err) {
          if (sqlState(err) === '23505') throw conflict(`VEN resource ${resourceID} already controls another grid resource; unbind that one first`);
          if (sqlState(err) === '23503') throw notFound(`Grid resource ${req.params.resourceId}`);
          throw err;
        }
        deps.afterCommit();
        return reply(req.params.resourceId);
      },
    },
    {
      method: 'DELETE',
      path: '/api/grid/resource/:resourceId/binding',
      summary: 'Unbind a grid resource from its VEN resource',
      description: 'Events of its transactions not ended yet are deleted from the VTN; their dispatch becomes `none`.',
      tags: ['Grid'],
      auth: auth('query'),
      params: idParams('resourceId'),
      query: querySchema({ organizationId: int32Id }, ['organizationId']),
      responses: { 200: { description: 'The grid resource, unbound', schema: resourceSchema } },
      async handler(req: ApiRequest<{ resourceId: number }, { organizationId: number }>) {
        requireOpenAdr(req.principal!, req.query.organizationId);
        await ownResource(deps.pool, req.params.resourceId, req.query.organizationId);
        const removed = await withTransaction(deps.pool, async (tx) => {
          const { rowCount } = await tx.query('DELETE FROM grid_resource_bindings WHERE resource_id = $1', [req.params.resourceId]);
          if (rowCount === 0) return false;
          await deps.changed(tx, req.params.resourceId);
          return true;
        });
        if (!removed) throw notFound(`A binding of grid resource ${req.params.resourceId}`);
        deps.afterCommit();
        return reply(req.params.resourceId);
      },
    },
  ];
}
