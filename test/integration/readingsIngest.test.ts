// POST /api/readings: storage, duplicates, corrections, atomic refusal of every bad input,
// access rules and the rate limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, createOrgClient } from '../support/fixtures.ts';
import { batch, createMeter, createMeteredClient, createRegister, readingsUrl, series, type Ref } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let writer: string;
let org: number;
let meter: Ref;
let energy: Ref;
let power: Ref;
let otherMeter: Ref;
let otherRegister: Ref;
let virtualRegister: Ref;

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_READINGS_PER_SECOND: '1000', RATE_LIMIT_READINGS_PER_MINUTE: '1000', LOG_LEVEL: 'error' });
  ({ token: writer, organizationId: org, meter, energy, power } = await createMeteredClient(t.api, t.adminToken, ['Meter.Organization.ReadWrite']));
  virtualRegister = await createRegister(t.api, t.adminToken, meter.id, { isVirtual: true, virtualDefinition: { calculationType: 2, constant: 1 } });
  const stranger = await createOrganization(t.api, t.adminToken);
  otherMeter = await createMeter(t.api, t.adminToken, [stranger]);
  otherRegister = await createRegister(t.api, t.adminToken, otherMeter.id);
});
afterAll(() => t?.close());

const post = (body: unknown, token = writer) => t.api.post('/api/readings', body, token);
const read = async (registerId: number, start = '2024-01-01T00:00:00Z', end = '2024-02-01T00:00:00Z') => {
  const res = await t.api.get(readingsUrl(org, [registerId], start, end), writer);
  expect(res.status).toBe(200);
  return res.body[0].readings as { timestamp: string; periodTo: string; updatedAt: string; value: number; resolution: number }[];
};

describe('POST /api/readings', () => {
  it('stores a batch and returns it time-ordered with periodTo = timestamp + resolution', async () => {
    const values = series('2024-01-01T00:00:00Z', 8, 900, (i) => i * 1.5).reverse();
    const res = await post(batch(meter.externalId, { [energy.externalId]: values }));
    expect(res.status).toBe(204);
    const readings = await read(energy.id, '2024-01-01T00:00:00Z', '2024-01-01T02:00:00Z');
    expect(readings.map((r) => r.value)).toEqual([0, 1.5, 3, 4.5, 6, 7.5, 9, 10.5]);
    expect(readings[0]).toMatchObject({ timestamp: '2024-01-01T00:00:00.000Z', periodTo: '2024-01-01T00:15:00.000Z', resolution: 900 });
    expect(Date.parse(readings[0]!.updatedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('keeps the last of duplicate timestamps in one request', async () => {
    const res = await post(
      batch(meter.externalId, {
        [power.externalId]: [
          { timestamp: '2024-01-02T00:00:00Z', value: 1, resolution: 900 },
          { timestamp: '2024-01-02T00:15:00Z', value: 2, resolution: 900 },
          { timestamp: '2024-01-02T00:00:00.000Z', value: 3, resolution: 900 },
        ],
      }),
    );
    expect(res.status).toBe(204);
    expect((await read(power.id, '2024-01-02T00:00:00Z', '2024-01-03T00:00:00Z')).map((r) => r.value)).toEqual([3, 2]);
  });

  it('treats a repeated reading as a correction: the value is replaced and updatedAt moves', async () => {
    const one = [{ timestamp: '2024-01-05T00:00:00Z', value: 10, resolution: 900 }];
    expect((await post(batch(meter.externalId, { [energy.externalId]: one }))).status).toBe(204);
    const [before] = await read(energy.id, '2024-01-05T00:00:00Z', '2024-01-05T01:00:00Z');
    await new Promise((r) => setTimeout(r, 20)); // two writes in the same millisecond could share updatedAt
    const corrected = [{ ...one[0]!, value: 12 }, { timestamp: '2024-01-05T00:15:00Z', value: 13, resolution: 900 }];
    expect((await post(batch(meter.externalId, { [energy.externalId]: corrected }))).status).toBe(204);
    const after = await read(energy.id, '2024-01-05T00:00:00Z', '2024-01-05T01:00:00Z');
    expect(after.map((r) => r.value)).toEqual([12, 13]);
    expect(Date.parse(after[0]!.updatedAt)).toBeGreaterThan(Date.parse(before!.updatedAt));
  });

  it('splits one register named twice into one series', async () => {
    const res = await post({
      meters: [
        { id: meter.externalId, registers: [{ id: energy.externalId, values: [{ timestamp: '2024-01-06T00:00:00Z', value: 1, resolution: 900 }] }] },
        { id: meter.externalId, registers: [{ id: energy.externalId, values: [{ timestamp: '2024-01-06T00:00:00Z', value: 2, resolution: 900 }] }] },
      ],
    });
    expect(res.status).toBe(204);
    expect((await read(energy.id, '2024-01-06T00:00:00Z', '2024-01-07T00:00:00Z')).map((r) => r.value)).toEqual([2]);
  });

  const bad = (value: Record<string, unknown>) =>
    batch(meter.externalId, { [energy.externalId]: [{ timestamp: '2024-01-20T00:00:00Z', value: 1, resolution: 900 }, value as never] });

  it.each([
    ['a timestamp with an offset', { timestamp: '2024-01-20T01:00:00+01:00', value: 1, resolution: 900 }, 'meters[0].registers[0].values[1].timestamp'],
    ['an unparseable timestamp', { timestamp: 'yesterday', value: 1, resolution: 900 }, 'meters[0].registers[0].values[1].timestamp'],
    ['a date that does not exist', { timestamp: '2024-02-30T00:00:00Z', value: 1, resolution: 900 }, 'meters[0].registers[0].values[1].timestamp'],
    ['a non-finite value', { timestamp: '2024-01-20T00:15:00Z', value: 1e999, resolution: 900 }, 'meters[0].registers[0].values[1].value'],
    ['a string value', { timestamp: '2024-01-20T00:15:00Z', value: '5', resolution: 900 }, 'meters[0].registers[0].values[1].value'],
    ['a zero resolution', { timestamp: '2024-01-20T00:15:00Z', value: 1, resolution: 0 }, 'meters[0].registers[0].values[1].resolution'],
    ['a fractional resolution', { timestamp: '2024-01-20T00:15:00Z', value: 1, resolution: 1.5 }, 'meters[0].registers[0].values[1].resolution'],
    ['a missing value', { timestamp: '2024-01-20T00:15:00Z', resolution: 900 }, 'meters[0].registers[0].values[1].value'],
    ['an unknown field', { timestamp: '2024-01-20T00:15:00Z', value: 1, resolution: 900, quality: 'good' }, 'meters[0].registers[0].values[1].quality'],
  ])('refuses %s with its path and stores nothing of the batch', async (_, value, path) => {
    const res = await post(bad(value));
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(await read(energy.id, '2024-01-20T00:00:00Z', '2024-01-21T00:00:00Z')).toEqual([]);
  });

  it('refuses unknown meters and registers, registers of another meter, virtual registers and meters without access (as unknown ones)', async () => {
    const value = [{ timestamp: '2024-01-21T00:00:00Z', value: 1, resolution: 900 }];
    const res = await post({
      meters: [
        { id: meter.externalId, registers: [{ id: energy.externalId, values: value }, { id: 'nope', values: value }, { id: otherRegister.externalId, values: value }, { id: virtualRegister.externalId, values: value }] },
        { id: 'no-such-meter', registers: [{ id: 'x', values: value }] },
        { id: otherMeter.externalId, registers: [{ id: otherRegister.externalId, values: value }] },
      ],
    });
    expect(res.status).toBe(400);
    const byPath = Object.fromEntries(res.body.errors.map((e: { path: string; message: string }) => [e.path, e.message]));
    expect(byPath['meters[0].registers[1].id']).toMatch(/unknown register/);
    // A register of another meter is refused as an unknown one; so is a meter not shared.
    expect(byPath['meters[0].registers[2].id']).toBe(byPath['meters[0].registers[1].id']!.replace('"nope"', JSON.stringify(otherRegister.externalId)));
    expect(byPath['meters[0].registers[3].id']).toMatch(/virtual/);
    expect(byPath['meters[1].id']).toMatch(/unknown meter/);
    expect(byPath['meters[2].id']).toBe(byPath['meters[1].id']!.replace('"no-such-meter"', JSON.stringify(otherMeter.externalId)));
    expect(await read(energy.id, '2024-01-21T00:00:00Z', '2024-01-22T00:00:00Z')).toEqual([]);
  });

  it('refuses malformed JSON, a wrong content type and wrong shapes', async () => {
    const broken = await t.api.request('POST', '/api/readings', { token: writer, body: '{"meters": [', headers: { 'content-type': 'application/json' } });
    expect(broken.status).toBe(400);
    expect(broken.body.type).toBe('urn:flex:error:malformed_json');
    const text = await t.api.request('POST', '/api/readings', { token: writer, body: '{}', headers: { 'content-type': 'text/csv' } });
    expect(text.status).toBe(400);
    expect(text.body.type).toBe('urn:flex:error:unsupported_content_type');
    const shape = await post({ meters: { id: 'x' } });
    expect(shape.status).toBe(400);
    expect(shape.body.errors[0]).toEqual({ path: 'meters', message: 'must be an array, got object' });
    const missing = await post({});
    expect(missing.body.errors[0]).toEqual({ path: 'meters', message: 'is required' });
  });

  it('needs Meter.Organization.ReadWrite', async () => {
    const reader = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.Read'], organizationId: org });
    expect((await post(batch(meter.externalId, { [energy.externalId]: [] }), reader.token)).status).toBe(403);
    expect((await post(batch(meter.externalId, { [energy.externalId]: [] }), '')).status).toBe(401);
  });
});

describe('POST /api/readings rate limit', () => {
  it('allows 5 per second and 20 per minute per client by default, then 429 with Retry-After', async () => {
    const limited = await startTestApp({ RATE_LIMIT_READINGS_PER_SECOND: '5', RATE_LIMIT_READINGS_PER_MINUTE: '7' });
    try {
      const c = await createOrgClient(limited.api, limited.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
      const m = await createMeter(limited.api, limited.adminToken, [c.organizationId]);
      const r = await createRegister(limited.api, limited.adminToken, m.id);
      const body = batch(m.externalId, { [r.externalId]: [{ timestamp: '2024-01-01T00:00:00Z', value: 1, resolution: 900 }] });
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 12 && last?.status !== 429; i += 1) {
        last = await limited.api.post('/api/readings', body, c.token);
        statuses.push(last.status);
        if (last.status === 204) expect(last.headers.get('x-rate-limit-limit')).toBe('7');
      }
      expect(last!.status).toBe(429);
      expect(statuses.filter((s) => s === 204).length).toBeLessThanOrEqual(7);
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(last!.text).toContain('quota "readings" allows 5 requests per second and 7 requests per minute');
    } finally {
      await limited.close();
    }
  });
});
