// GET /api/readings?resolution=86400: buckets are local days of the register's time zone, also
// across a DST change (a 23-hour day) and when the period starts or ends inside a day. Expected
// sums and averages are computed here from the posted values and hand-written day boundaries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batch, createMeteredClient, createRegister, readingsUrl, series, type Ref, type Value } from '../support/meterFixtures.ts';
import { blockPieces } from '../support/blockPieces.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let token: string;
let org: number;
let meter: Ref;
let energy: Ref;
let power: Ref;
let kolkata: Ref;
let values: Value[];

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error' });
  ({ token, organizationId: org, meter, energy, power } = await createMeteredClient(t.api, t.adminToken, ['Meter.Organization.ReadWrite', 'Meter.Organization.Read'], 'Europe/Amsterdam'));
  kolkata = await createRegister(t.api, t.adminToken, meter.id, { measurementType: 1, timeZone: 'Asia/Kolkata' });
  // 15-minute readings from 2023-03-25T12:00Z to 2023-03-28T00:00Z; Amsterdam moves to summer
  // time on 2023-03-26 at 02:00 local (01:00Z).
  values = series('2023-03-25T12:00:00Z', 240, 900, (i) => 1 + (i % 7));
  const res = await t.api.post('/api/readings', batch(meter.externalId, { [energy.externalId]: values, [power.externalId]: values, [kolkata.externalId]: values }), token);
  expect(res.status).toBe(204);
});
afterAll(() => t?.close());

const within = (from: string, to: string) => values.filter((v) => Date.parse(v.timestamp) >= Date.parse(from) && Date.parse(v.timestamp) < Date.parse(to)).map((v) => v.value);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

async function days(registerId: number, start: string, end: string) {
  const res = await t.api.get(readingsUrl(org, [registerId], start, end, 86400), token);
  expect(res.status).toBe(200);
  return res.body[0].readings as { timestamp: string; periodTo: string; value: number; resolution: number; updatedAt: string }[];
}

describe('GET /api/readings?resolution=86400', () => {
  // Amsterdam local days as UTC instants: CET (+1) before 26 March 01:00Z, CEST (+2) after.
  const amsterdam = [
    ['2023-03-24T23:00:00.000Z', '2023-03-25T23:00:00.000Z'],
    ['2023-03-25T23:00:00.000Z', '2023-03-26T22:00:00.000Z'], // 23 hours
    ['2023-03-26T22:00:00.000Z', '2023-03-27T22:00:00.000Z'],
    ['2023-03-27T22:00:00.000Z', '2023-03-28T22:00:00.000Z'],
  ] as const;

  it('sums energy per local day, the DST day included, with the period cut at start and end', async () => {
    const readings = await days(energy.id, '2023-03-25T12:00:00Z', '2023-03-28T00:00:00Z');
    expect(readings.map((r) => [r.timestamp, r.periodTo])).toEqual(amsterdam);
    expect(readings.map((r) => r.value)).toEqual(amsterdam.map(([from, to]) => sum(within(from, to))));
    expect(within('2023-03-25T23:00:00Z', '2023-03-26T22:00:00Z')).toHaveLength(92);
    expect(readings.every((r) => r.resolution === 86400 && Date.parse(r.updatedAt) > 0)).toBe(true);
  });

  it('averages power per local day and keeps only the rows inside [start, end)', async () => {
    const readings = await days(power.id, '2023-03-26T10:00:00Z', '2023-03-27T05:00:00Z');
    const [, dst, monday] = amsterdam;
    const expected = [within('2023-03-26T10:00:00Z', '2023-03-26T22:00:00Z'), within('2023-03-26T22:00:00Z', '2023-03-27T05:00:00Z')].map((xs) => sum(xs) / xs.length);
    expect(readings.map((r) => r.timestamp)).toEqual([dst[0], monday[0]]);
    readings.forEach((r, i) => expect(r.value).toBeCloseTo(expected[i]!, 10));
  });

  it('uses local midnight of a half-hour zone (Asia/Kolkata, +05:30)', async () => {
    const readings = await days(kolkata.id, '2023-03-25T00:00:00Z', '2023-03-29T00:00:00Z');
    const bounds = ['2023-03-24T18:30:00Z', '2023-03-25T18:30:00Z', '2023-03-26T18:30:00Z', '2023-03-27T18:30:00Z', '2023-03-28T18:30:00Z'];
    expect(readings.map((r) => r.timestamp)).toEqual(bounds.slice(0, 4).map((b) => b.replace('Z', '.000Z')));
    expect(readings.map((r) => r.value)).toEqual(bounds.slice(0, 4).map((b, i) => sum(within(b, bounds[i + 1]!))));
  });

  it('returns no bucket for days without readings', async () => {
    expect(await days(energy.id, '2023-04-01T00:00:00Z', '2023-04-10T00:00:00Z')).toEqual([]);
  });

  it('follows a change of the register’s zone (PUT), to one at a 45-minute offset (Australia/Eucla, +08:45)', async () => {
    const current = await t.api.get(`/api/admin/registers/${kolkata.id}`, t.adminToken);
    const { id: _id, ...register } = current.body;
    expect((await t.api.put(`/api/admin/registers/${kolkata.id}`, { ...register, timeZone: 'Australia/Eucla' }, t.adminToken)).status).toBe(200);
    const readings = await days(kolkata.id, '2023-03-25T00:00:00Z', '2023-03-29T00:00:00Z');
    const bounds = ['2023-03-24T15:15:00Z', '2023-03-25T15:15:00Z', '2023-03-26T15:15:00Z', '2023-03-27T15:15:00Z', '2023-03-28T15:15:00Z'];
    expect(readings.map((r) => r.timestamp)).toEqual(bounds.slice(0, 4).map((b) => b.replace('Z', '.000Z')));
    expect(readings.map((r) => r.value)).toEqual(bounds.slice(0, 4).map((b, i) => sum(within(b, bounds[i + 1]!))));
    // The blocks' daily pieces were rebuilt in the same transaction: cut at 15:15 UTC.
    const rows = await blockPieces(t.app.pool, [kolkata.id]);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.cut === 15.25 * 3_600_000)).toBe(true);
  });
});
