// GET /api/product/settlement/specification: shape, per-line rounding, totals as sums of lines,
// each transaction once on each side, the period rule, unvalidated lines, access.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient, type OrgClient } from '../support/fixtures.ts';
import { MARKET_FEATURES, MARKET_PERMISSIONS, connect, createMarket, createMeasuredResource, insertAvailabilityTransaction, insertFlexibilityTransaction, type Market } from '../support/productFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let db: pg.Client;
let market: Market;
let p1: OrgClient;
let p2: OrgClient;
let r1: number;
let r2: number;
const ids: Record<string, number> = {};

const START = '2024-03-01T00:00:00Z';
const END = '2024-04-01T00:00:00Z';

async function validated(table: 'flexibility_transactions' | 'availability_transactions', id: number, deliveryPercentage: string, remunerationPercentage: string): Promise<number> {
  await db.query(`UPDATE ${table} SET delivery_validation_status = 2, validated_at = now(), delivery_percentage = $2, remuneration_percentage = $3 WHERE id = $1`, [id, deliveryPercentage, remunerationPercentage]);
  return id;
}

beforeAll(async () => {
  // The job's first step runs at start, the next in an hour: the figures set below stay as set.
  t = await startTestApp({ LOG_LEVEL: 'error', VALIDATION_INTERVAL_MS: '3600000' });
  db = await connect(t);
  market = await createMarket(t, 2);
  [p1, p2] = market.providers as [OrgClient, OrgClient];
  r1 = (await createMeasuredResource(t, p1.organizationId, market.zoneId)).id;
  r2 = (await createMeasuredResource(t, p2.organizationId, market.zoneId)).id;
  const flex = (seller: number, resourceId: number, start: string, quantity: string, unitPrice: string) =>
    insertFlexibilityTransaction(db, { market, seller, resourceId, productType: 1, start, end: new Date(Date.parse(start) + 3_600_000).toISOString(), quantity, unitPrice });
  // 3.333 kWh × 1.005 × 87.5 % = 2.930990625 → 2.93; 10 × 0.125 × 100 % = 1.25; 1 × 0.005 × 100 % = 0.005 → 0.01 (half away from zero).
  ids.f1 = await validated('flexibility_transactions', await flex(p1.organizationId, r1, '2024-03-05T10:00:00Z', '3.333', '1.005'), '87.5', '87.5');
  ids.f2 = await validated('flexibility_transactions', await flex(p1.organizationId, r1, '2024-03-06T10:00:00Z', '10', '0.125'), '120', '100');
  ids.f3 = await validated('flexibility_transactions', await flex(p1.organizationId, r1, '2024-03-31T23:00:00Z', '1', '0.005'), '100', '100');
  // Starts before the period (ends inside it): belongs to February's settlement.
  ids.before = await validated('flexibility_transactions', await flex(p1.organizationId, r1, '2024-02-29T23:30:00Z', '5', '1'), '100', '100');
  // Starts at the period's end: April.
  ids.after = await validated('flexibility_transactions', await flex(p1.organizationId, r1, END, '5', '1'), '100', '100');
  const availability = (seller: number, resourceId: number, quantity: string, availabilityPrice: string) =>
    insertAvailabilityTransaction(db, { market, seller, resourceId, productType: 3, start: '2024-03-10T00:00:00Z', end: '2024-03-11T00:00:00Z', quantity, availabilityPrice });
  // 20 kW × 4.5 × 91.67 % = 82.503 → 82.50; a pending one is listed and counts 0.
  ids.a1 = await validated('availability_transactions', await availability(p2.organizationId, r2, '20', '4.5'), '91.67', '91.67');
  ids.a2 = await availability(p2.organizationId, r2, '7', '3');
  // Below the threshold: listed, 0 % paid.
  ids.f4 = await validated('flexibility_transactions', await flex(p2.organizationId, r2, '2024-03-12T08:00:00Z', '4', '2'), '43.75', '0');
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

const spec = (organizationId: number, token: string, start = START, end = END) => t.api.get(`/api/product/settlement/specification?organizationId=${organizationId}&start=${start}&end=${end}`, token);
const cents = (x: number) => Math.round(x * 100);
const EMPTY = { totalRemunerationSum: 0, agreedRemunerationSum: 0, transactions: [] };
const UNANSWERED = { agreementState: 'unanswered', agreedRemuneration: null, disputeId: null };

const SUMMARIES = ['flexibilitySoldSummary', 'flexibilityBoughtSummary', 'availabilitySoldSummary', 'availabilityBoughtSummary'] as const;
type Summary = { totalRemunerationSum: number; transactions: { totalRemuneration: number; flexibilityTransactionId?: number; availabilityTransactionId?: number }[] };
type Spec = { organizationId: number; counterParts: ({ organizationId: number } & Record<(typeof SUMMARIES)[number], Summary>)[]; remunerationPerResource: { resourceId: number; bought: Record<string, number>; sold: Record<string, number> }[] };

/** Every total equals the sum of its lines; per-resource sums equal the sums of their lines. */
function checkTotals(s: Spec): void {
  const perResource = new Map<string, number>();
  for (const cp of s.counterParts) {
    for (const name of SUMMARIES) {
      const summary = cp[name]!;
      expect(cents(summary.totalRemunerationSum), name).toBe(summary.transactions.reduce((sum, line) => sum + cents(line.totalRemuneration), 0));
      for (const line of summary.transactions as { resourceId: number; totalRemuneration: number }[]) {
        const key = `${line.resourceId}:${name.includes('Sold') ? 'sold' : 'bought'}:${name.startsWith('flex') ? 'totalFlexibilityRemunerationSum' : 'totalAvailabilityRemunerationSum'}`;
        perResource.set(key, (perResource.get(key) ?? 0) + cents(line.totalRemuneration));
      }
    }
  }
  for (const r of s.remunerationPerResource) {
    for (const side of ['bought', 'sold'] as const) {
      for (const field of ['totalFlexibilityRemunerationSum', 'totalAvailabilityRemunerationSum']) expect(cents(r[side][field]!)).toBe(perResource.get(`${r.resourceId}:${side}:${field}`) ?? 0);
    }
  }
}

/** Transaction ids by side: `flexibility:sold` → ids. */
function sides(s: Spec): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const cp of s.counterParts) {
    for (const name of SUMMARIES) {
      const key = `${name.startsWith('flex') ? 'flexibility' : 'availability'}:${name.includes('Sold') ? 'sold' : 'bought'}`;
      out.set(key, [...(out.get(key) ?? []), ...cp[name]!.transactions.map((l) => (l.flexibilityTransactionId ?? l.availabilityTransactionId)!)]);
    }
  }
  return out;
}

describe('settlement specification', () => {
  it('has the interface’s shape, lines rounded one by one, totals that are sums of lines', async () => {
    const res = await spec(market.operator.organizationId, market.operator.token);
    expect(res.status).toBe(200);
    const s = res.body as Spec;
    expect(Object.keys(s)).toEqual(['organizationId', 'asOf', 'counterParts', 'remunerationPerResource']);
    expect(s.organizationId).toBe(market.operator.organizationId);
    expect(s.counterParts.map((c) => c.organizationId)).toEqual([p1.organizationId, p2.organizationId]);
    const [fromP1, fromP2] = s.counterParts as [Spec['counterParts'][0], Spec['counterParts'][0]];
    expect(Object.keys(fromP1)).toEqual(['organizationId', ...SUMMARIES]);
    expect(fromP1.flexibilitySoldSummary).toEqual(EMPTY);
    expect(fromP1.availabilityBoughtSummary).toEqual(EMPTY);
    expect(fromP1.flexibilityBoughtSummary).toEqual({
      totalRemunerationSum: 4.19,
      agreedRemunerationSum: 0,
      transactions: [
        { flexibilityTransactionId: ids.f1, resourceId: r1, deliveryPercentage: 87.5, remunerationPercentage: 87.5, unitPrice: 1.005, totalRemuneration: 2.93, totalQuantity: 3.333, productType: 1, deliveryValidationStatus: 2, ...UNANSWERED },
        { flexibilityTransactionId: ids.f2, resourceId: r1, deliveryPercentage: 120, remunerationPercentage: 100, unitPrice: 0.125, totalRemuneration: 1.25, totalQuantity: 10, productType: 1, deliveryValidationStatus: 2, ...UNANSWERED },
        { flexibilityTransactionId: ids.f3, resourceId: r1, deliveryPercentage: 100, remunerationPercentage: 100, unitPrice: 0.005, totalRemuneration: 0.01, totalQuantity: 1, productType: 1, deliveryValidationStatus: 2, ...UNANSWERED },
      ],
    });
    expect(fromP2.availabilityBoughtSummary).toEqual({
      totalRemunerationSum: 82.5,
      agreedRemunerationSum: 0,
      transactions: [
        { availabilityTransactionId: ids.a1, resourceId: r2, substationId: null, deliveryPercentage: 91.67, remunerationPercentage: 91.67, availabilityPrice: 4.5, totalRemuneration: 82.5, totalQuantity: 20, productType: 3, deliveryValidationStatus: 2, ...UNANSWERED },
        { availabilityTransactionId: ids.a2, resourceId: r2, substationId: null, deliveryPercentage: null, remunerationPercentage: null, availabilityPrice: 3, totalRemuneration: 0, totalQuantity: 7, productType: 3, deliveryValidationStatus: 1, ...UNANSWERED },
      ],
    });
    expect(fromP2.flexibilityBoughtSummary.transactions.map((l) => [l.flexibilityTransactionId, l.totalRemuneration])).toEqual([[ids.f4, 0]]);
    expect(s.remunerationPerResource).toEqual([
      { resourceId: r1, bought: { totalAvailabilityRemunerationSum: 0, totalFlexibilityRemunerationSum: 4.19 }, sold: { totalAvailabilityRemunerationSum: 0, totalFlexibilityRemunerationSum: 0 } },
      { resourceId: r2, bought: { totalAvailabilityRemunerationSum: 82.5, totalFlexibilityRemunerationSum: 0 }, sold: { totalAvailabilityRemunerationSum: 0, totalFlexibilityRemunerationSum: 0 } },
    ]);
    checkTotals(s);
  });

  it('shows each transaction once on each side: the seller’s sold, the buyer’s bought', async () => {
    const buyer = sides((await spec(market.operator.organizationId, market.operator.token)).body);
    const seller1 = (await spec(p1.organizationId, p1.token)).body as Spec;
    const seller2 = (await spec(p2.organizationId, p2.token)).body as Spec;
    checkTotals(seller1);
    checkTotals(seller2);
    expect(seller1.counterParts.map((c) => c.organizationId)).toEqual([market.operator.organizationId]);
    expect(seller1.counterParts[0]!.flexibilitySoldSummary.totalRemunerationSum).toBe(4.19);
    expect(seller1.remunerationPerResource).toEqual([{ resourceId: r1, bought: { totalAvailabilityRemunerationSum: 0, totalFlexibilityRemunerationSum: 0 }, sold: { totalAvailabilityRemunerationSum: 0, totalFlexibilityRemunerationSum: 4.19 } }]);
    const sold = [...sides(seller1).get('flexibility:sold')!, ...sides(seller2).get('flexibility:sold')!].sort((a, b) => a - b);
    expect(sold).toEqual([...buyer.get('flexibility:bought')!].sort((a, b) => a - b));
    expect(new Set(sold).size).toBe(sold.length);
    expect(sides(seller2).get('availability:sold')).toEqual(buyer.get('availability:bought'));
    expect(buyer.get('flexibility:sold')).toEqual([]);
    // The period holds the transactions that start in [start, end): not the one before, not the one at end.
    expect(sold).not.toContain(ids.before);
    expect(sold).not.toContain(ids.after);
    const april = (await spec(p1.organizationId, p1.token, END, '2024-05-01T00:00:00Z')).body as Spec;
    expect(sides(april).get('flexibility:sold')).toEqual([ids.after]);
  });

  it('keeps organizations apart and needs Order.Organization.Read, the Settlements feature and all parameters', async () => {
    const outsider = await createOrgClient(t.api, t.adminToken, { features: MARKET_FEATURES, permissions: MARKET_PERMISSIONS });
    const empty = await spec(outsider.organizationId, outsider.token);
    expect(empty.body).toEqual({ organizationId: outsider.organizationId, asOf: expect.any(String), counterParts: [], remunerationPerResource: [] });
    expect((await spec(market.operator.organizationId, p1.token)).status).toBe(403);
    const noFeature = await createOrgClient(t.api, t.adminToken, { features: ['Grid'], permissions: MARKET_PERMISSIONS });
    expect((await spec(noFeature.organizationId, noFeature.token)).status).toBe(403);
    const noPermission = await createOrgClient(t.api, t.adminToken, { features: MARKET_FEATURES, permissions: ['Meter.Organization.Read'] });
    expect((await spec(noPermission.organizationId, noPermission.token)).status).toBe(403);
    expect((await t.api.get('/api/product/settlement/specification')).status).toBe(401);
    const missing = await t.api.get('/api/product/settlement/specification', market.operator.token);
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(['query.organizationId', 'query.start', 'query.end']));
    expect((await spec(market.operator.organizationId, market.operator.token, END, START)).status).toBe(400);
    expect((await spec(market.operator.organizationId, market.operator.token, START, START)).status).toBe(400);
    expect((await spec(market.operator.organizationId, market.operator.token, '2024-03-01T01:00:00+01:00', END)).status).toBe(400);
    const byAdmin = await spec(market.operator.organizationId, t.adminToken);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.counterParts).toHaveLength(2);
  });

  it('counts a transaction once it is validated', async () => {
    await validated('availability_transactions', ids.a2!, '100', '100');
    const s = (await spec(market.operator.organizationId, market.operator.token)).body as Spec;
    // 7 kW × 3 × 100 % = 21 → 82.50 + 21 = 103.50.
    expect(s.counterParts[1]!.availabilityBoughtSummary.totalRemunerationSum).toBe(103.5);
    checkTotals(s);
  });
});
