// Large POST /api/readings batches (tens of MB, thousands of register-day blocks): all or
// nothing, last duplicate wins (also for a register named again in a later meter), corrections
// replace and move updatedAt (the same values again do not), refusals name their paths, concurrent batches with a small pool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient, createOrganization } from '../support/fixtures.ts';
import { createMeter, createRegister } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let token: string;
let org: number;
let meters: { id: number; externalId: string }[];
let registers: { id: number; externalId: string; meter: string }[];
let foreignMeter: { id: number; externalId: string };

const START = Date.UTC(2025, 0, 1);
function values(n: number, f: (i: number) => number, start = START): string {
  const parts: string[] = [];
  for (let i = 0; i < n; i += 1) parts.push(`{"timestamp":"${new Date(start + i * 900_000).toISOString()}","value":${f(i)},"resolution":900}`);
  return parts.join(',');
}
/** 8 meters × 2 registers × 10,000 readings = 160,000 readings (≈ 11 MB): several chunks. */
function body(f: (i: number) => number, extra = ''): string {
  const byMeter = new Map<string, string[]>();
  for (const r of registers) byMeter.set(r.meter, [...(byMeter.get(r.meter) ?? []), `{"id":"${r.externalId}","values":[${values(10_000, f)}]}`]);
  const parts = [...byMeter].map(([m, regs]) => `{"id":"${m}","registers":[${regs.join(',')}]}`);
  return `{"meters":[${parts.join(',')}${extra}]}`;
}
const post = (text: string) => t.api.request('POST', '/api/readings', { token, body: text, headers: { 'content-type': 'application/json' } });
async function stored(): Promise<{ n: number; sum: number }> {
  const series = await t.app.timeSeries.readSeries({ registerIds: registers.map((r) => r.id), start: START, end: START + 400 * 86_400_000 });
  return { n: series.reduce((n, s) => n + s.values.length, 0), sum: series.reduce((sum, s) => s.values.reduce((a, b) => a + b, sum), 0) };
}
async function updatedAt(registerId: number, pick: 'min' | 'max'): Promise<number> {
  const [s] = await t.app.timeSeries.readSeries({ registerIds: [registerId], start: START, end: START + 400 * 86_400_000 });
  return Math[pick](...s!.updatedAt);
}

beforeAll(async () => {
  t = await startTestApp({ LOG_LEVEL: 'error' });
  const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
  token = client.token;
  org = client.organizationId;
  meters = await Promise.all(Array.from({ length: 8 }, () => createMeter(t.api, t.adminToken, [org])));
  registers = [];
  for (const m of meters) for (let k = 0; k < 2; k += 1) registers.push({ ...(await createRegister(t.api, t.adminToken, m.id)), meter: m.externalId });
  foreignMeter = await createMeter(t.api, t.adminToken, [await createOrganization(t.api, t.adminToken)]);
});
afterAll(() => t?.close());

describe('large batches', () => {
  it('refuses a bad value in the last meter and stores nothing', async () => {
    const bad = `,{"id":"${meters[0]!.externalId}","registers":[{"id":"${registers[0]!.externalId}","values":[{"timestamp":"2025-01-01T00:00:00+01:00","value":1,"resolution":900}]}]}`;
    const res = await post(body(() => 1, bad));
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe('meters[8].registers[0].values[0].timestamp');
    expect(await stored()).toEqual({ n: 0, sum: 0 });
  });

  it('refuses a meter without access found late and stores nothing', async () => {
    const res = await post(body(() => 1, `,{"id":"${foreignMeter.externalId}","registers":[{"id":"x","values":[${values(60_000, () => 1)}]}]}`));
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ path: 'meters[8].id' });
    expect(await stored()).toEqual({ n: 0, sum: 0 });
  });

  it('stores a large batch completely', async () => {
    expect((await post(body((i) => i % 10))).status).toBe(204);
    expect(await stored()).toEqual({ n: 160_000, sum: 16 * 45_000 });
  });

  it('replaces everything on a large correction (merge path)', async () => {
    const before = await updatedAt(registers[0]!.id, 'max');
    expect((await post(body(() => 20))).status).toBe(204);
    expect(await stored()).toEqual({ n: 160_000, sum: 3_200_000 });
    const corrected = await updatedAt(registers[0]!.id, 'min');
    expect(corrected).toBeGreaterThan(before);
    // The same values again are no correction: nothing changes, updatedAt included.
    expect((await post(body(() => 20))).status).toBe(204);
    expect(await updatedAt(registers[0]!.id, 'max')).toBe(corrected);
  });

  it('lets the last of a register named in two meters win', async () => {
    for (const r of registers) await t.app.timeSeries.deleteRegister(r.id);
    const again = `,{"id":"${registers[0]!.meter}","registers":[{"id":"${registers[0]!.externalId}","values":[${values(10_000, () => 7)}]}]}`;
    expect((await post(body(() => 1, again))).status).toBe(204);
    expect(await stored()).toEqual({ n: 160_000, sum: 150_000 + 70_000 });
  });
});

describe('large batches with a small connection pool', () => {
  // A write holds a connection for its transaction while the register lookups need another.
  for (const poolMax of ['1', '2']) {
    it(`stores concurrent large batches across months with DB_POOL_MAX=${poolMax}`, async () => {
      const s = await startTestApp({ LOG_LEVEL: 'error', DB_POOL_MAX: poolMax });
      try {
        const client = await createOrgClient(s.api, s.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
        const batches: { meter: string; register: { id: number; externalId: string } }[] = [];
        for (let k = 0; k < 2; k += 1) {
          const meter = await createMeter(s.api, s.adminToken, [client.organizationId]);
          batches.push({ meter: meter.externalId, register: await createRegister(s.api, s.adminToken, meter.id) });
        }
        // 80,000 quarter hours (≈ 5.4 MB, 28 months): several chunks, later ones in new months.
        const responses = await Promise.all(
          batches.map(({ meter, register }) =>
            s.api.request('POST', '/api/readings', {
              token: client.token,
              headers: { 'content-type': 'application/json' },
              body: `{"meters":[{"id":"${meter}","registers":[{"id":"${register.externalId}","values":[${values(80_000, (i) => i % 3)}]}]}]}`,
            }),
          ),
        );
        expect(responses.map((r) => r.status)).toEqual([204, 204]);
        const series = await s.app.timeSeries.readSeries({ registerIds: batches.map((b) => b.register.id), start: START, end: START + 900 * 86_400_000 });
        expect(series.map((x) => ({ n: x.values.length, sum: x.values.reduce((a, b) => a + b, 0) }))).toEqual(batches.map(() => ({ n: 80_000, sum: 79_999 })));
      } finally {
        await s.close();
      }
    });
  }
});
