// Regression: concurrent POST /api/readings touching the same register-days answered 409
// ("An object with the same unique value already exists") for some, and their readings were not
// stored. Writers that found no stored block all inserted one; the losers retried at most five
// times, and a winner that deleted and re-inserted the block let the next waiter's FOR UPDATE skip
// the deleted row. Now every batch is stored (204), whatever the contention.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../support/fixtures.ts';
import { createMeter, createRegister, readingsUrl, type Ref } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let organizationId: number;
let meter: Ref;

beforeAll(async () => {
  t = await startTestApp({ DB_POOL_MAX: '40' });
  organizationId = await createOrganization(t.api, t.adminToken, []);
  meter = await createMeter(t.api, t.adminToken, [organizationId]);
});
afterAll(() => t?.close());

const Q = 900_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('concurrent writers into the same register-days', () => {
  it('stores ten single readings of one register-day posted at once, all 204', async () => {
    const register = await createRegister(t.api, t.adminToken, meter.id);
    const day = Date.UTC(2031, 4, 1);
    for (let round = 0; round < 3; round += 1) {
      const start = day + round * 86_400_000;
      const posts = await Promise.all(
        Array.from({ length: 10 }, (_, k) =>
          t.api.post('/api/readings', { meters: [{ id: meter.externalId, registers: [{ id: register.externalId, values: [{ timestamp: iso(start + k * Q), value: k, resolution: 900 }] }] }] }, t.adminToken),
        ),
      );
      expect(posts.map((p) => `${p.status} ${p.status === 204 ? '' : p.text}`.trim())).toEqual(posts.map(() => '204'));
      const stored = await t.api.get(readingsUrl(organizationId, [register.id], iso(start), iso(start + 86_400_000)), t.adminToken);
      expect(stored.body[0].readings.map((r: { value: number }) => r.value)).toEqual(Array.from({ length: 10 }, (_, k) => k));
    }
  });

  it('stores 30 batches over the same 10 register-days, in any order, the last committed winning on equal timestamps', async () => {
    const registers = await Promise.all([0, 1].map(() => createRegister(t.api, t.adminToken, meter.id)));
    const first = Date.UTC(2031, 5, 1);
    const days = [0, 1, 2, 3, 4].map((d) => first + d * 86_400_000);
    // Batch b writes its own quarter hour b of every register-day, and (value 1000 + b) the
    // shared first quarter hour of each: only one of those can win.
    const batches = Array.from({ length: 30 }, (_, b) => {
      const order = b % 2 === 0 ? registers : [...registers].reverse();
      return {
        meters: [
          {
            id: meter.externalId,
            registers: order.map((r) => ({
              id: r.externalId,
              values: (b % 3 === 0 ? [...days].reverse() : days).flatMap((d) => [
                { timestamp: iso(d + (b + 1) * Q), value: b, resolution: 900 },
                { timestamp: iso(d), value: 1000 + b, resolution: 900 },
              ]),
            })),
          },
        ],
      };
    });
    const posts = await Promise.all(batches.map((body) => t.api.post('/api/readings', body, t.adminToken)));
    expect(posts.map((p) => `${p.status} ${p.status === 204 ? '' : p.text}`.trim())).toEqual(posts.map(() => '204'));
    const stored = await t.api.get(readingsUrl(organizationId, registers.map((r) => r.id), iso(first), iso(first + 5 * 86_400_000)), t.adminToken);
    for (const entry of stored.body) {
      const readings = entry.readings as { timestamp: string; value: number }[];
      expect(readings).toHaveLength(5 * 31);
      for (const d of days) {
        const ofDay = readings.filter((r) => Date.parse(r.timestamp) >= d && Date.parse(r.timestamp) < d + 86_400_000);
        expect(ofDay.slice(1).map((r) => r.value)).toEqual(Array.from({ length: 30 }, (_, b) => b));
        expect(ofDay[0]!.value).toBeGreaterThanOrEqual(1000);
      }
    }
  });
});
