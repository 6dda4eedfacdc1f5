// Reading versions over HTTP: GET /api/readings and the hourly averages with `asOf` (stored and
// virtual registers), GET /api/readings/versions (answer, permission, organization), and the
// retention limit (READING_VERSIONS_RETENTION): an older `asOf` is a 400 naming it, and the
// purge removes what is older.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresTimeSeriesStore } from '../../src/store/timeseries/postgres/store.ts';
import { createOrgClient } from '../support/fixtures.ts';
import { batch, createMeter, createRegister, readingsUrl, series, type Ref } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let token: string;
let org: number;
let meter: Ref;
let register: Ref;
/** Instants between the three writes: before the first, after it, after the correction, after the second. */
const at: number[] = [];
const start = '2031-05-01T00:00:00Z';
const end = '2031-05-02T00:00:00Z';
const first = series(start, 8, 900, (i) => i + 1);

const pause = () => new Promise((r) => setTimeout(r, 5));

beforeAll(async () => {
  // Versions superseded more than a day ago are purged, and asOf before that refused.
  t = await startTestApp({ LOG_LEVEL: 'error', READING_VERSIONS_RETENTION: 'P1D' });
  const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
  token = client.token;
  org = client.organizationId;
  meter = await createMeter(t.api, t.adminToken, [org]);
  register = await createRegister(t.api, t.adminToken, meter.id);
  const post = async (values: ReturnType<typeof series>) => expect((await t.api.post('/api/readings', batch(meter.externalId, { [register.externalId]: values }), token)).status).toBe(204);
  at.push(Date.now());
  await pause();
  await post(first);
  await pause();
  at.push(Date.now());
  await pause();
  // The second reading corrected, the third posted again unchanged.
  await post([{ ...first[1]!, value: 20 }, first[2]!]);
  await pause();
  at.push(Date.now());
  await pause();
  await post([{ ...first[1]!, value: 200 }]);
  await pause();
  at.push(Date.now());
});
afterAll(() => t?.close());

const iso = (ms: number) => new Date(ms).toISOString();
const get = async (url: string) => {
  const res = await t.api.get(url, token);
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const readingsAsOf = async (asOf: number, resolution?: number, registerId = register.id) =>
  (await get(`${readingsUrl(org, [registerId], start, end, resolution)}&asOf=${iso(asOf)}`))[0].readings as { value: number; updatedAt: string }[];

describe('reading versions', () => {
  it('answers GET /api/readings as recorded at an earlier instant', async () => {
    expect(await readingsAsOf(at[0]!)).toEqual([]);
    expect((await readingsAsOf(at[1]!)).map((r) => r.value)).toEqual(first.map((v) => v.value));
    expect((await readingsAsOf(at[2]!)).map((r) => r.value)).toEqual([1, 20, 3, 4, 5, 6, 7, 8]);
    const now = await get(readingsUrl(org, [register.id], start, end));
    expect(now[0].readings.map((r: { value: number }) => r.value)).toEqual([1, 200, 3, 4, 5, 6, 7, 8]);
    expect(await readingsAsOf(at[3]!)).toEqual(now[0].readings);
    // updatedAt is when the value shown was recorded: the unchanged third reading kept its own.
    const corrected = await readingsAsOf(at[2]!);
    expect(Date.parse(corrected[1]!.updatedAt)).toBeGreaterThan(at[1]!);
    expect(Date.parse(corrected[2]!.updatedAt)).toBeLessThan(at[1]!);
    // Buckets and hourly averages as of the same instants.
    expect((await readingsAsOf(at[2]!, 3600)).map((r) => r.value)).toEqual([1 + 20 + 3 + 4, 5 + 6 + 7 + 8]);
    const hourly = await get(`/api/readings/average/hourly?organizationId=${org}&registerId=${register.id}&start=${start}&end=${end}&asOf=${iso(at[1]!)}`);
    expect(hourly[0].readings.map((r: { value: number }) => r.value)).toEqual([2.5, 6.5]);
  });

  it('computes virtual registers from their sources as of the instant', async () => {
    const v = await createRegister(t.api, t.adminToken, meter.id, { isVirtual: true, virtualDefinition: { calculationType: 1, expression: '2 * r0', sourceRegisters: [register.id] } });
    expect((await readingsAsOf(at[2]!, undefined, v.id)).map((r) => r.value).slice(0, 3)).toEqual([2, 40, 6]);
    expect((await readingsAsOf(at[3]!, undefined, v.id)).map((r) => r.value).slice(0, 3)).toEqual([2, 400, 6]);
    expect(await readingsAsOf(at[0]!, undefined, v.id)).toEqual([]);
  });

  it('lists every version of the corrected readings', async () => {
    const body = await get(`/api/readings/versions?organizationId=${org}&registerId=${register.id}&start=${start}&end=${end}`);
    expect(body).toHaveLength(1);
    expect(body[0].registerId).toBe(register.id);
    expect(body[0].readings.map((r: { timestamp: string }) => r.timestamp)).toEqual([new Date(first[1]!.timestamp).toISOString()]);
    const versions = body[0].readings[0].versions as { value: number; resolution: number; recordedAt: string; supersededAt: string | null }[];
    expect(versions.map((v) => v.value)).toEqual([2, 20, 200]);
    expect(versions.map((v) => v.resolution)).toEqual([900, 900, 900]);
    expect(versions[0]!.supersededAt).toBe(versions[1]!.recordedAt);
    expect(versions[1]!.supersededAt).toBe(versions[2]!.recordedAt);
    expect(versions[2]!.supersededAt).toBeNull();
    expect(Date.parse(versions[0]!.recordedAt)).toBeLessThan(at[1]!);
    expect(Date.parse(versions[1]!.recordedAt)).toBeGreaterThan(at[1]!);
    expect(Date.parse(versions[1]!.recordedAt)).toBeLessThan(at[2]!);
  });

  it('asks the same permission and organization as reading', async () => {
    const url = `/api/readings/versions?organizationId=${org}&registerId=${register.id}&start=${start}&end=${end}`;
    const stranger = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.Read'] });
    expect((await t.api.get(url, stranger.token)).status).toBe(403);
    // Another organization's register: refused as an unknown one, as GET /api/readings does.
    const foreign = await t.api.get(url.replace(`organizationId=${org}`, `organizationId=${stranger.organizationId}`), stranger.token);
    expect(foreign.status).toBe(400);
    expect((await t.api.get(readingsUrl(stranger.organizationId, [register.id], start, end), stranger.token)).text.replace(/"requestId":"[^"]*"/, '')).toBe(foreign.text.replace(/"requestId":"[^"]*"/, ''));
    const unprivileged = await createOrgClient(t.api, t.adminToken, { permissions: ['Order.Organization.Read'], organizationId: org });
    expect((await t.api.get(url, unprivileged.token)).status).toBe(403);
    expect((await t.api.get(url)).status).toBe(401);
    expect((await t.api.get(url.replace(`registerId=${register.id}`, 'registerId=999999'), token)).status).toBe(400);
  });

  it('refuses an asOf before the versions kept, naming the limit, and a malformed one', async () => {
    const old = await t.api.get(`${readingsUrl(org, [register.id], start, end)}&asOf=${iso(Date.now() - 2 * 86_400_000)}`, token);
    expect(old.status).toBe(400);
    expect(old.text).toContain('READING_VERSIONS_RETENTION P1D');
    expect(old.body.errors[0].path).toBe('query.asOf');
    const hourly = await t.api.get(`/api/readings/average/hourly?organizationId=${org}&registerId=${register.id}&start=${start}&end=${end}&asOf=${iso(Date.now() - 2 * 86_400_000)}`, token);
    expect(hourly.status).toBe(400);
    for (const bad of ['yesterday', '2031-05-01T00:00:00', '2031-02-30T00:00:00Z', ''])
      expect((await t.api.get(`${readingsUrl(org, [register.id], start, end)}&asOf=${encodeURIComponent(bad)}`, token)).status, bad).toBe(400);
    // Later than now: answered as of now.
    const later = await readingsAsOf(Date.now() + 86_400_000);
    expect(later.map((r) => r.value)).toEqual([1, 200, 3, 4, 5, 6, 7, 8]);
  });

  it('purges versions superseded before the retention limit', async () => {
    const store = t.app.timeSeries as PostgresTimeSeriesStore;
    const other = await createRegister(t.api, t.adminToken, meter.id);
    const rows = (value: number) => ({ registerIds: [other.id], offsets: Int32Array.of(0, 1), timestamps: Float64Array.of(Date.parse(start)), values: Float64Array.of(value), resolutions: Int32Array.of(900) });
    const now = Date.now();
    await t.app.timeSeries.write({ rows: rows(1), updatedAtMs: now - 3 * 86_400_000 });
    await t.app.timeSeries.write({ rows: rows(2), updatedAtMs: now - 2 * 86_400_000 });
    await t.app.timeSeries.write({ rows: rows(3), updatedAtMs: now - 3_600_000 });
    const range = { registerIds: [other.id], start: Date.parse(start), end: Date.parse(end) };
    expect((await t.app.timeSeries.versions(range, 100)).get(other.id)!.map((v) => v.value)).toEqual([1, 2, 3]);
    expect(await store.purgeVersions(now)).toBe(1);
    // The version superseded two days ago is gone; the one superseded an hour ago stays.
    expect((await t.app.timeSeries.versions(range, 100)).get(other.id)!.map((v) => v.value)).toEqual([2, 3]);
    expect(await store.purgeVersions(now)).toBe(0);
    expect(store.periodicWork.map((w) => w.name)).toEqual(['reading-versions-purge']);
  });
});
