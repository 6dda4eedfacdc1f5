// Settlement agreed, through the public API as the two parties use it: a grid operator buys
// flexibility, a provider delivers it; after validation the provider (the seller) accepts one
// line, disputes another (the operator resolves it with the settled figures) and disputes then
// withdraws a third; the specification shows each line's agreement and the agreed totals, as of
// any instant; final lines are no longer re-validated.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrgClient } from '../support/fixtures.ts';
import { connect, createMarket, createMeasuredResource, insertAvailabilityTransaction, postReadings, postReference, quarterHours, type Market, type MeasuredResource } from '../support/productFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const Q = 900_000;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
/** Three quarter hours starting at least three minutes from now (the API creates only future orders). */
const START = Math.ceil((Date.now() + 180_000) / Q) * Q;
const PERIOD = `start=${iso(START - DAY)}&end=${iso(START + DAY)}`;

let t: TestApp;
let db: pg.Client;
let market: Market;
let operator: OrgClient;
let seller: OrgClient;
let outsider: OrgClient;
let resource: MeasuredResource;
/** The three flexibility transactions, one per quarter hour. */
const ids: number[] = [];

type Line = Record<string, any>;
const lines = (body: any): Line[] =>
  body.counterParts.flatMap((cp: any) => ['flexibilitySoldSummary', 'flexibilityBoughtSummary', 'availabilitySoldSummary', 'availabilityBoughtSummary'].flatMap((k) => cp[k].transactions));
const lineOf = (body: any, id: number) => lines(body).find((l) => l.flexibilityTransactionId === id)!;

async function spec(who: OrgClient, asOf?: string) {
  const res = await t.api.get(`/api/product/settlement/specification?organizationId=${who.organizationId}&${PERIOD}${asOf ? `&asOf=${asOf}` : ''}`, who.token);
  expect(res.status, res.text).toBe(200);
  return res;
}

const respond = (who: OrgClient, body: Record<string, unknown>) => t.api.post('/api/product/settlement/responses', { organizationId: who.organizationId, ...body }, who.token);
const resolve = (who: OrgClient, disputeId: number, body: Record<string, unknown>) => t.api.post(`/api/product/settlement/disputes/${disputeId}/resolution`, { organizationId: who.organizationId, ...body }, who.token);
const withdraw = (who: OrgClient, disputeId: number, reason?: string) => t.api.post(`/api/product/settlement/disputes/${disputeId}/withdrawal`, { organizationId: who.organizationId, reason }, who.token);
const disputes = async (who: OrgClient, query = '') => {
  const res = await t.api.get(`/api/product/settlement/disputes?organizationId=${who.organizationId}&${PERIOD}${query}`, who.token);
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const validate = async (flexibilityTransactionIds: number[]) => {
  const res = await t.api.post('/api/admin/transactions/validate', { flexibilityTransactionIds }, t.adminToken);
  expect(res.status, res.text).toBe(200);
};
/** Actual readings of quarter hour k (reference: 10 kWh each). */
const actual = (k: number, kwh: number) => postReadings(t.api, seller.token, resource.meterExternalId, resource.actual!.externalId, quarterHours(START + k * Q, [kwh]));

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error', VALIDATION_INTERVAL_MS: '3600000' });
  db = await connect(t);
  market = await createMarket(t, 2);
  operator = market.operator;
  [seller, outsider] = market.providers as [OrgClient, OrgClient];
  resource = await createMeasuredResource(t, seller.organizationId, market.zoneId);
  for (let k = 0; k < 3; k += 1) {
    const order = await t.api.post(
      '/api/product/order/flexibility',
      { organizationId: operator.organizationId, marketZoneId: market.zoneId, productType: 1, start: iso(START + k * Q), end: iso(START + (k + 1) * Q), expiresAt: iso(Date.now() + 120_000), unitPrice: 2, minQuantity: 1, maxQuantity: 8 },
      operator.token,
    );
    expect(order.status, order.text).toBe(201);
    const accepted = await t.api.post(`/api/product/order/flexibility/${order.body.id}/acceptance`, { organizationId: seller.organizationId, resourceId: resource.id, quantity: 8 }, seller.token);
    expect(accepted.status, accepted.text).toBe(201);
    ids.push(accepted.body.id);
  }
  // Reference 10 kWh a quarter hour; actual 3, 4, 5: delivered 7, 6, 5 of 8 → 87.5 %, 75 %, 62.5 %.
  await postReference(t.api, seller.token, seller.organizationId, resource.id, quarterHours(START, [10, 10, 10]));
  for (const [k, kwh] of [3, 4, 5].entries()) await actual(k, kwh);
}, 60_000);
afterAll(async () => {
  await db?.end();
  await t?.close();
});

describe('settlement agreed', () => {
  let validatedAsOf: string;
  let validatedText: string;
  let dispute2: number;

  it('a line is answered only once it has been validated, and only by its seller', async () => {
    expect(lineOf((await spec(operator)).body, ids[0]!)).toMatchObject({ deliveryValidationStatus: 1, agreementState: 'unanswered', agreedRemuneration: null, disputeId: null });
    const early = await respond(seller, { flexibilityTransactionId: ids[0], response: 'accepted' });
    expect(early.status).toBe(409);
    expect(early.body.detail).toMatch(/not been validated yet/);
    await validate(ids);
    const validated = await spec(operator);
    expect([0, 1, 2].map((k) => lineOf(validated.body, ids[k]!).totalRemuneration)).toEqual([14, 12, 10]);
    validatedAsOf = validated.body.asOf;
    validatedText = validated.text;
    const byBuyer = await respond(operator, { flexibilityTransactionId: ids[0], response: 'accepted' });
    expect(byBuyer.status).toBe(403);
    expect(byBuyer.body.detail).toMatch(/Only the seller/);
    expect((await respond(outsider, { flexibilityTransactionId: ids[0], response: 'accepted' })).status).toBe(404);
    expect((await respond(seller, { flexibilityTransactionId: 99999999, response: 'accepted' })).status).toBe(404);
    expect((await respond(seller, { response: 'accepted' })).status).toBe(400);
    expect((await respond(seller, { flexibilityTransactionId: ids[0], availabilityTransactionId: 1, response: 'accepted' })).status).toBe(400);
    expect((await respond(seller, { flexibilityTransactionId: ids[0], response: 'maybe' })).status).toBe(400);
    // Another organization's id in the body: the token's rights are checked there first.
    expect((await t.api.post('/api/product/settlement/responses', { organizationId: seller.organizationId, flexibilityTransactionId: ids[0], response: 'accepted' }, outsider.token)).status).toBe(403);
  });

  it('the seller accepts a line: final, at its remuneration', async () => {
    const res = await respond(seller, { flexibilityTransactionId: ids[0], response: 'accepted', reason: 'Matches our metering', specificationAsOf: validatedAsOf });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      response: {
        id: expect.any(Number),
        flexibilityTransactionId: ids[0],
        availabilityTransactionId: null,
        sellerOrganizationId: seller.organizationId,
        buyerOrganizationId: operator.organizationId,
        response: 'accepted',
        reason: 'Matches our metering',
        lineRemuneration: 14,
        disputeId: null,
        createdBy: expect.any(String),
        recordedAt: expect.any(String),
      },
      dispute: null,
    });
    expect(lineOf((await spec(seller)).body, ids[0]!)).toMatchObject({ agreementState: 'accepted', agreedRemuneration: 14, disputeId: null });
    const again = await respond(seller, { flexibilityTransactionId: ids[0], response: 'disputed', reason: 'second thoughts' });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/final/);
  });

  it('the seller disputes a line; both parties see the dispute; the operator resolves it with the settled figures', async () => {
    expect((await respond(seller, { flexibilityTransactionId: ids[1], response: 'disputed' })).status).toBe(400);
    expect((await respond(seller, { flexibilityTransactionId: ids[1], response: 'disputed', reason: '   ' })).status).toBe(400);
    const res = await respond(seller, { flexibilityTransactionId: ids[1], response: 'disputed', reason: 'Our meter shows 3 kWh in that quarter hour' });
    expect(res.status, res.text).toBe(201);
    dispute2 = res.body.dispute.id;
    expect(res.body.response).toMatchObject({ response: 'disputed', disputeId: dispute2, lineRemuneration: 12 });
    expect(res.body.dispute).toMatchObject({ id: dispute2, flexibilityTransactionId: ids[1], state: 'open', reason: 'Our meter shows 3 kWh in that quarter hour', disputedRemuneration: 12, closedAt: null, settledRemuneration: null });
    for (const who of [seller, operator]) {
      const seen = await disputes(who);
      expect(seen.disputes).toEqual([res.body.dispute]);
      expect(lineOf((await spec(who)).body, ids[1]!)).toMatchObject({ agreementState: 'disputed', agreedRemuneration: null, disputeId: dispute2 });
    }
    expect((await disputes(outsider)).disputes).toEqual([]);
    expect((await respond(seller, { flexibilityTransactionId: ids[1], response: 'accepted' })).status).toBe(409);

    // While disputed the line is still re-validated: corrected readings (3 kWh) change its figures.
    const disputedAt = (await spec(operator)).body.asOf;
    await actual(1, 3);
    await validate([ids[1]!]);
    expect(lineOf((await spec(operator)).body, ids[1]!)).toMatchObject({ deliveryPercentage: 87.5, totalRemuneration: 14, agreementState: 'disputed' });

    // Only the buyer resolves, only the seller withdraws.
    expect((await resolve(seller, dispute2, { totalRemuneration: 13 })).status).toBe(403);
    expect((await withdraw(operator, dispute2)).status).toBe(403);
    expect((await resolve(outsider, dispute2, { totalRemuneration: 13 })).status).toBe(404);
    expect((await resolve(operator, dispute2, { totalRemuneration: 13.005 })).status).toBe(400);
    expect((await resolve(operator, dispute2, { totalRemuneration: -1 })).status).toBe(400);
    const resolved = await resolve(operator, dispute2, { totalRemuneration: 13, remunerationPercentage: 81.25, reason: 'Settled on 6.5 kWh' });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.body).toMatchObject({ state: 'resolved', settledRemuneration: 13, settledRemunerationPercentage: 81.25, closingReason: 'Settled on 6.5 kWh', closedAt: expect.any(String) });
    expect((await resolve(operator, dispute2, { totalRemuneration: 12 })).status).toBe(409);
    expect((await withdraw(seller, dispute2)).status).toBe(409);
    expect(lineOf((await spec(seller)).body, ids[1]!)).toMatchObject({ totalRemuneration: 14, agreementState: 'resolved', agreedRemuneration: 13, disputeId: dispute2 });
    // As of while it was open, the dispute is open and its line disputed.
    const then = await disputes(operator, `&asOf=${disputedAt}`);
    expect(then).toEqual({ asOf: disputedAt, disputes: [res.body.dispute] });
    expect(lineOf((await spec(operator, disputedAt)).body, ids[1]!)).toMatchObject({ agreementState: 'disputed', totalRemuneration: 12 });
    expect((await disputes(operator, '&state=open')).disputes).toEqual([]);
    expect((await disputes(operator, '&state=resolved')).disputes.map((d: { id: number }) => d.id)).toEqual([dispute2]);
  });

  it('a withdrawn dispute leaves the line unanswered; an answer to a stale specification is refused', async () => {
    const opened = await respond(seller, { flexibilityTransactionId: ids[2], response: 'disputed', reason: 'Checking our data' });
    expect(opened.status).toBe(201);
    const withdrawn = await withdraw(seller, opened.body.dispute.id, 'Our data agrees');
    expect(withdrawn.status, withdrawn.text).toBe(200);
    expect(withdrawn.body).toMatchObject({ state: 'withdrawn', closingReason: 'Our data agrees', settledRemuneration: null });
    expect(lineOf((await spec(seller)).body, ids[2]!)).toMatchObject({ agreementState: 'unanswered', agreedRemuneration: null, disputeId: null });
    // The line changed (disputed, then withdrawn) after the specification fetched after validation.
    const stale = await respond(seller, { flexibilityTransactionId: ids[2], response: 'accepted', specificationAsOf: validatedAsOf });
    expect(stale.status).toBe(409);
    expect(stale.body.detail).toMatch(/changed at .* fetch it again/);
    const fresh = await spec(seller);
    expect((await respond(seller, { flexibilityTransactionId: ids[2], response: 'accepted', specificationAsOf: fresh.body.asOf })).status).toBe(201);
  });

  it('the specification shows the agreements and the agreed totals, on both sides, as of any instant', async () => {
    const buyer = (await spec(operator)).body;
    const bought = buyer.counterParts.find((c: { organizationId: number }) => c.organizationId === seller.organizationId).flexibilityBoughtSummary;
    // Lines 14 + 14 (re-validated) + 10 = 38; agreed 14 (accepted) + 13 (resolved) + 10 (accepted) = 37.
    expect(bought).toMatchObject({ totalRemunerationSum: 38, agreedRemunerationSum: 37 });
    expect(bought.transactions.map((l: Line) => l.agreementState)).toEqual(['accepted', 'resolved', 'accepted']);
    const sold = (await spec(seller)).body.counterParts[0].flexibilitySoldSummary;
    expect(sold).toEqual(bought);
    // As of right after validation: the bytes fetched then.
    expect((await spec(operator, validatedAsOf)).text).toBe(validatedText);
    // Every response, oldest first, for both parties; as of before the last one, without it.
    const responses = await t.api.get(`/api/product/settlement/responses?organizationId=${operator.organizationId}&${PERIOD}`, operator.token);
    expect(responses.status).toBe(200);
    expect(responses.body.responses.map((r: { flexibilityTransactionId: number; response: string }) => [r.flexibilityTransactionId, r.response])).toEqual([
      [ids[0], 'accepted'],
      [ids[1], 'disputed'],
      [ids[2], 'disputed'],
      [ids[2], 'accepted'],
    ]);
    const last = responses.body.responses[3];
    const before = new Date(Date.parse(last.recordedAt) - 1).toISOString();
    const earlier = await t.api.get(`/api/product/settlement/responses?organizationId=${seller.organizationId}&${PERIOD}&asOf=${before}`, seller.token);
    expect(earlier.body.responses).toEqual(responses.body.responses.slice(0, 3));
    // /changes since validation: every line's agreement changed (the second also its figures).
    const changes = await t.api.get(`/api/product/settlement/changes?organizationId=${operator.organizationId}&${PERIOD}&since=${validatedAsOf}`, operator.token);
    expect(changes.body.changes.map((c: any) => [c.transactionId, c.before.line.agreementState, c.after.line.agreementState])).toEqual([
      [ids[0], 'unanswered', 'accepted'],
      [ids[1], 'unanswered', 'resolved'],
      [ids[2], 'unanswered', 'accepted'],
    ]);
  });

  it('final lines are not re-validated, by the job or an administrator', async () => {
    const history = async () => (await t.api.get(`/api/product/transaction/flexibility/${ids[0]}/validations?organizationId=${seller.organizationId}`, seller.token)).body;
    const versions = await history();
    await actual(0, 1);
    await validate([ids[0]!]);
    expect(await history()).toEqual(versions);
    expect(lineOf((await spec(seller)).body, ids[0]!)).toMatchObject({ deliveryPercentage: 87.5, totalRemuneration: 14, agreementState: 'accepted' });
    const { rows } = await db.query('SELECT id FROM flexibility_transactions WHERE id = ANY($1::int[]) AND agreement_state IN (1, 3)', [ids]);
    expect(rows).toHaveLength(3);
  });

  it('availability lines are answered the same way', async () => {
    const day = Math.floor(Date.now() / DAY) * DAY - 3 * DAY;
    const id = await insertAvailabilityTransaction(db, { market, seller: seller.organizationId, resourceId: resource.id, productType: 3, start: iso(day), end: iso(day + DAY), quantity: 10, availabilityPrice: 2 });
    const validated = await t.api.post('/api/admin/transactions/validate', { availabilityTransactionIds: [id] }, t.adminToken);
    expect(validated.status).toBe(200);
    const res = await respond(seller, { availabilityTransactionId: id, response: 'disputed', reason: 'Capacity was held for the whole day' });
    expect(res.status, res.text).toBe(201);
    expect(res.body.dispute).toMatchObject({ availabilityTransactionId: id, flexibilityTransactionId: null, disputedRemuneration: 20 });
    expect((await resolve(operator, res.body.dispute.id, { totalRemuneration: 20 })).status).toBe(200);
    const period = `start=${iso(day)}&end=${iso(day + DAY)}`;
    const s = (await t.api.get(`/api/product/settlement/specification?organizationId=${operator.organizationId}&${period}`, operator.token)).body;
    expect(s.counterParts[0].availabilityBoughtSummary).toMatchObject({ totalRemunerationSum: 20, agreedRemunerationSum: 20 });
    expect(s.counterParts[0].availabilityBoughtSummary.transactions[0]).toMatchObject({ agreementState: 'resolved', agreedRemuneration: 20 });
  });
});
