// The whole market end to end, over HTTP only: a zone with a grid
// operator and two providers; an availability order; two offers; clearing picks the cheaper;
// a flexibility order activating the availability transaction; acceptance; readings and
// reference readings; validation; the settlement specification of every party.
// And a restart: a clearing that fell due while no instance ran happens once, with two
// instances starting together.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrgClient } from '../support/fixtures.ts';
import { createMarket, createMeasuredResource, eventually, postReadings, postReference, quarterHours, type Market, type MeasuredResource } from '../support/productFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const Q = 900_000;
const DAY = 86_400_000;
/** The first quarter hour at least `ms` from now. */
const quarterAfter = (ms: number) => Math.ceil((Date.now() + ms) / Q) * Q;
const iso = (ms: number) => new Date(ms).toISOString();
const cents = (x: number) => Math.round(x * 100);
/** A settlement line nobody has answered yet (docs/products.md, "Settlement agreed"). */
const UNANSWERED = { agreementState: 'unanswered', agreedRemuneration: null, disputeId: null };

type Line = { totalRemuneration: number; flexibilityTransactionId?: number; availabilityTransactionId?: number };
type Summary = { totalRemunerationSum: number; transactions: Line[] };
const SUMMARIES = ['flexibilitySoldSummary', 'flexibilityBoughtSummary', 'availabilitySoldSummary', 'availabilityBoughtSummary'] as const;

describe('the market, end to end', () => {
  let t: TestApp;
  let market: Market;
  let operator: OrgClient;
  let cheap: OrgClient;
  let dear: OrgClient;
  let cheapResource: MeasuredResource;
  let dearResource: MeasuredResource;
  let substationId: number;

  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: 'error', CLEARING_INTERVAL_MS: '200' });
    market = await createMarket(t, 2);
    operator = market.operator;
    [dear, cheap] = market.providers as [OrgClient, OrgClient];
    dearResource = await createMeasuredResource(t, dear.organizationId, market.zoneId);
    cheapResource = await createMeasuredResource(t, cheap.organizationId, market.zoneId);
    const substation = await t.api.post(
      '/api/admin/substations',
      { organizationId: operator.organizationId, marketZoneId: market.zoneId, name: 'Scenario substation', impacts: [{ resourceId: dearResource.id, factor: 1 }, { resourceId: cheapResource.id, factor: 1 }] },
      t.adminToken,
    );
    expect(substation.status).toBe(201);
    substationId = substation.body.id;
  });
  afterAll(() => t?.close());

  it('clears, activates, validates and settles', { timeout: 60_000 }, async () => {
    // The delivery period starts at least three minutes from now; offers close in three seconds.
    const start = quarterAfter(180_000);
    const end = start + 4 * Q;
    const order = await t.api.post(
      '/api/product/order/availability',
      { organizationId: operator.organizationId, marketZoneId: market.zoneId, productType: 3, substationId, start: iso(start), end: iso(end), expiresAt: iso(Date.now() + 3000), quantity: 20, availabilityPrice: 4.5 },
      operator.token,
    );
    expect(order.status, order.text).toBe(201);
    expect(order.body.clearingStatus).toBe(1);

    // Two offers of 20 kW: the dear one at 3.00/kWh, the cheap one at 2.00/kWh.
    const offer = (client: OrgClient, resource: MeasuredResource, activationPrice: number) =>
      t.api.post(`/api/product/offer/availability/resource/${resource.id}`, { organizationId: client.organizationId, offers: [{ availabilityOrderId: order.body.id, activationPrice, maxQuantity: 20, minQuantity: 10 }] }, client.token);
    expect((await offer(dear, dearResource, 3)).status).toBe(201);
    expect((await offer(cheap, cheapResource, 2)).status).toBe(201);

    // Clearing at expiresAt, by the scheduler: the cheaper offer covers the whole 20 kW.
    const period = `start=${iso(start - DAY)}&end=${iso(end + DAY)}`;
    const cleared = await eventually(async () => {
      const list = await t.api.get(`/api/product/order/availability/resource/${cheapResource.id}?organizationId=${cheap.organizationId}&${period}`, cheap.token);
      const mine = list.body.find((o: { id: number }) => o.id === order.body.id);
      return mine.clearingStatus === 1 ? undefined : mine;
    }, 20_000, 'clearing');
    expect(cleared.clearingStatus).toBe(2);
    const offersOf = async (client: OrgClient, resource: MeasuredResource) =>
      (await t.api.get(`/api/product/offer/availability/resource/${resource.id}?organizationId=${client.organizationId}&${period}`, client.token)).body.find((o: { availabilityOrderId: number }) => o.availabilityOrderId === order.body.id);
    const cheapOffer = await offersOf(cheap, cheapResource);
    expect(cheapOffer).toMatchObject({ clearingStatus: 5 });
    expect(await offersOf(dear, dearResource)).toMatchObject({ clearingStatus: 6, availabilityTransactionId: null });
    const bought = (await t.api.get(`/api/product/transaction/availability?organizationId=${operator.organizationId}&${period}`, operator.token)).body.filter((x: { availabilityOrderId: number }) => x.availabilityOrderId === order.body.id);
    expect(bought).toHaveLength(1);
    const availability = bought[0];
    expect(availability).toMatchObject({
      id: cheapOffer.availabilityTransactionId,
      organizationId: operator.organizationId,
      counterpartOrganizationId: cheap.organizationId,
      resourceId: cheapResource.id,
      quantity: 20,
      activationPrice: 2,
      availabilityPrice: 4.5,
      substationId,
      productType: 3,
      deliveryValidationStatus: 1,
    });

    // The operator activates 12 kWh of the reserved capacity in the first half hour; the provider accepts.
    const flexOrder = await t.api.post(
      '/api/product/order/flexibility',
      { organizationId: operator.organizationId, marketZoneId: market.zoneId, productType: 1, start: iso(start), end: iso(start + 2 * Q), expiresAt: iso(Date.now() + 60_000), unitPrice: 2.5, minQuantity: 1, maxQuantity: 12, availabilityTransactionId: availability.id },
      operator.token,
    );
    expect(flexOrder.status, flexOrder.text).toBe(201);
    expect(flexOrder.body).toMatchObject({ resourceId: cheapResource.id, targetOrganizationIds: [cheap.organizationId], availabilityTransactionId: availability.id });
    const accepted = await t.api.post(`/api/product/order/flexibility/${flexOrder.body.id}/acceptance`, { organizationId: cheap.organizationId, resourceId: cheapResource.id, quantity: 12 }, cheap.token);
    expect(accepted.status, accepted.text).toBe(201);
    const flex = accepted.body;
    expect(flex).toMatchObject({ quantity: 12, unitPrice: 2.5, availabilityTransactionId: availability.id, organizationId: cheap.organizationId, counterpartOrganizationId: operator.organizationId, deliveryValidationStatus: 1 });
    expect(flex.transactionCorrelationId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

    // Meter data of the half hour: actual 4 + 5 kWh; reference (what it would have used) 10 + 10 kWh.
    await postReadings(t.api, cheap.token, cheapResource.meterExternalId, cheapResource.actual!.externalId, quarterHours(start, [4, 5]));
    await postReference(t.api, cheap.token, cheap.organizationId, cheapResource.id, quarterHours(start, [10, 10]));

    // Validation (on demand: the period is still ahead, the data already complete).
    const validated = await t.api.post('/api/admin/transactions/validate', { availabilityTransactionIds: [availability.id] }, t.adminToken);
    expect(validated.status, validated.text).toBe(200);
    // By hand: upward, delivered = reference − actual = 20 − 9 = 11 kWh of 12 → 11 / 12 = 91.666…% → 91.67 %;
    // remuneration = the delivery percentage (≥ 60 %, ≤ 100 %) = 91.67 %.
    expect(validated.body.flexibilityTransactions).toEqual([
      expect.objectContaining({
        id: flex.id,
        deliveryValidationStatus: 2,
        referenceReadingValue: 20,
        validationReadingValue: 9,
        referenceAdjustmentQuantity: 0,
        deliveredQuantity: 11,
        deliveryPercentage: 91.67,
        remunerationPercentage: 91.67,
      }),
    ]);
    // Availability: expected = the 12 kWh called, delivered 11 → 91.67 %, paid 91.67 %.
    expect(validated.body.availabilityTransactions).toEqual([
      expect.objectContaining({ id: availability.id, deliveryValidationStatus: 2, expectedDeliveredQuantity: 12, deliveredQuantity: 11, deliveryPercentage: 91.67, remunerationPercentage: 91.67 }),
    ]);
    expect(validated.body.flexibilityTransactions[0].validatedAt).toBeTruthy();

    // Settlement of the day(s) holding the period.
    const from = Math.floor(start / DAY) * DAY;
    const settlement = async (client: OrgClient) => {
      const res = await t.api.get(`/api/product/settlement/specification?organizationId=${client.organizationId}&start=${iso(from)}&end=${iso(from + 2 * DAY)}`, client.token);
      expect(res.status, res.text).toBe(200);
      return res.body as { organizationId: number; counterParts: ({ organizationId: number } & Record<(typeof SUMMARIES)[number], Summary>)[]; remunerationPerResource: unknown[] };
    };
    const buyer = await settlement(operator);
    const seller = await settlement(cheap);
    const loser = await settlement(dear);
    expect(loser).toEqual({ organizationId: dear.organizationId, asOf: expect.any(String), counterParts: [], remunerationPerResource: [] });
    for (const spec of [buyer, seller]) {
      for (const cp of spec.counterParts) for (const name of SUMMARIES) expect(cents(cp[name].totalRemunerationSum), name).toBe(cp[name].transactions.reduce((s, l) => s + cents(l.totalRemuneration), 0));
    }
    expect(buyer.counterParts.map((c) => c.organizationId)).toEqual([cheap.organizationId]);
    expect(seller.counterParts.map((c) => c.organizationId)).toEqual([operator.organizationId]);
    const [fromSeller] = buyer.counterParts;
    const [toBuyer] = seller.counterParts;
    // 12 kWh × 2.50 × 91.67 % = 27.501 → 27.50; 20 kW × 4.50 × 91.67 % = 82.503 → 82.50.
    expect(fromSeller!.flexibilityBoughtSummary).toEqual({
      totalRemunerationSum: 27.5,
      agreedRemunerationSum: 0,
      transactions: [{ flexibilityTransactionId: flex.id, resourceId: cheapResource.id, deliveryPercentage: 91.67, remunerationPercentage: 91.67, unitPrice: 2.5, totalRemuneration: 27.5, totalQuantity: 12, productType: 1, deliveryValidationStatus: 2, ...UNANSWERED }],
    });
    expect(fromSeller!.availabilityBoughtSummary).toEqual({
      totalRemunerationSum: 82.5,
      agreedRemunerationSum: 0,
      transactions: [{ availabilityTransactionId: availability.id, resourceId: cheapResource.id, substationId, deliveryPercentage: 91.67, remunerationPercentage: 91.67, availabilityPrice: 4.5, totalRemuneration: 82.5, totalQuantity: 20, productType: 3, deliveryValidationStatus: 2, ...UNANSWERED }],
    });
    expect(fromSeller!.flexibilitySoldSummary).toEqual({ totalRemunerationSum: 0, agreedRemunerationSum: 0, transactions: [] });
    expect(fromSeller!.availabilitySoldSummary).toEqual({ totalRemunerationSum: 0, agreedRemunerationSum: 0, transactions: [] });
    // The seller sees the same lines as sold; each transaction once on each side.
    expect(toBuyer!.flexibilitySoldSummary).toEqual(fromSeller!.flexibilityBoughtSummary);
    expect(toBuyer!.availabilitySoldSummary).toEqual(fromSeller!.availabilityBoughtSummary);
    expect(toBuyer!.flexibilityBoughtSummary.transactions).toEqual([]);
    expect(toBuyer!.availabilityBoughtSummary.transactions).toEqual([]);
    expect(buyer.remunerationPerResource).toEqual([{ resourceId: cheapResource.id, bought: { totalAvailabilityRemunerationSum: 82.5, totalFlexibilityRemunerationSum: 27.5 }, sold: { totalAvailabilityRemunerationSum: 0, totalFlexibilityRemunerationSum: 0 } }]);
    expect(seller.remunerationPerResource).toEqual([{ resourceId: cheapResource.id, bought: { totalAvailabilityRemunerationSum: 0, totalFlexibilityRemunerationSum: 0 }, sold: { totalAvailabilityRemunerationSum: 82.5, totalFlexibilityRemunerationSum: 27.5 } }]);
  });
});

describe('a clearing that falls due while no instance runs', () => {
  it('happens once when two instances start afterwards', { timeout: 90_000 }, async () => {
    const first = await startTestApp({ LOG_LEVEL: 'error', CLEARING_INTERVAL_MS: '200' });
    let others: TestApp[] = [];
    try {
      const market = await createMarket(first, 2);
      const [a, b] = market.providers as [OrgClient, OrgClient];
      const ra = await createMeasuredResource(first, a.organizationId, market.zoneId);
      const rb = await createMeasuredResource(first, b.organizationId, market.zoneId);
      const start = quarterAfter(600_000);
      const expiresAt = Date.now() + 12_000;
      const order = await first.api.post(
        '/api/product/order/availability',
        { organizationId: market.operator.organizationId, marketZoneId: market.zoneId, productType: 3, start: iso(start), end: iso(start + Q), expiresAt: iso(expiresAt), quantity: 30, availabilityPrice: 1 },
        market.operator.token,
      );
      expect(order.status).toBe(201);
      for (const [client, resource, price] of [[a, ra, 1], [b, rb, 2]] as const) {
        const res = await first.api.post(`/api/product/offer/availability/resource/${resource.id}`, { organizationId: client.organizationId, offers: [{ availabilityOrderId: order.body.id, activationPrice: price, maxQuantity: 20, minQuantity: 5 }] }, client.token);
        expect(res.status).toBe(201);
      }
      const period = `start=${iso(start - DAY)}&end=${iso(start + DAY)}`;
      const stillOpen = (await first.api.get(`/api/admin/orders/availability?${period}`, first.adminToken)).body.find((o: { id: number }) => o.id === order.body.id);
      expect(stillOpen.clearingStatus).toBe(1);
      await first.close();
      // The instance stopped before the order was due.
      expect(Date.now()).toBeLessThan(expiresAt);
      await eventually(async () => (Date.now() > expiresAt + 200 ? true : undefined), 20_000, 'expiresAt to pass');
      // Two instances on the same database start together; both schedulers find the due order.
      others = await Promise.all([0, 1].map(() => startTestApp({ LOG_LEVEL: 'error', CLEARING_INTERVAL_MS: '100', ADMIN_TOKEN: first.adminToken }, first.databaseUrl)));
      const api = others[1]!.api;
      const cleared = await eventually(async () => {
        const o = (await api.get(`/api/admin/orders/availability?${period}`, first.adminToken)).body.find((x: { id: number }) => x.id === order.body.id);
        return o.clearingStatus === 1 ? undefined : o;
      }, 20_000, 'clearing after the restart');
      // 30 kW: A (cheaper) 20, B the remaining 10 — once each, no duplicates.
      expect(cleared.clearingStatus).toBe(2);
      const transactions = (await api.get(`/api/product/transaction/availability?organizationId=${market.operator.organizationId}&${period}`, market.operator.token)).body.filter((x: { availabilityOrderId: number }) => x.availabilityOrderId === order.body.id);
      expect(transactions.map((x: { resourceId: number; quantity: number }) => [x.resourceId, x.quantity]).sort()).toEqual([[ra.id, 20], [rb.id, 10]].sort());
    } finally {
      await Promise.all(others.map((o) => o.close()));
      await first.close();
    }
  });
});
