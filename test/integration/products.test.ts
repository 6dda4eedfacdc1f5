// Orders, offers, clearing, acceptances and transactions over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
type Client = Awaited<ReturnType<typeof createOrgClient>>;
let operator: Client;
let providerA: Client;
let providerB: Client;
let outsider: Client;
let zoneId: number;
let resourceA: number;
let resourceB: number;
let substationId: number;

const PERMS = ['Order.Organization.ReadWrite', 'Organization.Organization.Read'];
const FEATURES = ['Grid', 'ResourceManagement', 'DecisionSupport', 'Settlements'];
const hour = 3_600_000;
/** A time on the quarter-hour grid, `hours` from now (rounded up to the next full hour). */
const at = (hours: number) => new Date(Math.ceil(Date.now() / hour) * hour + hours * hour).toISOString();

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error', CLEARING_INTERVAL_MS: '200' });
  operator = await createOrgClient(t.api, t.adminToken, { features: FEATURES, permissions: PERMS });
  providerA = await createOrgClient(t.api, t.adminToken, { features: FEATURES, permissions: PERMS });
  providerB = await createOrgClient(t.api, t.adminToken, { features: FEATURES, permissions: PERMS });
  outsider = await createOrgClient(t.api, t.adminToken, { features: FEATURES, permissions: PERMS });
  zoneId = (
    await t.api.post('/api/admin/zones', { name: 'Products zone', timeResolution: 1, orderQuantityResolution: 0.5, organizationIds: [operator.organizationId, providerA.organizationId, providerB.organizationId] }, t.adminToken)
  ).body.id;
  const resource = async (org: number, name: string) =>
    (await t.api.post('/api/admin/resources', { organizationId: org, name, type: 3, regulationType: 3, maxQuantity: 100, marketZoneId: zoneId, allowedProducts: [] }, t.adminToken)).body.id as number;
  resourceA = await resource(providerA.organizationId, 'A');
  resourceB = await resource(providerB.organizationId, 'B');
  substationId = (
    await t.api.post('/api/admin/substations', { organizationId: operator.organizationId, marketZoneId: zoneId, name: 'S', impacts: [{ resourceId: resourceA, factor: 0.8 }, { resourceId: resourceB, factor: 0.5 }] }, t.adminToken)
  ).body.id;
});
afterAll(() => t?.close());

const flexOrder = (extra: Record<string, unknown> = {}) => ({
  organizationId: operator.organizationId,
  marketZoneId: zoneId,
  productType: 1,
  start: at(4),
  end: at(5),
  expiresAt: at(3),
  unitPrice: 1.25,
  minQuantity: 1,
  maxQuantity: 10,
  ...extra,
});

const availabilityOrder = (extra: Record<string, unknown> = {}) => ({
  organizationId: operator.organizationId,
  marketZoneId: zoneId,
  productType: 3,
  substationId,
  start: at(24),
  end: at(28),
  expiresAt: at(20),
  quantity: 30,
  availabilityPrice: 4.5,
  ...extra,
});

describe('flexibility orders', () => {
  it('are created by a zone member and seen by members they target or all', async () => {
    const open = await t.api.post('/api/product/order/flexibility', flexOrder(), operator.token);
    expect(open.status).toBe(201);
    expect(open.body).toMatchObject({ organizationId: operator.organizationId, remainingQuantity: 10, minQuantity: 1, maxQuantity: 10, unitPrice: 1.25, productType: 1, targetOrganizationIds: [] });
    const targeted = await t.api.post('/api/product/order/flexibility', flexOrder({ targetOrganizationIds: [providerA.organizationId] }), operator.token);
    expect(targeted.status).toBe(201);
    const list = (token: string, org: number) => t.api.get(`/api/product/order/flexibility?organizationId=${org}&start=${at(0)}&end=${at(48)}`, token);
    const seenByA = (await list(providerA.token, providerA.organizationId)).body.map((o: { id: number }) => o.id);
    const seenByB = (await list(providerB.token, providerB.organizationId)).body.map((o: { id: number }) => o.id);
    expect(seenByA).toEqual(expect.arrayContaining([open.body.id, targeted.body.id]));
    expect(seenByB).toContain(open.body.id);
    expect(seenByB).not.toContain(targeted.body.id);
    expect((await list(outsider.token, outsider.organizationId)).body).toEqual([]);
  });

  it('are validated against the zone’s rules', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ start: new Date(Date.parse(at(4)) + 60_000).toISOString() }, 'start'],
      [{ maxQuantity: 10.3 }, 'maxQuantity'],
      [{ minQuantity: 20, maxQuantity: 10 }, 'minQuantity'],
      [{ unitPrice: -1 }, 'unitPrice'],
      [{ productType: 3 }, 'productType'],
      [{ productType: 9 }, 'productType'],
      [{ expiresAt: at(6) }, 'expiresAt'],
      [{ end: at(4) }, 'end'],
      [{ targetOrganizationIds: [outsider.organizationId] }, 'targetOrganizationIds[0]'],
    ];
    for (const [change, path] of cases) {
      const res = await t.api.post('/api/product/order/flexibility', flexOrder(change), operator.token);
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path), JSON.stringify(change)).toContain(path);
    }
    const notMember = await t.api.post('/api/product/order/flexibility', flexOrder({ organizationId: outsider.organizationId }), outsider.token);
    expect(notMember.body.errors[0].path).toBe('organizationId');
    expect((await t.api.post('/api/product/order/flexibility', flexOrder(), providerA.token)).status).toBe(403);
  });

  it('list requires organizationId, start and end', async () => {
    const res = await t.api.get('/api/product/order/flexibility', operator.token);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(['query.organizationId', 'query.start', 'query.end']));
  });

  it('survive 50 concurrent acceptances without remainingQuantity going below zero', async () => {
    const order = (await t.api.post('/api/product/order/flexibility', flexOrder({ minQuantity: 0.5, maxQuantity: 10 }), operator.token)).body;
    const accept = (i: number) =>
      t.api.post(`/api/product/order/flexibility/${order.id}/acceptance`, { organizationId: i % 2 ? providerA.organizationId : providerB.organizationId, resourceId: i % 2 ? resourceA : resourceB, quantity: 0.5 }, i % 2 ? providerA.token : providerB.token);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => accept(i)));
    const accepted = results.filter((r) => r.status === 201);
    expect(accepted).toHaveLength(20);
    expect(results.filter((r) => r.status === 409)).toHaveLength(30);
    const after = (await t.api.get(`/api/product/order/flexibility?organizationId=${operator.organizationId}&start=${at(0)}&end=${at(48)}`, operator.token)).body.find((o: { id: number }) => o.id === order.id);
    expect(after.remainingQuantity).toBe(0);
    const ids = new Set(accepted.map((r) => r.body.transactionCorrelationId));
    expect(ids.size).toBe(20);
    expect(accepted[0]!.body).toMatchObject({ flexibilityOrderId: order.id, quantity: 0.5, unitPrice: 1.25, counterpartOrganizationId: operator.organizationId, deliveryValidationStatus: 1 });
    expect(accepted[0]!.body.transactionCorrelationId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuse acceptances that break the rules', async () => {
    const order = (await t.api.post('/api/product/order/flexibility', flexOrder({ minQuantity: 2, resourceId: resourceA }), operator.token)).body;
    const acceptA = (body: Record<string, unknown>) => t.api.post(`/api/product/order/flexibility/${order.id}/acceptance`, { organizationId: providerA.organizationId, resourceId: resourceA, quantity: 2, ...body }, providerA.token);
    expect((await acceptA({ quantity: 1 })).body.errors[0].path).toBe('quantity');
    expect((await acceptA({ quantity: 2.2 })).body.errors.map((e: { path: string }) => e.path)).toContain('quantity');
    expect((await acceptA({ resourceId: resourceB })).status).toBe(400);
    const byB = await t.api.post(`/api/product/order/flexibility/${order.id}/acceptance`, { organizationId: providerB.organizationId, resourceId: resourceB, quantity: 2 }, providerB.token);
    expect(byB.status).toBe(400);
    expect((await t.api.post(`/api/product/order/flexibility/999999/acceptance`, { organizationId: providerA.organizationId, resourceId: resourceA, quantity: 2 }, providerA.token)).status).toBe(404);
    expect((await acceptA({ quantity: 12 })).status).toBe(409);
  });
});

describe('availability orders, offers and clearing', () => {
  it('take offers only on open orders for own resources, atomically', async () => {
    const order = (await t.api.post('/api/product/order/availability', availabilityOrder(), operator.token)).body;
    expect(order).toMatchObject({ clearingStatus: 1, quantity: 30, availabilityPrice: 4.5, substationId });
    const visible = await t.api.get(`/api/product/order/availability/resource/${resourceA}?organizationId=${providerA.organizationId}&start=${at(0)}&end=${at(48)}`, providerA.token);
    expect(visible.body.map((o: { id: number }) => o.id)).toContain(order.id);
    const offer = (resource: number, client: Client, body: Record<string, unknown>) =>
      t.api.post(`/api/product/offer/availability/resource/${resource}`, { organizationId: client.organizationId, offers: [{ availabilityOrderId: order.id, activationPrice: 2, maxQuantity: 20, minQuantity: 5, ...body }] }, client.token);
    const created = await offer(resourceA, providerA, {});
    expect(created.status).toBe(201);
    expect(created.body[0]).toMatchObject({ availabilityOrderId: order.id, resourceId: resourceA, impactValue: 0.8, clearingStatus: 1, availabilityTransactionId: null });
    expect((await offer(resourceA, providerA, {})).status).toBe(400); // already offered: PUT
    expect((await offer(resourceA, providerB, {})).status).toBe(404); // not B's resource
    expect((await offer(resourceB, providerB, { minQuantity: 25, maxQuantity: 20 })).body.errors[0].path).toBe('offers[0].minQuantity');
    expect((await offer(resourceB, providerB, { maxQuantity: 20.25 })).body.errors[0].path).toBe('offers[0].maxQuantity');
    const updated = await t.api.put(`/api/product/offer/availability/resource/${resourceA}`, { organizationId: providerA.organizationId, offers: [{ availabilityOrderId: order.id, activationPrice: 3, maxQuantity: 20, minQuantity: 5 }] }, providerA.token);
    expect(updated.status).toBe(200);
    expect(updated.body[0].activationPrice).toBe(3);
    const list = await t.api.get(`/api/product/offer/availability/resource/${resourceA}?organizationId=${providerA.organizationId}&start=${at(0)}&end=${at(48)}`, providerA.token);
    expect(list.body).toHaveLength(1);
    expect((await t.api.delete(`/api/product/offer/availability/resource/${resourceA}?organizationId=${providerA.organizationId}&availabilityOrderIds=${order.id}`, providerA.token)).status).toBe(204);
    expect((await t.api.delete(`/api/product/offer/availability/resource/${resourceA}?organizationId=${providerA.organizationId}&availabilityOrderIds=${order.id}`, providerA.token)).status).toBe(400);
  });

  it('clear by merit order: the cheaper offer first, up to the ordered quantity', async () => {
    const order = (await t.api.post('/api/product/order/availability', availabilityOrder({ quantity: 30 }), operator.token)).body;
    const offerOn = (resource: number, client: Client, activationPrice: number, maxQuantity: number, minQuantity: number) =>
      t.api.post(`/api/product/offer/availability/resource/${resource}`, { organizationId: client.organizationId, offers: [{ availabilityOrderId: order.id, activationPrice, maxQuantity, minQuantity }] }, client.token);
    expect((await offerOn(resourceA, providerA, 5, 25, 10)).status).toBe(201);
    expect((await offerOn(resourceB, providerB, 3, 20, 10)).status).toBe(201);
    const cleared = await t.api.post(`/api/admin/orders/availability/${order.id}/clear`, undefined, t.adminToken);
    expect(cleared.status).toBe(200);
    expect(cleared.body.clearingStatus).toBe(2);
    // B (3/kWh) takes 20, A (5/kWh) the remaining 10.
    const txs = (await t.api.get(`/api/product/transaction/availability?organizationId=${operator.organizationId}&start=${at(0)}&end=${at(48)}`, operator.token)).body.filter((x: { availabilityOrderId: number }) => x.availabilityOrderId === order.id);
    expect(txs.map((x: { resourceId: number; quantity: number; activationPrice: number }) => [x.resourceId, x.quantity, x.activationPrice]).sort()).toEqual([[resourceA, 10, 5], [resourceB, 20, 3]].sort());
    expect(txs[0]).toMatchObject({ availabilityPrice: 4.5, organizationId: operator.organizationId, deliveryValidationStatus: 1, substationId });
    const offersA = (await t.api.get(`/api/product/offer/availability/resource/${resourceA}?organizationId=${providerA.organizationId}&start=${at(0)}&end=${at(48)}`, providerA.token)).body.find((o: { availabilityOrderId: number }) => o.availabilityOrderId === order.id);
    expect(offersA).toMatchObject({ clearingStatus: 5 });
    expect(offersA.availabilityTransactionId).toBeTypeOf('number');
    expect((await t.api.post(`/api/admin/orders/availability/${order.id}/clear`, undefined, t.adminToken)).status).toBe(409);
    const sellerView = (await t.api.get(`/api/product/transaction/availability?organizationId=${providerB.organizationId}&start=${at(0)}&end=${at(48)}`, providerB.token)).body.find((x: { availabilityOrderId: number }) => x.availabilityOrderId === order.id);
    expect(sellerView).toMatchObject({ organizationId: providerB.organizationId, counterpartOrganizationId: operator.organizationId });
  });

  it('clear by themselves when they expire, rejecting offers that cannot fit', async () => {
    const soon = new Date(Date.now() + 1500).toISOString();
    const order = (await t.api.post('/api/admin/orders/availability', availabilityOrder({ quantity: 10, expiresAt: soon }), t.adminToken)).body;
    await t.api.post(`/api/product/offer/availability/resource/${resourceA}`, { organizationId: providerA.organizationId, offers: [{ availabilityOrderId: order.id, activationPrice: 1, maxQuantity: 6, minQuantity: 6 }] }, providerA.token);
    await t.api.post(`/api/product/offer/availability/resource/${resourceB}`, { organizationId: providerB.organizationId, offers: [{ availabilityOrderId: order.id, activationPrice: 2, maxQuantity: 8, minQuantity: 5 }] }, providerB.token);
    let status = 1;
    const deadline = Date.now() + 15_000;
    while (status === 1 && Date.now() < deadline) {
      const list = (await t.api.get(`/api/admin/orders/availability?start=${at(0)}&end=${at(48)}`, t.adminToken)).body;
      status = list.find((o: { id: number }) => o.id === order.id).clearingStatus;
      if (status === 1) await new Promise((r) => setTimeout(r, 200));
    }
    // A takes 6; B's minimum 5 no longer fits the 4 left: partially cleared.
    expect(status).toBe(3);
    const offerB = (await t.api.get(`/api/product/offer/availability/resource/${resourceB}?organizationId=${providerB.organizationId}&start=${at(0)}&end=${at(48)}`, providerB.token)).body.find((o: { availabilityOrderId: number }) => o.availabilityOrderId === order.id);
    expect(offerB.clearingStatus).toBe(6);
  });
});

describe('transactions and substation impact', () => {
  it('show own transactions, others’ affecting the organization’s substations, and impact on a substation', async () => {
    const order = (await t.api.post('/api/product/order/flexibility', flexOrder({ start: at(30), end: at(31), expiresAt: at(29) }), operator.token)).body;
    const tx = (await t.api.post(`/api/product/order/flexibility/${order.id}/acceptance`, { organizationId: providerA.organizationId, resourceId: resourceA, quantity: 4 }, providerA.token)).body;
    const range = `start=${at(29)}&end=${at(32)}`;
    const buyer = (await t.api.get(`/api/product/transaction/flexibility?organizationId=${operator.organizationId}&${range}`, operator.token)).body;
    expect(buyer.flexibilityTransactions.map((x: { id: number }) => x.id)).toContain(tx.id);
    const seller = (await t.api.get(`/api/product/transaction/flexibility?organizationId=${providerA.organizationId}&${range}`, providerA.token)).body;
    expect(seller.flexibilityTransactions.find((x: { id: number }) => x.id === tx.id)).toMatchObject({ organizationId: providerA.organizationId, counterpartOrganizationId: operator.organizationId });
    // Provider B is no party, and owns no substation: nothing "with impact" for B.
    const other = (await t.api.get(`/api/product/transaction/flexibility?organizationId=${providerB.organizationId}&${range}`, providerB.token)).body;
    expect(other.flexibilityTransactions).toEqual([]);
    expect(other.otherFlexibilityTransactionsWithImpact).toEqual([]);
    const impact = await t.api.get(`/api/product/transaction/flexibility/affecting/substation/${substationId}?organizationId=${operator.organizationId}&${range}`, operator.token);
    expect(impact.status).toBe(200);
    expect(impact.body.find((x: { flexibilityTransactionId: number }) => x.flexibilityTransactionId === tx.id)).toMatchObject({ quantity: 4, impact: 0.8, quantityAfterImpact: 3.2 });
    expect((await t.api.get(`/api/product/transaction/flexibility/affecting/substation/${substationId}?organizationId=${outsider.organizationId}&${range}`, outsider.token)).status).toBe(404);
  });
});
