// Grid resources: the admin API, GET /api/grid/resource, and reference readings
// (POST /api/grid/resource/{resourceId}/readings/reference), stored as readings of the
// resource's referenceRegisterId through the time-series store.
import { PRODUCT_TYPES, REGULATION_TYPES, RESOURCE_TYPES, codeSchema } from '../codes.ts';
import { crudRoutes } from '../http/crudRoutes.ts';
import { HttpError, badRequest, notFound } from '../http/errors.ts';
import { arrayOf, dateTime, idParams, int32Id, nullable, objectSchema, querySchema, utcDateTime } from '../http/schemas.ts';
import type { ApiRequest, RouteDef } from '../http/types.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import { virtualByRegister } from '../meter/meterStore.ts';
import type { Pool } from '../store/database.ts';
import type { ReadingRows, TimeSeriesStore } from '../store/timeseries/types.ts';
import * as resources from './resourceStore.ts';

const nullableNumber = { type: ['number', 'null'] };
const nullableString = (max: number) => ({ type: ['string', 'null'], maxLength: max });
const pod = objectSchema({ podId: { type: 'string', minLength: 1, maxLength: 100 }, name: { type: 'string', maxLength: 200 }, description: { ...nullableString(1000), default: null } }, ['podId', 'name'], { title: 'Pod' });

const resourceProperties = {
  organizationId: int32Id,
  marketZoneId: nullable(int32Id, { default: null }),
  concessionAreaId: nullable(int32Id, { default: null }),
  connectedAt: nullable(utcDateTime, { default: null, description: 'When the resource was connected to the grid.' }),
  name: { type: 'string', minLength: 1, maxLength: 200 },
  longitude: { ...nullableString(64), default: null, description: 'Decimal degrees as text.' },
  latitude: { ...nullableString(64), default: null, description: 'Decimal degrees as text.' },
  contactInformation: { ...nullableString(1000), default: null },
  type: codeSchema(RESOURCE_TYPES),
  regulationType: codeSchema(REGULATION_TYPES),
  maxQuantity: { type: 'number', minimum: 0, description: 'Largest regulation, kW.' },
  endurance: { type: ['integer', 'null'], minimum: 0, default: null, description: 'Seconds the resource can sustain an activation.' },
  cooldown: { type: ['integer', 'null'], minimum: 0, default: null, description: 'Seconds needed between activations.' },
  useZeroReference: { type: 'boolean', default: false, description: 'Validate deliveries against a reference of zero.' },
  actualRegisterId: nullable(int32Id, { default: null, description: 'Register measuring the resource (net consumption).' }),
  referenceRegisterId: nullable(int32Id, { default: null, description: 'Register holding the reference (baseline) readings.' }),
  conditionalDeliveryLimit: { ...nullableNumber, default: null },
  conditionalUseDynamicDeliveryLimit: { type: 'boolean', default: false },
  conditionalAutomaticAcknowledgement: { type: 'boolean', default: false },
  allowedProducts: arrayOf(codeSchema(PRODUCT_TYPES), { uniqueItems: true, default: [] }),
  pods: arrayOf(pod, { maxItems: 1000, default: [] }),
};

/** The VTN's object ids (OpenADR `objectID`). */
export const vtnId = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[a-zA-Z0-9_-]*$' } as const;

const bindingSchema = objectSchema({ venID: vtnId, resourceID: vtnId }, ['venID', 'resourceID'], {
  title: 'VenBinding',
  description: 'The OpenADR VEN and VEN resource (VTN ids, in the owner organization’s VTN) that control the grid resource (bindings.ts).',
});

export const resourceInput = objectSchema(resourceProperties, ['organizationId', 'name', 'type', 'regulationType', 'maxQuantity'], { title: 'GridResourceInput' });

export const resourceSchema = objectSchema(
  {
    id: int32Id,
    organizationId: { type: 'integer' },
    marketZoneId: { type: ['integer', 'null'] },
    concessionAreaId: { type: ['integer', 'null'] },
    createdAt: dateTime,
    createdBy: { type: 'string' },
    connectedAt: nullable(dateTime),
    name: { type: 'string' },
    longitude: { type: ['string', 'null'] },
    latitude: { type: ['string', 'null'] },
    contactInformation: { type: ['string', 'null'] },
    type: { type: 'integer' },
    regulationType: { type: 'integer' },
    maxQuantity: { type: 'number' },
    endurance: { type: ['integer', 'null'] },
    cooldown: { type: ['integer', 'null'] },
    useZeroReference: { type: 'boolean' },
    actualRegisterId: { type: ['integer', 'null'] },
    referenceRegisterId: { type: ['integer', 'null'] },
    conditionalDeliveryLimit: { type: ['number', 'null'] },
    conditionalUseDynamicDeliveryLimit: { type: 'boolean' },
    conditionalAutomaticAcknowledgement: { type: 'boolean' },
    allowedProducts: arrayOf({ type: 'integer' }),
    pods: arrayOf(objectSchema({ podId: { type: 'string' }, name: { type: 'string' }, description: { type: ['string', 'null'] } }, ['podId', 'name', 'description'])),
    binding: nullable(bindingSchema),
  },
  Object.keys({ id: 1, createdAt: 1, createdBy: 1, ...resourceProperties, binding: 1 }),
  { title: 'GridResource' },
);

const referenceBody = objectSchema(
  {
    organizationId: int32Id,
    readings: arrayOf(
      objectSchema({ timestamp: utcDateTime, value: { type: 'number' }, resolution: { type: 'integer', minimum: 1, maximum: 366 * 86400 } }, ['timestamp', 'value', 'resolution']),
      { minItems: 1, maxItems: 200_000 },
    ),
  },
  ['organizationId', 'readings'],
  { title: 'ReferenceReadings' },
);

type ReferenceBody = { organizationId: number; readings: { timestamp: string; value: number; resolution: number }[] };

export function resourceRoutes(pool: Pool, store: TimeSeriesStore): RouteDef[] {
  return [
    ...crudRoutes<resources.GridResource, resources.GridResourceInput>({
      basePath: '/api/admin/resources',
      noun: 'grid resource',
      tag: 'Admin: grid',
      auth: { globalAdmin: true },
      object: resourceSchema,
      input: resourceInput,
      example: {
        organizationId: 2,
        marketZoneId: 1,
        name: 'Heat pump pool Nord',
        type: 1,
        regulationType: 2,
        maxQuantity: 250,
        endurance: 7200,
        cooldown: 3600,
        actualRegisterId: 12,
        referenceRegisterId: null,
        allowedProducts: [2, 4],
        pods: [{ podId: '707057500012345678', name: 'Main connection' }],
      },
      list: (page) => resources.listResources(pool, page),
      get: (id) => resources.getResource(pool, id),
      create: async (input, req) => {
        await resources.checkResourceInput(pool, input);
        return resources.createResource(pool, input, req.principal!.subject);
      },
      update: async (id, input) => {
        if (!(await resources.getResource(pool, id))) return undefined;
        await resources.checkResourceInput(pool, input);
        return resources.updateResource(pool, id, input);
      },
      remove: (id) => resources.deleteResource(pool, id),
    }),
    {
      method: 'GET',
      path: '/api/grid/resource',
      summary: 'Grid resources of an organization',
      tags: ['Grid'],
      auth: { permission: 'Resource.Organization.Read', feature: 'Grid', organization: { in: 'query', name: 'organizationId' } },
      query: querySchema({ organizationId: int32Id, marketZoneId: int32Id }, ['organizationId']),
      responses: { 200: { description: 'The organization’s resources (in the market zone, when given)', schema: arrayOf(resourceSchema) } },
      async handler(req: ApiRequest<unknown, { organizationId: number; marketZoneId?: number }>) {
        return { status: 200, body: await resources.resourcesOfOrganization(pool, req.query.organizationId, req.query.marketZoneId) };
      },
    },
    {
      method: 'POST',
      path: '/api/grid/resource/:resourceId/readings/reference',
      summary: 'Store reference readings of a grid resource',
      description:
        'Stored as readings of the resource’s referenceRegisterId (a stored, not virtual, register), with the same rules as POST /api/readings: UTC timestamps, ' +
        'the last of duplicate timestamps wins, re-posting replaces a value and moves its updatedAt, all or nothing.',
      tags: ['Grid'],
      auth: { permission: 'Planning.Organization.ReadWrite', feature: 'Grid', organization: { in: 'body', name: 'organizationId' } },
      params: idParams('resourceId'),
      bodyLimit: 'large',
      body: referenceBody,
      bodyExample: { organizationId: 1, readings: [{ timestamp: '2024-06-01T10:00:00Z', value: 12.5, resolution: 900 }, { timestamp: '2024-06-01T10:15:00Z', value: 12.1, resolution: 900 }] },
      responses: { 204: { description: 'Stored' } },
      async handler(req: ApiRequest<{ resourceId: number }, unknown, ReferenceBody>) {
        const resource = await resources.getResource(pool, req.params.resourceId);
        if (!resource || resource.organizationId !== req.body.organizationId) throw notFound(`Grid resource ${req.params.resourceId}`);
        if (resource.referenceRegisterId === null) throw new HttpError('conflict', `Grid resource ${resource.id} has no referenceRegisterId to store reference readings in`);
        const virtual = await virtualByRegister(pool, [resource.referenceRegisterId]);
        if (virtual.get(resource.referenceRegisterId)) throw new HttpError('conflict', `The reference register ${resource.referenceRegisterId} is virtual: its readings are computed`);
        await store.write({ rows: referenceRows(resource.referenceRegisterId, req.body.readings) });
        return { status: 204 };
      },
    },
  ];
}

/** Sorted by time, the last of equal timestamps kept (as in POST /api/readings). */
function referenceRows(registerId: number, readings: ReferenceBody['readings']): ReadingRows {
  const byTime = new Map<number, { value: number; resolution: number }>();
  readings.forEach((r, i) => {
    const ts = parseUtcTimestamp(r.timestamp);
    if (ts === undefined) throw badRequest('Invalid reference readings', [{ path: `readings[${i}].timestamp`, message: 'must be an ISO 8601 UTC date-time' }]);
    byTime.delete(ts);
    byTime.set(ts, { value: r.value, resolution: r.resolution });
  });
  const times = [...byTime.keys()].sort((a, b) => a - b);
  return {
    registerIds: [registerId],
    offsets: Int32Array.from([0, times.length]),
    timestamps: Float64Array.from(times),
    values: Float64Array.from(times, (t) => byTime.get(t)!.value),
    resolutions: Int32Array.from(times, (t) => byTime.get(t)!.resolution),
  };
}
