// GET /api/meter, and the admin API for meters, registers and baseline event days.
import { crudRoutes, storeOperations } from '../http/crudRoutes.ts';
import { notFound } from '../http/errors.ts';
import { idParams, int32Id, querySchema } from '../http/schemas.ts';
import type { ApiRequest, AuthRequirement, RouteDef } from '../http/types.ts';
import type { Pool } from '../store/database.ts';
import type { TimeSeriesStore } from '../store/timeseries/types.ts';
import * as meters from './meterStore.ts';
import { validateRegisterInput } from './registerValidation.ts';
import { eventDaysSchema, meterInput, meterListSchema, meterSchema, registerInput, registerSchema } from './schemas.ts';

const ADMIN: AuthRequirement = { globalAdmin: true };

export function meterRoutes(pool: Pool, store: TimeSeriesStore): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/api/meter',
      summary: 'Meters and registers of an organization',
      description: '`organizationId` is required unless the caller is a global administrator (who then sees every meter).',
      tags: ['Meters'],
      auth: { permission: 'Meter.Organization.Read', organization: { in: 'query', name: 'organizationId', optionalForGlobalAdmin: true } },
      query: querySchema({ organizationId: int32Id }),
      responses: { 200: { description: 'The meters shared with the organization and their registers', schema: meterListSchema } },
      async handler(req: ApiRequest<unknown, { organizationId?: number }>) {
        return { status: 200, body: await meters.metersOfOrganization(pool, req.query.organizationId) };
      },
    },
    ...crudRoutes<meters.Meter, meters.MeterInput>({
      basePath: '/api/admin/meters',
      noun: 'meter',
      tag: 'Admin: meters',
      auth: ADMIN,
      object: meterSchema,
      input: meterInput,
      example: { externalId: 'MTR-000123', name: 'Substation Nord main meter', type: 1, longitude: '10.7522', latitude: '59.9139', organizationsIds: [1] },
      ...storeOperations(pool, { list: meters.listMeters, get: meters.getMeter, create: meters.createMeter, update: meters.updateMeter, remove: meters.deleteMeter }),
    }),
    ...crudRoutes<meters.Register, meters.RegisterInput>({
      basePath: '/api/admin/registers',
      noun: 'register',
      tag: 'Admin: meters',
      auth: ADMIN,
      object: registerSchema,
      input: registerInput,
      example: {
        externalId: 'import-kwh',
        name: 'Active energy import',
        type: 1,
        measurementType: 1,
        measurementPrefix: 3,
        defaultResolution: 900,
        updateFrequency: 3600,
        meterId: 1,
        timeZone: 'Europe/Oslo',
        isVirtual: false,
        virtualDefinition: null,
      },
      list: (page) => meters.listRegisters(pool, page),
      get: (id) => meters.getRegister(pool, id),
      create: async (input) => {
        const { ast } = await validateRegisterInput(pool, store, undefined, input);
        return meters.insertRegister(pool, input, ast);
      },
      update: async (id, input) => {
        if (!(await meters.getRegister(pool, id))) return undefined;
        const { ast } = await validateRegisterInput(pool, store, id, input);
        return meters.replaceRegister(pool, id, input, ast, store.timeZoneChanged && ((tx, registerId) => store.timeZoneChanged!(tx, registerId)));
      },
      remove: async (id) => {
        const deleted = await meters.deleteRegister(pool, id);
        if (deleted) await store.deleteRegister(id);
        return deleted;
      },
    }),
    {
      method: 'GET',
      path: '/api/admin/registers/:id/event-days',
      summary: 'Days excluded from baselines of this register',
      description: 'Local days with demand-response events or flexibility activations on this (source) register; baselines leave them out.',
      tags: ['Admin: meters'],
      auth: ADMIN,
      params: idParams('id'),
      responses: { 200: { description: 'The event days', schema: eventDaysSchema } },
      async handler(req: ApiRequest<{ id: number }>) {
        if (!(await meters.getRegister(pool, req.params.id))) throw notFound(`Register ${req.params.id}`);
        return { status: 200, body: { days: await meters.getEventDays(pool, req.params.id) } };
      },
    },
    {
      method: 'PUT',
      path: '/api/admin/registers/:id/event-days',
      summary: 'Replace the days excluded from baselines of this register',
      tags: ['Admin: meters'],
      auth: ADMIN,
      params: idParams('id'),
      body: eventDaysSchema,
      bodyExample: { days: ['2024-01-15', '2024-01-16'] },
      responses: { 200: { description: 'The event days', schema: eventDaysSchema } },
      async handler(req: ApiRequest<{ id: number }, unknown, { days: string[] }>) {
        if (!(await meters.getRegister(pool, req.params.id))) throw notFound(`Register ${req.params.id}`);
        await meters.setEventDays(pool, req.params.id, req.body.days);
        return { status: 200, body: { days: await meters.getEventDays(pool, req.params.id) } };
      },
    },
  ];
}
