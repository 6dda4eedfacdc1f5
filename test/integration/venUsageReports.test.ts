// VEN usage reports become readings of the bound grid resource's actual register
// (docs/flexibility-loop.md): USAGE in KWH and DEMAND in KW, timed by their own periods or by the
// event's interval of the same id; what does not map is refused with its reason in the report's
// processing state, on both OpenADR surfaces; meter data takes precedence over the VEN's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accept, createLoopWorld, nextSlot, placeOrder, transactions, type LoopWorld } from '../support/loopFixtures.ts';
import { batch, readingsUrl } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { ALL_SCOPES, VTN, expectStatus, vtnClient, waitFor } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';
const Q = 900_000;

describe('VEN usage reports as meter data', () => {
  let t: TestApp;
  let w: LoopWorld;
  let start: number;
  let eventId: string;
  let programId: string;

  beforeAll(async () => {
    t = await startTestApp({ DISPATCH_INTERVAL_MS: '100', USAGE_REPORTS_INTERVAL_MS: '100' });
    w = await createLoopWorld(t);
    start = nextSlot();
    const order = await placeOrder(t.api, w, start, { minutes: 60 });
    const tx = await accept(t.api, w.provider, order.id, w.resource.id, 10);
    const dispatch = await waitFor('dispatch', async () => (await transactions(t.api, w.provider, start, start + 1)).find((x) => x.id === tx.id && x.dispatch.state === 'sent')?.dispatch);
    eventId = dispatch.eventID;
    programId = (await expectStatus(t.api.get(`${VTN}/events/${eventId}`, w.venClient.token), 200)).programID;
  });
  afterAll(async () => {
    await t?.close();
  });

  const report = (resources: unknown[], extra: Record<string, unknown> = {}) => ({ programID: programId, eventID: eventId, clientName: 'ven', resources, ...extra });
  const processed = (id: string, base = VTN, token = w.venClient.token) =>
    waitFor('processing', async () => {
      const p = await expectStatus(t.api.get(`${base}/reports/${id}/processing`, token), 200);
      return p.state === 'pending' ? undefined : p;
    });
  const readings = async (from: number, to: number) => {
    const body = await expectStatus(t.api.get(readingsUrl(w.provider.organizationId, [w.resource.actualRegisterId], new Date(from).toISOString(), new Date(to).toISOString()), w.provider.token), 200);
    return (body[0]?.readings ?? body[0]?.values ?? []) as { timestamp: string; value: number; resolution: number }[];
  };

  it('stores USAGE in KWH of quarter hours as readings of the actual register', async () => {
    const r = await expectStatus(
      t.api.post(
        `${VTN}/reports`,
        report([{ resourceName: w.resourceName, intervalPeriod: { start: new Date(start).toISOString(), duration: 'PT15M' }, intervals: [0, 1, 2, 3].map((i) => ({ id: i, payloads: [{ type: 'USAGE', values: [1.5 + i] }] })) }], {
          payloadDescriptors: [{ payloadType: 'USAGE', units: 'KWH', readingType: 'DIRECT_READ' }],
        }),
        w.venClient.token,
      ),
      201,
    );
    const p = await processed(r.id);
    expect(p).toMatchObject({ reportID: r.id, state: 'stored', resources: [{ resourceName: w.resourceName, state: 'stored', readings: 4, reason: null, refused: [] }] });
    const stored = await readings(start, start + 4 * Q);
    expect(stored.map((x) => [x.timestamp, x.value, x.resolution])).toEqual([0, 1, 2, 3].map((i) => [new Date(start + i * Q).toISOString(), 1.5 + i, 900]));
    // The 3.1.0 surface answers the same.
    expect(await expectStatus(t.api.get(`${V31}/reports/${r.id}/processing`, w.venClient.token), 200)).toEqual(p);
  });

  it('takes DEMAND in KW as energy of the interval, timed by the event’s interval of the same id (the units the event asked for)', async () => {
    const r = await expectStatus(
      t.api.post(`${V31}/reports`, { eventID: eventId, clientName: 'ven', resources: [{ resourceName: w.resourceName, intervals: [{ id: 0, payloads: [{ type: 'USAGE', values: [9] }] }] }] }, w.venClient.token),
      201,
    );
    const p = await processed(r.id, V31);
    // The hour of the event overlaps the quarter hours stored above: refused, not mixed.
    expect(p.state).toBe('refused');
    expect(p.resources[0].refused[0].reason).toMatch(/another length/);
    const later = start + 4 * Q;
    const d = await expectStatus(
      t.api.post(
        `${VTN}/reports`,
        report([{ resourceName: w.resourceName, intervals: [{ id: 7, intervalPeriod: { start: new Date(later).toISOString(), duration: 'PT30M' }, payloads: [{ type: 'DEMAND', values: [4] }] }] }], {
          payloadDescriptors: [{ payloadType: 'DEMAND', units: 'KW', readingType: 'MEAN' }],
        }),
        w.venClient.token,
      ),
      201,
    );
    expect((await processed(d.id)).state).toBe('stored');
    expect((await readings(later, later + 2 * Q)).map((x) => [x.value, x.resolution])).toEqual([[2, 1800]]);
  });

  it('refuses what does not map, with the reason, and keeps meter data first', async () => {
    const later = start + 8 * Q;
    // Meter data for one quarter hour: the VEN's value for it is refused.
    await expectStatus(t.api.post('/api/readings', batch(w.resource.meterExternalId, { [w.resource.actualExternalId]: [{ timestamp: new Date(later).toISOString(), value: 7, resolution: 900 }] }), w.provider.token), 204);
    const body = report(
      [
        {
          resourceName: w.resourceName,
          intervalPeriod: { start: new Date(later).toISOString(), duration: 'PT15M' },
          intervals: [
            { id: 0, payloads: [{ type: 'USAGE', values: [1] }] },
            { id: 1, payloads: [{ type: 'USAGE', values: [2] }] },
            { id: 2, payloads: [{ type: 'DEMAND', values: [3] }] },
            { id: 3, payloads: [{ type: 'USAGE', values: ['x'] }] },
            { id: 4, payloads: [{ type: 'OPERATING_STATE', values: ['NORMAL'] }] },
          ],
        },
        { resourceName: 'not-mine', intervals: [{ id: 0, payloads: [{ type: 'USAGE', values: [1] }] }] },
      ],
      { payloadDescriptors: [{ payloadType: 'USAGE', units: 'KWH' }, { payloadType: 'DEMAND', units: 'KW', readingType: 'PEAK' }] },
    );
    const r = await expectStatus(t.api.post(`${VTN}/reports`, body, w.venClient.token), 201);
    const p = await processed(r.id);
    expect(p.state).toBe('partly stored');
    const [mine, other] = p.resources;
    expect(mine).toMatchObject({ state: 'partly stored', readings: 1, reason: '3 intervals refused' });
    expect(mine.refused.map((x: any) => x.reason)).toEqual([expect.stringMatching(/PEAK/), expect.stringMatching(/one number/), expect.stringMatching(/meter data/)]);
    expect(other).toMatchObject({ state: 'refused', readings: 0, reason: expect.stringMatching(/no VEN of the credential/) });
    expect((await readings(later, later + 2 * Q)).map((x) => x.value)).toEqual([7, 2]);
    // Validated over those two quarter hours, the figures name both sources.
    const order = await placeOrder(t.api, w, later, { minutes: 30 });
    const tx = await accept(t.api, w.provider, order.id, w.resource.id, 1);
    await expectStatus(
      t.api.post(`/api/grid/resource/${w.resource.id}/readings/reference`, { organizationId: w.provider.organizationId, readings: [0, 1].map((i) => ({ timestamp: new Date(later + i * Q).toISOString(), value: 10, resolution: 900 })) }, w.provider.token),
      204,
    );
    const validated = await expectStatus(t.api.post('/api/admin/transactions/validate', { flexibilityTransactionIds: [tx.id] }, t.adminToken), 200);
    expect(validated.flexibilityTransactions[0]).toMatchObject({ validationReadingValue: 9, validationInputs: { actual: { registerId: w.resource.actualRegisterId, source: 'meter and ven' }, reference: { source: 'register' } } });
    // Units that do not map.
    const wh = await expectStatus(
      t.api.post(`${VTN}/reports`, report([{ resourceName: w.resourceName, intervals: [{ id: 0, intervalPeriod: { start: new Date(later + 3 * Q).toISOString(), duration: 'PT15M' }, payloads: [{ type: 'USAGE', values: [1] }] }] }], { payloadDescriptors: [{ payloadType: 'USAGE', units: 'WH' }] }), w.venClient.token),
      201,
    );
    expect((await processed(wh.id)).resources[0].refused[0].reason).toMatch(/WH does not map.*KWH/);
  });

  it('answers no usage, 404 for others’ reports, and refuses reports by business logic', async () => {
    const plain = await expectStatus(t.api.post(`${VTN}/reports`, report([{ resourceName: w.resourceName, intervals: [{ id: 0, payloads: [{ type: 'SIMPLE_LEVEL', values: [1] }] }] }]), w.venClient.token), 201);
    expect(await expectStatus(t.api.get(`${VTN}/reports/${plain.id}/processing`, w.venClient.token), 200)).toEqual({ reportID: plain.id, state: 'no usage', processedAt: null, resources: [] });
    const writer = await vtnClient(t.api, t.adminToken, ALL_SCOPES, w.provider.organizationId);
    const bl = await expectStatus(
      t.api.post(`${VTN}/reports`, report([{ resourceName: w.resourceName, intervals: [{ id: 0, intervalPeriod: { start: new Date(start + 20 * Q).toISOString(), duration: 'PT15M' }, payloads: [{ type: 'USAGE', values: [1] }] }] }], { payloadDescriptors: [{ payloadType: 'USAGE', units: 'KWH' }] }), writer.token),
      201,
    );
    expect((await processed(bl.id, VTN, writer.token)).resources[0].reason).toMatch(/no VEN of the credential/);
    // A VEN client sees the processing of its own reports only.
    expect((await t.api.get(`${VTN}/reports/${bl.id}/processing`, w.venClient.token)).status).toBe(404);
    expect((await t.api.get(`${VTN}/reports/unknown/processing`, w.bl.token)).status).toBe(404);
  });
});
