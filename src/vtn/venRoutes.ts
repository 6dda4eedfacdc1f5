// /api/openadr/v1/vens and /api/openadr/v1/vens/{venID}/resources — VENs and their resources.
import { querySchema } from '../http/schemas.ts';
import type { RouteDef } from '../http/types.ts';
import { SCOPES } from './access.ts';
import { pageQuery, targetQuery, VTN, type VtnDeps } from './context.ts';
import { collectionRoutes, kindOperations } from './crud.ts';
import { createResource, deleteResource, getResource, listResources, updateResource, type ResourceBody, type ResourceQuery } from './resources.ts';
import { name128, resourceSchema, venSchema } from './schemas.ts';
import { createVen, deleteVen, getVen, listVens, updateVen, type VenBody, type VenQuery } from './vens.ts';

export function venRoutes(deps: VtnDeps): RouteDef[] {
  return [
    ...collectionRoutes<VenQuery, VenBody>({
      path: `${VTN}/vens`,
      idParam: 'venID',
      noun: 'ven',
      schema: venSchema,
      example: { venName: 'ven-north-17', targets: [{ type: 'GROUP', values: ['north'] }], attributes: [{ type: 'LOCATION', values: [{ x: 10.75, y: 59.91 }] }] },
      query: querySchema({ venName: { ...name128, description: 'Keep the VEN with this name.' }, ...targetQuery, ...pageQuery }),
      readScopes: SCOPES.readVens,
      writeScopes: SCOPES.writeVens,
      readsFrom: () => ['VEN'],
      ...kindOperations(deps, { list: listVens, create: createVen, get: getVen, update: updateVen, remove: deleteVen }),
      notes: {
        list: 'In creation order, each with its resources. VEN clients see only the VENs bound to them (clientID).',
        create: 'venName is required and unique within the VTN (409). `resources` is ignored (use the resource endpoints). A VEN client’s VEN is bound to it and it may not set targets (403).',
        update: 'Replaces the VEN. A VEN client may not change the targets (403; omitted targets are kept). An omitted clientID keeps the binding.',
        remove: 'Deletes the VEN with its resources.',
      },
    }),
    ...collectionRoutes<ResourceQuery, ResourceBody>({
      path: `${VTN}/vens/:venID/resources`,
      idParam: 'resourceID',
      noun: 'resource',
      schema: resourceSchema,
      example: { resourceName: 'battery-1', attributes: [{ type: 'MAX_POWER_CONSUMPTION', values: [5.5] }], targets: [{ type: 'GROUP', values: ['north'] }] },
      query: querySchema({ resourceName: { ...name128, description: 'Keep the resource with this name.' }, ...targetQuery, ...pageQuery }),
      readScopes: SCOPES.readVens,
      writeScopes: SCOPES.writeVens,
      cache: deps.cache,
      readsFrom: () => ['VEN'],
      notes: {
        list: 'In creation order. 404 when the VEN does not exist or is not the caller’s.',
        create: 'resourceName is required and unique within the VEN (409); venID comes from the path.',
      },
      list: (caller, q, params) => listResources(deps.pool, caller, params.venID!, q),
      create: (caller, body, params) => createResource(deps, caller, params.venID!, body),
      get: (caller, id, params) => getResource(deps.pool, caller, params.venID!, id),
      update: (caller, id, body, params) => updateResource(deps, caller, params.venID!, id, body),
      remove: (caller, id, params) => deleteResource(deps, caller, params.venID!, id),
    }),
  ];
}
