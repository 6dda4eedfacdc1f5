// Market zones and substations: the admin API, GET /api/grid/zone and
// GET /api/grid/zone/{marketZoneId}/participants.
import { TIME_RESOLUTIONS, codeSchema } from '../codes.ts';
import { crudRoutes, storeOperations } from '../http/crudRoutes.ts';
import { HttpError, notFound } from '../http/errors.ts';
import { arrayOf, dateTime, idParams, int32Id, objectSchema, querySchema } from '../http/schemas.ts';
import type { ApiRequest, RouteDef } from '../http/types.ts';
import type { Pool } from '../store/database.ts';
import * as zones from './zoneStore.ts';

const zoneInput = objectSchema(
  {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    timeResolution: codeSchema(TIME_RESOLUTIONS),
    orderQuantityResolution: { type: 'number', exclusiveMinimum: 0, description: 'Quantities of orders and offers are multiples of this (kW or kWh).' },
    organizationIds: arrayOf(int32Id, { uniqueItems: true, default: [] }),
    markets: arrayOf(objectSchema({ name: { type: 'string', minLength: 1, maxLength: 200 } }, ['name']), { default: [{ name: 'Default' }], minItems: 1, maxItems: 50 }),
  },
  ['name', 'timeResolution', 'orderQuantityResolution'],
  { title: 'MarketZoneInput' },
);

const marketSchema = objectSchema({ marketId: { type: 'integer' }, name: { type: 'string' } }, ['marketId', 'name'], { title: 'Market' });

/** The interface's Market zone; the admin API also shows its markets. */
const zoneSchema = objectSchema(
  {
    id: int32Id,
    createdBy: { type: 'string' },
    createdAt: dateTime,
    name: { type: 'string' },
    timeResolution: { type: 'integer' },
    orderQuantityResolution: { type: 'number' },
    organizationIds: arrayOf({ type: 'integer' }),
  },
  ['id', 'createdBy', 'createdAt', 'name', 'timeResolution', 'orderQuantityResolution', 'organizationIds'],
  { title: 'MarketZone' },
);
const adminZoneSchema = objectSchema(
  { ...(zoneSchema.properties as Record<string, unknown>), markets: arrayOf(marketSchema) },
  [...(zoneSchema.required as string[]), 'markets'],
  { title: 'MarketZoneWithMarkets' },
);

const participantsSchema = objectSchema(
  {
    organizations: arrayOf(
      objectSchema(
        { organizationId: { type: 'integer' }, organizationName: { type: 'string' }, resources: arrayOf(objectSchema({ resourceId: { type: 'integer' }, resourceName: { type: 'string' } }, ['resourceId', 'resourceName'])) },
        ['organizationId', 'organizationName', 'resources'],
      ),
    ),
    markets: arrayOf(marketSchema),
  },
  ['organizations', 'markets'],
  { title: 'MarketZoneParticipants' },
);

const substationInput = objectSchema(
  {
    organizationId: { ...int32Id, description: 'The grid operator owning the substation (a member of the zone).' },
    marketZoneId: int32Id,
    name: { type: 'string', minLength: 1, maxLength: 200 },
    impacts: arrayOf(objectSchema({ resourceId: int32Id, factor: { type: 'number', minimum: -1, maximum: 1 } }, ['resourceId', 'factor']), {
      default: [],
      maxItems: 10000,
      description: 'How much of a resource’s regulation reaches the substation (1 = all of it).',
    }),
  },
  ['organizationId', 'marketZoneId', 'name'],
  { title: 'SubstationInput' },
);
const substationSchema = objectSchema(
  {
    id: int32Id,
    organizationId: { type: 'integer' },
    marketZoneId: { type: 'integer' },
    name: { type: 'string' },
    impacts: arrayOf(objectSchema({ resourceId: { type: 'integer' }, factor: { type: 'number' } }, ['resourceId', 'factor'])),
  },
  ['id', 'organizationId', 'marketZoneId', 'name', 'impacts'],
  { title: 'Substation' },
);

export function zoneRoutes(pool: Pool): RouteDef[] {
  return [
    ...crudRoutes<zones.MarketZone, zones.MarketZoneInput>({
      basePath: '/api/admin/zones',
      noun: 'market zone',
      tag: 'Admin: grid',
      auth: { globalAdmin: true },
      object: adminZoneSchema,
      input: zoneInput,
      example: { name: 'NO1 south-east', timeResolution: 1, orderQuantityResolution: 0.1, organizationIds: [1, 2], markets: [{ name: 'Day-ahead' }] },
      list: (page) => zones.listZones(pool, page),
      get: (id) => zones.getZone(pool, id),
      create: (input, req) => zones.createZone(pool, input, req.principal!.subject),
      update: (id, input) => zones.updateZone(pool, id, input),
      remove: (id) => zones.deleteZone(pool, id),
    }),
    ...crudRoutes<zones.Substation, zones.SubstationInput>({
      basePath: '/api/admin/substations',
      noun: 'substation',
      tag: 'Admin: grid',
      auth: { globalAdmin: true },
      object: substationSchema,
      input: substationInput,
      example: { organizationId: 1, marketZoneId: 1, name: 'Substation Nord', impacts: [{ resourceId: 7, factor: 0.8 }] },
      ...storeOperations(pool, { list: zones.listSubstations, get: zones.getSubstation, create: zones.createSubstation, update: zones.updateSubstation, remove: zones.deleteSubstation }),
    }),
    {
      method: 'GET',
      path: '/api/grid/zone',
      summary: 'Market zones of an organization',
      description: '`organizationId` is required unless the caller is a global administrator (who then sees every zone).',
      tags: ['Grid'],
      auth: { permission: 'Organization.Organization.Read', organization: { in: 'query', name: 'organizationId', optionalForGlobalAdmin: true } },
      query: querySchema({ organizationId: int32Id }),
      responses: { 200: { description: 'The zones the organization is a member of', schema: arrayOf(zoneSchema) } },
      async handler(req: ApiRequest<unknown, { organizationId?: number }>) {
        return { status: 200, body: await zones.zonesOf(pool, req.query.organizationId) };
      },
    },
    {
      method: 'GET',
      path: '/api/grid/zone/:marketZoneId/participants',
      summary: 'Organizations (with their resources) and markets of a market zone',
      description: 'The organization must be a member of the zone.',
      tags: ['Grid'],
      auth: { permission: 'Organization.Organization.Read', feature: 'Grid', organization: { in: 'query', name: 'organizationId' } },
      params: idParams('marketZoneId'),
      query: querySchema({ organizationId: int32Id }, ['organizationId']),
      responses: { 200: { description: 'Participants and markets', schema: participantsSchema } },
      async handler(req: ApiRequest<{ marketZoneId: number }, { organizationId: number }>) {
        const { marketZoneId } = req.params;
        if (!(await zones.getZone(pool, marketZoneId))) throw notFound(`Market zone ${marketZoneId}`);
        if (!req.principal!.globalAdmin && !(await zones.isZoneMember(pool, marketZoneId, req.query.organizationId))) {
          throw new HttpError('organization_forbidden', `Organization ${req.query.organizationId} is not a member of market zone ${marketZoneId}`);
        }
        return { status: 200, body: await zones.participants(pool, marketZoneId) };
      },
    },
  ];
}
