// Seeds the demo world (world.ts) into a running Flex through its public HTTP API only, the way
// the parties would: the administrator sets up organizations, meters, the zone and resources;
// each organization's client posts its meter data and trades; the provider's VTN credentials
// run its programs, VENs and subscriptions. Imports nothing of the server but the code tables
// (checked by test/e2e/demo.test.ts), so it exercises exactly what users use.
import { CalculationType, DeliveryValidationStatus, MeterType } from '../../codes.ts';
import { DemoApi } from './api.ts';
import { readingsBody } from './batch.ts';
import { DAY } from './clock.ts';
import { bindLoop, reportLoopUsage, settleLoop, withoutWindows } from './loop.ts';
import { trade } from './market.ts';
import { planFor } from './plan.ts';
import { DemoData, type SeriesData } from './profiles.ts';
import type { DemoOrganization, DemoWorld } from './types.ts';
import { demandResponse } from './vtn.ts';
import { LOOP, METERS, ORGANIZATIONS, RESOURCES, SUBSTATIONS, ZONE_NAME, type OrganizationKey, type ResourceKey } from './world.ts';

export type { DemoOrganization, DemoWorld };

export interface SeedOptions {
  baseUrl: string;
  /** A global administrator's personal access token. */
  adminToken: string;
  /** Where the demo VEN receives its webhook notifications (no subscription without it). */
  venCallbackUrl?: string;
  /** The moment the world is made for (default: now). */
  now?: number;
  /** Progress lines (default: none). */
  progress?: (line: string) => void;
}

const iso = (ms: number) => new Date(ms).toISOString();
const isoDay = (ms: number) => iso(ms).slice(0, 10);

export async function seedDemo(options: SeedOptions): Promise<DemoWorld> {
  const started = performance.now();
  const api = new DemoApi(options.baseUrl);
  const admin = options.adminToken;
  const say = options.progress ?? (() => undefined);
  const now = options.now ?? Date.now();
  const today = Math.floor(now / DAY) * DAY;

  // The plan sizes orders by what the resources would use undisturbed; the readings then carry
  // the deliveries the plan trades.
  const probe = new DemoData(today - 365 * DAY, today + 40 * DAY, today);
  const plan = planFor(now, (resource, start, end) => probe.expectedEnergy(resource, start, end));
  const data = new DemoData(plan.readingsFrom, plan.readingsTo, today).withDeliveries(plan.deliveries);

  // Identity: organizations, a role and a client each, and the console user.
  const organizations = {} as Record<OrganizationKey, DemoOrganization>;
  const tokens = {} as Record<OrganizationKey, string>;
  for (const o of ORGANIZATIONS) {
    const { id } = await api.post('/api/admin/organizations', { name: o.name, features: o.features }, admin);
    const role = await api.post('/api/admin/roles', { name: `${o.name}: API client`, permissions: o.permissions }, admin);
    const client = await api.post(`/api/organization/${id}/client`, { clientName: o.clientName, rolesIds: [role.id] }, admin, 200);
    organizations[o.key] = { id, name: o.name, clientId: client.clientId, clientSecret: client.clientSecret };
    tokens[o.key] = await api.token(client.clientId, client.clientSecret);
  }
  const analyst = await api.post('/api/admin/users', { name: 'Demo analyst', organizationId: organizations[plan.vtn.owner].id, globalAdmin: true }, admin);
  say('organizations, clients and the console user created');

  // Meters and registers (measured first: virtual ones name them as sources).
  const registers: Record<string, number> = {};
  const meterIds: Record<string, number> = {};
  for (const m of METERS) {
    const meter = await api.post('/api/admin/meters', { externalId: m.externalId, name: m.name, type: MeterType.Electricity, longitude: m.longitude, latitude: m.latitude, organizationsIds: [organizations[m.owner].id] }, admin);
    meterIds[m.externalId] = meter.id;
    for (const r of m.registers.filter((x) => !x.virtual)) {
      const register = await api.post(
        '/api/admin/registers',
        { externalId: r.externalId, name: r.name, type: r.type, measurementType: r.measurementType, measurementPrefix: r.measurementPrefix, defaultResolution: r.resolution, updateFrequency: 86400, meterId: meter.id, isVirtual: false, timeZone: m.timeZone },
        admin,
      );
      registers[`${m.externalId}/${r.externalId}`] = register.id;
    }
  }
  for (const m of METERS) {
    for (const r of m.registers) {
      if (!r.virtual) continue;
      const sources = r.virtual.sources.map((s) => registers[s.includes('/') ? s : `${m.externalId}/${s}`]!);
      const virtualDefinition =
        'expression' in r.virtual ? { calculationType: CalculationType.Expression, expression: r.virtual.expression, sourceRegisters: sources } : { calculationType: CalculationType.Baseline, baselineAlgorithmType: r.virtual.baseline, sourceRegisters: sources };
      const register = await api.post(
        '/api/admin/registers',
        { externalId: r.externalId, name: r.name, type: r.type, measurementType: r.measurementType, measurementPrefix: r.measurementPrefix, defaultResolution: r.resolution, updateFrequency: 86400, meterId: meterIds[m.externalId], isVirtual: true, timeZone: m.timeZone, virtualDefinition },
        admin,
      );
      registers[`${m.externalId}/${r.externalId}`] = register.id;
    }
  }
  say(`${METERS.length} meters, ${Object.keys(registers).length} registers`);

  // Meter data: each organization's client posts a year of its meters' readings; the bound
  // battery's net energy during its deliveries is left to its VEN's usage reports (loop.ts).
  const readingsStarted = performance.now();
  const glitch = data.glitchDay();
  const loopWindows = plan.deliveries.filter((d) => d.resource === LOOP.resource);
  const loopSeries = (m: (typeof METERS)[number], r: (typeof METERS)[number]['registers'][number]) => data.series(m, r);
  const seriesOf = (m: (typeof METERS)[number], r: (typeof METERS)[number]['registers'][number]) =>
    `${m.externalId}/${r.externalId}` === LOOP.register ? withoutWindows(loopSeries(m, r), loopWindows) : r.series!.kind === 'feeder' ? withSlice(data.series(m, r), glitch.first) : data.series(m, r);
  let readings = 0;
  await Promise.all(
    ORGANIZATIONS.map(async (o) => {
      const meters = METERS.filter((m) => m.owner === o.key).map((m) => ({
        externalId: m.externalId,
        registers: m.registers.filter((r) => r.series).map((r) => ({ externalId: r.externalId, data: seriesOf(m, r) })),
      }));
      const { body, readings: count } = readingsBody(meters);
      await api.call('POST', '/api/readings', { token: tokens[o.key], jsonText: body, expect: 204 });
      readings += count;
    }),
  );
  // The feeder's meter sent a decimal slip one morning; the corrected day follows.
  const correction = readingsBody([{ externalId: 'NN-SUB-NORD', registers: [{ externalId: 'import', data: glitch.corrected }] }]);
  await api.call('POST', '/api/readings', { token: tokens.operator, jsonText: correction.body, expect: 204 });
  readings += correction.readings;
  say(`${readings.toLocaleString('en-US')} readings posted in ${((performance.now() - readingsStarted) / 1000).toFixed(1)} s`);

  // The market zone, its resources and substations.
  const zone = await api.post('/api/admin/zones', { name: ZONE_NAME, timeResolution: 1, orderQuantityResolution: 0.1, organizationIds: ORGANIZATIONS.map((o) => organizations[o.key].id) }, admin);
  const resources = {} as Record<ResourceKey, number>;
  for (const r of RESOURCES) {
    const created = await api.post(
      '/api/admin/resources',
      {
        organizationId: organizations[r.owner].id,
        marketZoneId: zone.id,
        name: r.name,
        type: r.type,
        regulationType: r.regulationType,
        maxQuantity: r.maxQuantity,
        allowedProducts: r.allowedProducts,
        actualRegisterId: registers[r.actual],
        referenceRegisterId: registers[r.reference],
      },
      admin,
    );
    resources[r.key] = created.id;
  }
  const substations: number[] = [];
  for (const s of SUBSTATIONS) {
    const impacts = Object.entries(s.impacts).map(([key, factor]) => ({ resourceId: resources[key as ResourceKey], factor }));
    substations.push((await api.post('/api/admin/substations', { organizationId: organizations.operator.id, marketZoneId: zone.id, name: s.name, impacts }, admin)).id);
  }

  // The provider's VTN, before trading: the battery's transactions are dispatched to its VEN.
  const vtn = await demandResponse(api, plan, { admin, organizations, venCallbackUrl: options.venCallbackUrl });
  say(`VTN: ${plan.vtn.programs.length} programs, ${plan.vtn.events.length} events, ${vtn.vens.length} VENs`);
  const loopContext = { polderId: organizations.polder.id, polderToken: tokens.polder, resourceId: resources[LOOP.resource], vtn };
  const bound = await bindLoop(api, loopContext);

  const market = await trade(api, plan, { admin, tokens, organizations, resources, zoneId: zone.id, substationId: substations[0]! });
  const [loopMeter, loopRegister] = LOOP.register.split('/');
  const meterPlan = METERS.find((m) => m.externalId === loopMeter)!;
  const loop = { resource: LOOP.resource, ...bound, ...(await reportLoopUsage(api, loopContext, plan.market, loopSeries(meterPlan, meterPlan.registers.find((r) => r.externalId === loopRegister)!))) };
  say(`loop: the battery's ${loop.transactions} transactions dispatched to ${LOOP.ven}, its usage during them reported by the VEN`);

  // The battery's plan for the month is its reference: the provider posts it.
  const schedule = data.schedule(plan.market.start, plan.market.end);
  await api.call('POST', `/api/grid/resource/${resources.battery}/readings/reference`, {
    token: tokens.polder,
    json: { organizationId: organizations.polder.id, readings: Array.from(schedule.values, (value, i) => ({ timestamp: iso(schedule.start + i * schedule.step), value, resolution: 900 })) },
    expect: 204,
  });

  // Delivery validation from the meter data, now (the job would wait for each period's end).
  const validated = await api.post<{ flexibilityTransactions: { deliveryValidationStatus: number }[]; availabilityTransactions: { deliveryValidationStatus: number }[] }>(
    '/api/admin/transactions/validate',
    { start: iso(plan.market.start), end: iso(plan.market.end) },
    admin,
    200,
  );
  const all = [...validated.flexibilityTransactions, ...validated.availabilityTransactions];
  const spec = await api.get<{ counterParts: { flexibilityBoughtSummary: { totalRemunerationSum: number }; availabilityBoughtSummary: { totalRemunerationSum: number } }[] }>(
    `/api/product/settlement/specification?organizationId=${organizations.operator.id}&start=${iso(plan.market.start)}&end=${iso(plan.market.end)}`,
    tokens.operator,
  );
  const settled = spec.counterParts.reduce((s, c) => s + c.flexibilityBoughtSummary.totalRemunerationSum + c.availabilityBoughtSummary.totalRemunerationSum, 0);
  // The battery's lines answered: accepted, one disputed and resolved (loop.ts).
  const agreement = await settleLoop(api, { ...loopContext, operatorId: organizations.operator.id, operatorToken: tokens.operator }, plan.market);
  say(`market: ${market.flexibility} flexibility and ${market.availability} availability transactions, ${all.filter((t) => t.deliveryValidationStatus === DeliveryValidationStatus.Validated).length} validated`);

  const firstPoolDelivery = plan.deliveries.find((d) => d.resource === 'pool')!;
  const deliveryDay = Math.floor(firstPoolDelivery.start / DAY) * DAY;
  const outageYear = new Date(today - 120 * DAY).getUTCFullYear();
  const polder = organizations.polder.id;
  return {
    seededAt: iso(now),
    seconds: Math.round(performance.now() - started) / 1000,
    readings,
    analyst: { name: analyst.name, token: analyst.token },
    organizations,
    registers,
    resources,
    marketZoneId: zone.id,
    market: { start: iso(plan.market.start), end: iso(plan.market.end), flexibilityTransactions: market.flexibility, availabilityTransactions: market.availability, validated: all.filter((t) => t.deliveryValidationStatus === DeliveryValidationStatus.Validated).length, settled: Math.round(settled * 100) / 100 },
    vtn,
    loop: { ...loop, ...agreement },
    links: {
      readings: `/console#/readings?org=${polder}&r=${registers['PF-POOL-WEST/import']},${registers['PF-POOL-WEST/baseline']}&from=${isoDay(deliveryDay - 2 * DAY)}&to=${isoDay(deliveryDay)}&res=0`,
      coverage: `/console#/coverage?org=${polder}&r=${registers['PF-HOME-03/import']},${registers['PF-POOL-WEST/import']}&year=${outageYear}`,
      demandResponse: '/console#/demand-response',
      market: `/console#/market?org=${organizations.operator.id}`,
      loop: `/console#/market?org=${polder}&from=${isoDay(plan.market.start)}&to=${isoDay(plan.market.end - DAY)}`,
    },
  };
}

/** `base` with the values of `part` (a slice of the same grid) in place. */
function withSlice(base: SeriesData, part: SeriesData): SeriesData {
  const values = base.values.slice();
  values.set(part.values, Math.round((part.start - base.start) / base.step));
  return { ...base, values };
}
