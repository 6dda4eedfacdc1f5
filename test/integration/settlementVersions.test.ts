// Settlement that can be reproduced: a month of transactions validated by the job, a correction
// of meter data, re-validation by the job; the specification as of an instant before the
// correction is the one fetched then, byte for byte; /changes lists exactly the changed lines,
// with both versions; each transaction's validations are kept as versions.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, createMarket, createMeasuredResource, eventually, insertAvailabilityTransaction, insertFlexibilityTransaction, postReadings, postReference, quarterHours, type Market, type MeasuredResource } from '../support/productFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** The settlement period: the 14 days up to yesterday's midnight (within the validation window). */
const END = Math.floor(Date.now() / DAY) * DAY - DAY;
const START = END - 14 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();
/** 10:00 on day d of the period. */
const ten = (d: number) => START + d * DAY + 10 * HOUR;

let t: TestApp;
let db: pg.Client;
let market: Market;
let resource: MeasuredResource;
const flex: number[] = [];
let availability: number;

type Line = Record<string, unknown> & { flexibilityTransactionId?: number; availabilityTransactionId?: number; deliveryValidationStatus: number };

const spec = async (organizationId: number, token: string, asOf?: string) => {
  const res = await t.api.get(`/api/product/settlement/specification?organizationId=${organizationId}&start=${iso(START)}&end=${iso(END)}${asOf ? `&asOf=${asOf}` : ''}`, token);
  expect(res.status, res.text).toBe(200);
  return res;
};

const lines = (body: { counterParts: Record<string, { transactions: Line[] }>[] }): Line[] =>
  body.counterParts.flatMap((cp) => ['flexibilitySoldSummary', 'flexibilityBoughtSummary', 'availabilitySoldSummary', 'availabilityBoughtSummary'].flatMap((k) => cp[k]!.transactions));

/** Actual readings of a transaction's hour: four quarter hours of `kwh` / 4. */
const actual = (start: number, kwh: number) => postReadings(t.api, t.adminToken, resource.meterExternalId, resource.actual!.externalId, quarterHours(iso(start), [kwh / 4, kwh / 4, kwh / 4, kwh / 4]));

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error', VALIDATION_DELAY_MS: '0', VALIDATION_INTERVAL_MS: '200', VALIDATION_RETRY_MS: '300' });
  db = await connect(t);
  market = await createMarket(t, 1);
  const provider = market.providers[0]!;
  resource = await createMeasuredResource(t, provider.organizationId, market.zoneId);
  // Six upward transactions of 10 kWh on days 1..6 (the first two activate the availability):
  // reference 20 kWh, actual 11 → delivered 9 (90 %).
  for (let d = 1; d <= 6; d += 1) {
    await postReference(t.api, provider.token, provider.organizationId, resource.id, quarterHours(iso(ten(d)), [5, 5, 5, 5]));
    await actual(ten(d), 11);
  }
  // All at once, so that the job never sees the availability without its calls.
  await db.query('BEGIN');
  availability = await insertAvailabilityTransaction(db, { market, seller: provider.organizationId, resourceId: resource.id, productType: 3, start: iso(START), end: iso(END), quantity: 10, availabilityPrice: 3 });
  for (let d = 1; d <= 6; d += 1) {
    const transaction = { market, seller: provider.organizationId, resourceId: resource.id, productType: 1, start: iso(ten(d)), end: iso(ten(d) + HOUR), quantity: 10, unitPrice: 2 };
    flex.push(await insertFlexibilityTransaction(db, { ...transaction, availabilityTransactionId: d <= 2 ? availability : null }));
  }
  await db.query('COMMIT');
}, 60_000);
afterAll(async () => {
  await db?.end();
  await t?.close();
});

describe('settlement versions', () => {
  let before: { text: string; asOf: string; lines: Line[] };

  it('a month validated by the job: every line validated, the answer states its asOf', async () => {
    const operator = market.operator;
    const res = await eventually(async () => {
      const r = await spec(operator.organizationId, operator.token);
      return lines(r.body).every((l) => l.deliveryValidationStatus === 2) ? r : undefined;
    }, 30_000, 'validation of the month');
    expect(lines(res.body)).toHaveLength(7);
    expect(lines(res.body).filter((l) => l.flexibilityTransactionId).map((l) => l.deliveryPercentage)).toEqual([90, 90, 90, 90, 90, 90]);
    expect(res.body.asOf).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(res.body.asOf)).toBeLessThanOrEqual(Date.now());
    before = { text: res.text, asOf: res.body.asOf, lines: lines(res.body) };
    // Asked again for that instant: the same bytes.
    expect((await spec(operator.organizationId, operator.token, before.asOf)).text).toBe(before.text);
  });

  it('a correction arrives and the job re-validates; asOf before it gives the bytes fetched then', async () => {
    const operator = market.operator;
    // Days 2 and 5: actual 11 → 13 kWh, delivered 7 (70 %). Day 2 is a call of the availability.
    await actual(ten(2), 13);
    await actual(ten(5), 13);
    const after = await eventually(async () => {
      const r = await spec(operator.organizationId, operator.token);
      const pct = new Map(lines(r.body).map((l) => [l.flexibilityTransactionId ?? -l.availabilityTransactionId!, l.deliveryPercentage]));
      return pct.get(flex[1]!) === 70 && pct.get(flex[4]!) === 70 && pct.get(-availability) === 80 ? r : undefined;
    }, 30_000, 're-validation after the correction');
    expect(after.text).not.toBe(before.text);
    expect((await spec(operator.organizationId, operator.token, before.asOf)).text).toBe(before.text);
    // The seller's side is reproduced the same way.
    const seller = market.providers[0]!;
    const sellerNow = await spec(seller.organizationId, seller.token);
    expect((await spec(seller.organizationId, seller.token, sellerNow.body.asOf)).text).toBe(sellerNow.text);

    // /changes: exactly the two corrected flexibility lines and the availability they called.
    const changes = await t.api.get(`/api/product/settlement/changes?organizationId=${operator.organizationId}&start=${iso(START)}&end=${iso(END)}&since=${before.asOf}&until=${after.body.asOf}`, operator.token);
    expect(changes.status, changes.text).toBe(200);
    expect(changes.body).toMatchObject({ organizationId: operator.organizationId, since: before.asOf, until: after.body.asOf });
    const byId = (ls: Line[], key: string, id: number) => ls.find((l) => l[key] === id);
    const expected = [
      { kind: 'flexibility', id: flex[1]!, key: 'flexibilityTransactionId' },
      { kind: 'flexibility', id: flex[4]!, key: 'flexibilityTransactionId' },
      { kind: 'availability', id: availability, key: 'availabilityTransactionId' },
    ];
    expect(changes.body.changes).toEqual(
      expected.map(({ kind, id, key }) => ({
        counterpartOrganizationId: market.providers[0]!.organizationId,
        side: 'bought',
        kind,
        transactionId: id,
        before: { recordedAt: expect.any(String), line: byId(before.lines, key, id) },
        after: { recordedAt: expect.any(String), line: byId(lines(after.body), key, id) },
      })),
    );
    for (const c of changes.body.changes) {
      expect(Date.parse(c.before.recordedAt)).toBeLessThanOrEqual(Date.parse(before.asOf));
      expect(Date.parse(c.after.recordedAt)).toBeGreaterThan(Date.parse(before.asOf));
    }
    // Until now (the default), and nothing between two instants after the re-validation.
    const untilNow = await t.api.get(`/api/product/settlement/changes?organizationId=${operator.organizationId}&start=${iso(START)}&end=${iso(END)}&since=${before.asOf}`, operator.token);
    expect(untilNow.body.changes.map((c: { transactionId: number }) => c.transactionId)).toEqual([flex[1], flex[4], availability]);
    const none = await t.api.get(`/api/product/settlement/changes?organizationId=${operator.organizationId}&start=${iso(START)}&end=${iso(END)}&since=${after.body.asOf}`, operator.token);
    expect(none.body.changes).toEqual([]);
  });

  it('keeps every validation of a transaction: due, then the correction, with the readings instant', async () => {
    const provider = market.providers[0]!;
    const history = await t.api.get(`/api/product/transaction/flexibility/${flex[1]}/validations?organizationId=${provider.organizationId}`, provider.token);
    expect(history.status, history.text).toBe(200);
    expect(history.body.map((v: { version: number; cause: string; deliveryPercentage: number }) => [v.version, v.cause, v.deliveryPercentage])).toEqual([
      [1, 'due', 90],
      [2, 'correction', 70],
    ]);
    const [first, second] = history.body;
    expect(Date.parse(first.readingsAsOf)).toBeLessThan(Date.parse(second.readingsAsOf));
    expect(Date.parse(first.recordedAt)).toBeLessThanOrEqual(Date.parse(before.asOf));
    expect(second).toMatchObject({ deliveryValidationStatus: 2, referenceReadingValue: 20, validationReadingValue: 13, deliveredQuantity: 7, remunerationPercentage: 70, attempts: 1, message: null });
    // The transaction list carries the current figures; validatedAt is the last version's instant.
    const list = await t.api.get(`/api/product/transaction/flexibility?organizationId=${provider.organizationId}&start=${iso(START)}&end=${iso(END)}`, provider.token);
    const current = list.body.flexibilityTransactions.find((x: { id: number }) => x.id === flex[1]);
    expect(current).toMatchObject({ deliveryPercentage: 70, deliveredQuantity: 7 });
    expect(Date.parse(current.validatedAt)).toBe(Date.parse(second.recordedAt));
    // Untouched transactions have one version; the availability re-validated after its call.
    const untouched = await t.api.get(`/api/product/transaction/flexibility/${flex[0]}/validations?organizationId=${provider.organizationId}`, provider.token);
    expect(untouched.body.map((v: { cause: string }) => v.cause)).toEqual(['due']);
    const called = await t.api.get(`/api/product/transaction/availability/${availability}/validations?organizationId=${market.operator.organizationId}`, market.operator.token);
    expect(called.body.map((v: { cause: string; deliveryPercentage: number; expectedDeliveredQuantity: number }) => [v.cause, v.deliveryPercentage, v.expectedDeliveredQuantity])).toEqual([
      ['due', 90, 20],
      ['correction', 80, 20],
    ]);
    expect(called.body[1].readingsAsOf).toBe(second.readingsAsOf);
    // Each version's measured energy is what the meter data said as of its readingsAsOf.
    const hour = async (asOf: string) => {
      const res = await t.api.get(`/api/readings?organizationId=${provider.organizationId}&registerId=${resource.actual!.id}&start=${iso(ten(2))}&end=${iso(ten(2) + HOUR)}&resolution=3600&asOf=${asOf}`, provider.token);
      expect(res.status, res.text).toBe(200);
      return JSON.stringify(res.body).match(/"value":([\d.]+)/)![1];
    };
    expect([await hour(first.readingsAsOf), await hour(second.readingsAsOf)]).toEqual([String(first.validationReadingValue), String(second.validationReadingValue)]);
  });

  it('answers for an instant before a write still in flight, so that asking again later gives the same bytes', async () => {
    const operator = market.operator;
    const writer = await connect(t);
    try {
      await writer.query('BEGIN');
      await writer.query('UPDATE flexibility_transactions SET delivery_percentage = 55 WHERE id = $1', [flex[0]]);
      // The instant the writer records its versions at (migration 003).
      const { rows } = await writer.query<{ at: number }>('SELECT (extract(epoch FROM settlement_instant()) * 1000)::float8 AS at');
      const during = await spec(operator.organizationId, operator.token);
      expect(Date.parse(during.body.asOf)).toBeLessThan(rows[0]!.at);
      await writer.query('COMMIT');
      expect((await spec(operator.organizationId, operator.token, during.body.asOf)).text).toBe(during.text);
      const now = await spec(operator.organizationId, operator.token);
      expect(lines(now.body).find((l) => l.flexibilityTransactionId === flex[0])!.deliveryPercentage).toBe(55);
    } finally {
      await writer.end();
    }
  });

  it('refuses what it cannot answer, and keeps the history to the parties', async () => {
    const operator = market.operator;
    const url = (q: string) => `/api/product/settlement/specification?organizationId=${operator.organizationId}&start=${iso(START)}&end=${iso(END)}&${q}`;
    const future = await t.api.get(url(`asOf=${iso(Date.now() + 60_000)}`), operator.token);
    expect(future.status).toBe(400);
    expect(future.body.errors).toEqual([{ path: 'query.asOf', message: expect.stringMatching(/^must not be later than /) }]);
    // Versions began with this installation: before it, nothing was there.
    const ancient = await t.api.get(url('asOf=2000-01-01T00:00:00Z'), operator.token);
    expect(ancient.body).toEqual({ organizationId: operator.organizationId, asOf: '2000-01-01T00:00:00.000Z', counterParts: [], remunerationPerResource: [] });
    // An installation upgraded with transactions already there: history starts at the upgrade.
    const { rows } = await db.query<{ starts: string }>(
      `UPDATE settlement_history SET starts_at = date_trunc('milliseconds', now()) - interval '1 hour' RETURNING to_char(starts_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS starts`,
    );
    try {
      const before = await t.api.get(url(`asOf=${iso(Date.parse(rows[0]!.starts) - 1)}`), operator.token);
      expect(before.status).toBe(400);
      expect(before.body).toMatchObject({ detail: `Settlement history starts at ${rows[0]!.starts}`, errors: [{ path: 'query.asOf', message: expect.stringMatching(/when settlement versions began$/) }] });
      expect((await t.api.get(url(`asOf=${rows[0]!.starts}`), operator.token)).status).toBe(200);
    } finally {
      await db.query("UPDATE settlement_history SET starts_at = '-infinity'");
    }
    expect((await t.api.get(url('asOf=yesterday'), operator.token)).status).toBe(400);
    const changes = (q: string) => t.api.get(`/api/product/settlement/changes?organizationId=${operator.organizationId}&start=${iso(START)}&end=${iso(END)}${q}`, operator.token);
    expect((await changes('')).status).toBe(400);
    expect((await changes(`&since=${iso(Date.now() - 1000)}&until=${iso(Date.now() - 2000)}`)).status).toBe(400);
    expect((await t.api.get(`/api/product/settlement/changes?organizationId=${operator.organizationId}&start=${iso(START)}&end=${iso(END)}&since=${iso(Date.now() - 1000)}`, market.providers[0]!.token)).status).toBe(403);
    // Validations: parties only (404 for anyone else, as for an unknown id).
    const outsider = (await createMarket(t, 0)).operator;
    expect((await t.api.get(`/api/product/transaction/flexibility/${flex[0]}/validations?organizationId=${outsider.organizationId}`, outsider.token)).status).toBe(404);
    expect((await t.api.get(`/api/product/transaction/flexibility/999999/validations?organizationId=${operator.organizationId}`, operator.token)).status).toBe(404);
    expect((await t.api.get(`/api/product/transaction/availability/${availability}/validations?organizationId=${operator.organizationId}`, market.providers[0]!.token)).status).toBe(403);
    expect((await t.api.get(`/api/product/transaction/flexibility/${flex[0]}/validations?organizationId=${operator.organizationId}`, t.adminToken)).status).toBe(200);
  });
});
