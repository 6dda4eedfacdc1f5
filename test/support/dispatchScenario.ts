// One run of the dispatch property (test/integration/dispatchProperty.test.ts): a world of its
// own (operator, provider, zone, two grid resources bound to two of three VEN resources, reserved
// capacity of the first to activate), a sequence of acceptances, activations, changes,
// cancellations, re-bindings and restarts spread over two instances on one database, then the
// check: once dispatch has settled, every transaction of a bound resource has exactly one event in
// the provider's VTN showing its current figures, and no event exists without a transaction.
import fc from 'fast-check';
import { expect } from 'vitest';
import { createOrgClient } from './fixtures.ts';
import { PROVIDER_PERMISSIONS, accept, bind, createBoundableResource, nextSlot, placeOrder, transactions, type BoundResource } from './loopFixtures.ts';
import { uniqueId } from './meterFixtures.ts';
import { MARKET_FEATURES, MARKET_PERMISSIONS } from './productFixtures.ts';
import { startTestApp, type Api, type TestApp } from './testApp.ts';
import { BL_SCOPES, VEN_SCOPES, VTN, expectStatus, vtnClient } from './vtn.ts';

export const DISPATCH_ADMIN = `flex_pat_dispatch_property_${'p'.repeat(32)}`;
export const DISPATCH_ENV = { ADMIN_TOKEN: DISPATCH_ADMIN, DISPATCH_INTERVAL_MS: '100', USAGE_REPORTS_INTERVAL_MS: '1000' };
const HOUR = 3_600_000;
const Q = 900_000;

export type DispatchOp =
  | { kind: 'accept'; on: number; resource: number; slot: number; quantity: number }
  | { kind: 'activate'; on: number; slot: number; quantity: number }
  | { kind: 'change'; on: number; pick: number; quantity: number; shift: boolean }
  | { kind: 'cancel'; on: number; pick: number }
  | { kind: 'rebind'; on: number; resource: number }
  | { kind: 'restart'; on: number };
type Op = DispatchOp;

const on = fc.integer({ min: 0, max: 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('accept' as const), on, resource: fc.integer({ min: 0, max: 1 }), slot: fc.integer({ min: 0, max: 3 }), quantity: fc.integer({ min: 1, max: 20 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('activate' as const), on, slot: fc.integer({ min: 0, max: 3 }), quantity: fc.integer({ min: 1, max: 10 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('change' as const), on, pick: fc.nat(), quantity: fc.integer({ min: 1, max: 20 }), shift: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), on, pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rebind' as const), on, resource: fc.integer({ min: 0, max: 1 }) }) },
);
/** Sequences of 3 to 9 operations with one restart somewhere in them. */
export const dispatchSequence = fc.tuple(fc.array(op, { minLength: 3, maxLength: 9 }), fc.nat(), on).map(([ops, at, which]) => {
  const i = at % (ops.length + 1);
  return [...ops.slice(0, i), { kind: 'restart', on: which } as Op, ...ops.slice(i)];
});

interface Live {
  id: number;
  correlationId: string;
  resource: number;
  quantity: number;
  start: number;
  end: number;
}

/** Runs `ops` against `instances` (two apps on `databaseUrl`; a restart replaces one in place)
 * and checks the property; `afterOps` runs between the last operation and the check. */
export async function runDispatchSequence(instances: TestApp[], databaseUrl: string, ops: readonly DispatchOp[], afterOps?: () => Promise<void>): Promise<void> {
  const api = (i: number): Api => instances[i]!.api;
  // A world of its own per run: operator, provider, zone, two resources bound to two VEN
  // resources, and reserved capacity of the first resource to activate.
  const t = instances[0]!;
  const operator = await createOrgClient(t.api, DISPATCH_ADMIN, { features: MARKET_FEATURES, permissions: MARKET_PERMISSIONS });
  const provider = await createOrgClient(t.api, DISPATCH_ADMIN, { features: [...MARKET_FEATURES, 'OpenADR'], permissions: PROVIDER_PERMISSIONS });
  const zoneName = uniqueId('Zone');
  const zone = await expectStatus(t.api.post('/api/admin/zones', { name: zoneName, timeResolution: 1, orderQuantityResolution: 1, organizationIds: [operator.organizationId, provider.organizationId] }, DISPATCH_ADMIN), 201);
  const bl = await vtnClient(t.api, DISPATCH_ADMIN, BL_SCOPES, provider.organizationId);
  const venClient = await vtnClient(t.api, DISPATCH_ADMIN, VEN_SCOPES, provider.organizationId);
  const ven = await expectStatus(t.api.post(`${VTN}/vens`, { venName: uniqueId('ven'), clientID: venClient.clientId }, bl.token), 201);
  const venResources: { id: string; name: string }[] = [];
  for (const name of ['r-0', 'r-1', 'r-2']) venResources.push({ name, id: (await expectStatus(t.api.post(`${VTN}/vens/${ven.id}/resources`, { resourceName: name }, bl.token), 201)).id });
  const admin = { ...t, adminToken: DISPATCH_ADMIN };
  const resources: BoundResource[] = [await createBoundableResource(admin, provider.organizationId, zone.id), await createBoundableResource(admin, provider.organizationId, zone.id)];
  const boundTo = [0, 1];
  for (const k of [0, 1]) await bind(t.api, provider, resources[k]!.id, ven.id, venResources[k]!.id);
  const base = nextSlot(HOUR);
  const world = { operator, zoneId: zone.id };
  const availabilityOrder = await expectStatus(
    t.api.post(
      '/api/product/order/availability',
      { organizationId: operator.organizationId, marketZoneId: zone.id, productType: 3, start: new Date(base).toISOString(), end: new Date(base + 4 * HOUR).toISOString(), expiresAt: new Date(base - 30 * 60_000).toISOString(), quantity: 50, availabilityPrice: 3 },
      operator.token,
    ),
    201,
  );
  await expectStatus(t.api.post(`/api/product/offer/availability/resource/${resources[0]!.id}`, { organizationId: provider.organizationId, offers: [{ availabilityOrderId: availabilityOrder.id, activationPrice: 0.5, maxQuantity: 50, minQuantity: 1 }] }, provider.token), 201);
  await expectStatus(t.api.post(`/api/admin/orders/availability/${availabilityOrder.id}/clear`, {}, DISPATCH_ADMIN), 200);
  const [reserved] = (await expectStatus(t.api.get(`/api/product/transaction/availability?organizationId=${operator.organizationId}&start=${new Date(base).toISOString()}&end=${new Date(base + 1).toISOString()}`, operator.token), 200)) as { id: number }[];
  const orders = new Map<string, number>();
  const orderFor = async (i: number, slot: number, activation: boolean): Promise<number> => {
    const key = `${slot}:${activation}`;
    if (!orders.has(key)) {
      const start = base + slot * HOUR;
      if (!activation) orders.set(key, (await placeOrder(api(i), world, start, { minutes: 60, maxQuantity: 1000 })).id);
      else {
        const order = await expectStatus(
          api(i).post(
            '/api/product/order/flexibility',
            { organizationId: operator.organizationId, marketZoneId: zone.id, productType: 1, start: new Date(start).toISOString(), end: new Date(start + HOUR).toISOString(), expiresAt: new Date(start - 60_000).toISOString(), unitPrice: 1, minQuantity: 1, maxQuantity: 1000, availabilityTransactionId: reserved!.id },
            operator.token,
          ),
          201,
        );
        orders.set(key, order.id);
      }
    }
    return orders.get(key)!;
  };

  const live: Live[] = [];
  for (const o of ops) {
    switch (o.kind) {
      case 'accept':
      case 'activate': {
        const resource = o.kind === 'accept' ? o.resource : 0;
        const order = await orderFor(o.on, o.slot, o.kind === 'activate');
        const tx = await accept(api(o.on), provider, order, resources[resource]!.id, o.quantity);
        live.push({ id: tx.id, correlationId: tx.transactionCorrelationId, resource, quantity: o.quantity, start: Date.parse(tx.start), end: Date.parse(tx.end) });
        break;
      }
      case 'change': {
        if (live.length === 0) break;
        const tx = live[o.pick % live.length]!;
        const quantity = Math.min(tx.quantity, o.quantity);
        const start = o.shift && tx.end - tx.start > Q ? tx.start + Q : tx.start;
        await expectStatus(
          api(o.on).request('PATCH', `/api/product/transaction/flexibility/${tx.id}`, { json: { organizationId: operator.organizationId, quantity, start: new Date(start).toISOString() }, token: operator.token }),
          200,
        );
        Object.assign(tx, { quantity, start });
        break;
      }
      case 'cancel': {
        if (live.length === 0) break;
        const [tx] = live.splice(o.pick % live.length, 1);
        await expectStatus(api(o.on).post(`/api/product/transaction/flexibility/${tx!.id}/cancellation`, { organizationId: operator.organizationId }, operator.token), 200);
        break;
      }
      case 'rebind': {
        // To the VEN resource neither grid resource holds now.
        const free = [0, 1, 2].find((k) => !boundTo.includes(k))!;
        await bind(api(o.on), provider, resources[o.resource]!.id, ven.id, venResources[free]!.id);
        boundTo[o.resource] = free;
        break;
      }
      case 'restart': {
        await instances[o.on]!.close();
        instances[o.on] = await startTestApp(DISPATCH_ENV, databaseUrl);
        break;
      }
    }
  }

  await afterOps?.();
  // Settled: no transaction waits for its dispatch, and no event waits for its deletion (a
  // cancellation is answered before the dispatch job deletes the event). On a timeout the checks
  // below run on the last look and say what is wrong.
  let listed: any[] = [];
  const events = new Map<string, any>();
  const deadline = Date.now() + 20_000;
  for (;;) {
    listed = await transactions(api(0), provider, base - HOUR, base + 6 * HOUR);
    events.clear();
    for (let skip = 0; ; skip += 50) {
      const page = await expectStatus(api(1).get(`${VTN}/events?skip=${skip}&limit=50`, bl.token), 200);
      for (const e of page) events.set(e.id, e);
      if (page.length < 50) break;
    }
    const dispatched = new Set(listed.map((x) => x.dispatch.eventID));
    const settled = listed.every((x) => x.dispatch.state !== 'pending') && [...events.keys()].every((id) => dispatched.has(id));
    if (settled || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(listed.map((x) => x.id).sort()).toEqual(live.map((x) => x.id).sort());
  for (const tx of live) {
    const dispatch = listed.find((x) => x.id === tx.id)!.dispatch;
    expect(dispatch.state).toBe('sent');
    const event = events.get(dispatch.eventID);
    expect(event, `event of transaction ${tx.id}`).toBeDefined();
    expect(event.eventName).toBe(tx.correlationId);
    expect(event.targets).toEqual([
      { type: 'VEN_NAME', values: [ven.venName] },
      { type: 'RESOURCE_NAME', values: [venResources[boundTo[tx.resource]!]!.name] },
    ]);
    const hours = (tx.end - tx.start) / HOUR;
    expect(event.intervalPeriod.start).toBe(new Date(tx.start).toISOString());
    expect(event.intervals).toEqual([{ id: 0, payloads: [{ type: 'DISPATCH_SETPOINT_RELATIVE', values: [-Math.round((tx.quantity / hours) * 1e6) / 1e6] }] }]);
    events.delete(dispatch.eventID);
  }
  // No event without a transaction (and no second event for one).
  expect([...events.values()].map((e) => e.eventName)).toEqual([]);
}
