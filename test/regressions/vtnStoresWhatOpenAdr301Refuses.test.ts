// Regression: VTN input that the OpenADR 3.0.1 schemas refuse was stored and
// echoed back: null for fields that are not nullable, a report resource without intervals,
// durations such as PT1.5H, P1W2D or P0.5D, and a callbackUrl with a space stored raw.
// Now each is a 400 naming the field (or, where docs/vtn.md says so, stored normalised: a null
// for an optional member reads as absent).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startVtnApp, VTN, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
let ven: VtnClient;
let programID: string;
let eventID: string;

beforeAll(async () => {
  ({ t, bl, ven } = await startVtnApp({ VTN_WEBHOOK_ALLOW_PRIVATE: 'true' }, ['read_all', 'write_reports', 'write_subscriptions']));
  programID = (await expectStatus(t.api.post(`${VTN}/programs`, { programName: 'base' }, bl.token), 201)).id;
  eventID = (await expectStatus(t.api.post(`${VTN}/events`, { programID, intervals: [] }, bl.token), 201)).id;
});
afterAll(() => t?.close());

const period = { start: '2024-01-01T00:00:00Z', duration: 'PT1H' };
const interval = { id: 0, payloads: [{ type: 'PRICE', values: [0.1] }] };

async function refused(path: string, body: Record<string, unknown>, field: string, token = bl.token) {
  const res = await t.api.post(`${VTN}${path}`, body, token);
  expect(res.status, `${path} ${JSON.stringify(body)}: ${res.text}`).toBe(400);
  expect(res.body.errors.map((e: any) => e.path), res.text).toContain(field);
}

describe('what OpenADR 3.0.1 refuses', () => {
  it('stores no null where 3.0.1 has no null: an optional member reads as absent, a required one is refused', async () => {
    // OpenADR clients send null for optional members they were not given (docs/vtn.md, "Null").
    const program = await expectStatus(t.api.post(`${VTN}/programs`, { programName: 'p1', intervalPeriod: null, timeZoneOffset: null }, bl.token), 201);
    expect(program).not.toHaveProperty('intervalPeriod');
    expect(program.timeZoneOffset).toBe('PT0S');
    const event = await expectStatus(t.api.post(`${VTN}/events`, { programID, intervals: null, intervalPeriod: { start: period.start, duration: null, randomizeStart: null } }, bl.token), 201);
    expect(event.intervals).toEqual([]);
    expect(event.intervalPeriod).toEqual({ start: period.start });
    await refused('/events', { programID, intervalPeriod: { start: null }, intervals: [] }, 'intervalPeriod.start');
    await refused('/events', { programID, intervals: [{ ...interval, id: null }] }, 'intervals[0].id');
    const report = { programID, eventID, clientName: 'c' };
    expect((await expectStatus(t.api.post(`${VTN}/reports`, { ...report, resources: null }, ven.token), 201)).resources).toEqual([]);
    await refused('/reports', { ...report, resources: [{ resourceName: 'r', intervals: null }] }, 'resources[0].intervals', ven.token);
    await refused('/subscriptions', { clientName: null, programID, objectOperations: null }, 'clientName');
  });

  it('refuses a report resource without intervals', async () => {
    await refused('/reports', { programID, eventID, clientName: 'c', resources: [{ resourceName: 'r' }] }, 'resources[0].intervals', ven.token);
  });

  it('refuses durations outside the 3.0.1 grammar', async () => {
    for (const duration of ['PT1.5H', 'P1W2D', 'P0.5D', 'P1.5Y', 'PT', 'P1DT', 'P']) {
      await refused('/events', { programID, intervalPeriod: { start: period.start, duration }, intervals: [] }, 'intervalPeriod.duration');
    }
    await refused('/programs', { programName: 'p2', timeZoneOffset: 'PT0.5H' }, 'timeZoneOffset');
    for (const duration of ['PT1H', 'P1W', 'P2D', 'PT1.5S', '-PT8H', 'P1Y2M3DT4H5M6S', 'PT0S']) {
      await expectStatus(t.api.post(`${VTN}/events`, { programID, intervalPeriod: { start: period.start, duration }, intervals: [] }, bl.token), 201);
    }
  });

  it('refuses a callbackUrl that is not a URI', async () => {
    for (const callbackUrl of ['http://example.com/a b', 'http://exa mple.com/', 'not a url']) {
      await refused('/subscriptions', { clientName: 'c', programID, objectOperations: [{ objects: ['EVENT'], operations: ['POST'], callbackUrl }] }, 'objectOperations[0].callbackUrl');
    }
  });

  it('serves the members 3.0.1 requires even when the interface lets them be omitted', async () => {
    const event = await expectStatus(t.api.post(`${VTN}/events`, { programID }, bl.token), 201);
    expect(event.intervals).toEqual([]);
    const report = await expectStatus(t.api.post(`${VTN}/reports`, { programID, eventID, clientName: 'c' }, ven.token), 201);
    expect(report.resources).toEqual([]);
    const subscription = await expectStatus(t.api.post(`${VTN}/subscriptions`, { clientName: 'c', programID }, bl.token), 201);
    expect(subscription.objectOperations).toEqual([]);
  });
});
