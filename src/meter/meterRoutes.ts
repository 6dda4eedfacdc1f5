// GET /api/meter, and the admin API for meters, registers and what baselines take from them:
// event days, event periods and holidays.
import { crudRoutes, storeOperations } from '../http/crudRoutes.ts';
import { badRequest, notFound, type FieldError } from '../http/errors.ts';
import { idParams, int32Id, querySchema } from '../http/schemas.ts';
import type { ApiRequest, AuthRequirement, RouteDef } from '../http/types.ts';
import type { Pool } from '../store/database.ts';
import type { TimeSeriesStore } from '../store/timeseries/types.ts';
import * as meters from './meterStore.ts';
import { validateRegisterInput } from './registerValidation.ts';
import { eventDaysSchema, eventPeriodsSchema, holidaysSchema, meterInput, meterListSchema, meterSchema, registerInput, registerSchema } from './schemas.ts';

const ADMIN: AuthRequirement = { globalAdmin: true };
/** Longest event period accepted: each local day it touches is excluded from baselines. */
const MAX_EVENT_PERIOD_MS = 31 * 86_400_000;

const periodsJson = (rows: meters.EventPeriodRow[]) => rows.map((r) => ({ start: r.start.toISOString(), end: r.end.toISOString() }));

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
    {
      method: 'GET',
      path: '/api/admin/registers/:id/event-periods',
      summary: 'Events with their times on this register',
      description:
        'Events (demand-response events, flexibility activations) on this (source) register. Baselines leave the local days they touch out of the similar days, and compare and adjust an event day over its event hours (docs/virtual-registers.md).',
      tags: ['Admin: meters'],
      auth: ADMIN,
      params: idParams('id'),
      responses: { 200: { description: 'The event periods', schema: eventPeriodsSchema } },
      async handler(req: ApiRequest<{ id: number }>) {
        if (!(await meters.getRegister(pool, req.params.id))) throw notFound(`Register ${req.params.id}`);
        return { status: 200, body: { periods: periodsJson(await meters.getEventPeriods(pool, req.params.id)) } };
      },
    },
    {
      method: 'PUT',
      path: '/api/admin/registers/:id/event-periods',
      summary: 'Replace the events with their times on this register',
      tags: ['Admin: meters'],
      auth: ADMIN,
      params: idParams('id'),
      body: eventPeriodsSchema,
      bodyExample: { periods: [{ start: '2024-01-15T16:00:00Z', end: '2024-01-15T18:00:00Z' }] },
      responses: { 200: { description: 'The event periods', schema: eventPeriodsSchema } },
      async handler(req: ApiRequest<{ id: number }, unknown, { periods: { start: string; end: string }[] }>) {
        const errors: FieldError[] = [];
        req.body.periods.forEach((p, i) => {
          const start = Date.parse(p.start);
          const end = Date.parse(p.end);
          if (!(end > start)) errors.push({ path: `periods[${i}].end`, message: 'must be after start' });
          else if (end - start > MAX_EVENT_PERIOD_MS) errors.push({ path: `periods[${i}].end`, message: 'must be at most 31 days after start' });
        });
        if (errors.length > 0) throw badRequest('Invalid event periods', errors);
        if (!(await meters.getRegister(pool, req.params.id))) throw notFound(`Register ${req.params.id}`);
        await meters.setEventPeriods(pool, req.params.id, req.body.periods);
        return { status: 200, body: { periods: periodsJson(await meters.getEventPeriods(pool, req.params.id)) } };
      },
    },
    {
      method: 'GET',
      path: '/api/admin/registers/:id/holidays',
      summary: 'Holidays of this baseline register',
      description: 'Local days the PJM and CAISO baselines of this (virtual) register class with Sundays and weekend days (docs/virtual-registers.md). No holiday calendar is built in.',
      tags: ['Admin: meters'],
      auth: ADMIN,
      params: idParams('id'),
      responses: { 200: { description: 'The holidays', schema: holidaysSchema } },
      async handler(req: ApiRequest<{ id: number }>) {
        if (!(await meters.getRegister(pool, req.params.id))) throw notFound(`Register ${req.params.id}`);
        return { status: 200, body: { days: await meters.getHolidays(pool, req.params.id) } };
      },
    },
    {
      method: 'PUT',
      path: '/api/admin/registers/:id/holidays',
      summary: 'Replace the holidays of this baseline register',
      tags: ['Admin: meters'],
      auth: ADMIN,
      params: idParams('id'),
      body: holidaysSchema,
      bodyExample: { days: ['2024-05-27', '2024-07-04'] },
      responses: { 200: { description: 'The holidays', schema: holidaysSchema } },
      async handler(req: ApiRequest<{ id: number }, unknown, { days: string[] }>) {
        if (!(await meters.getRegister(pool, req.params.id))) throw notFound(`Register ${req.params.id}`);
        await meters.setHolidays(pool, req.params.id, req.body.days);
        return { status: 200, body: { days: await meters.getHolidays(pool, req.params.id) } };
      },
    },
  ];
}
