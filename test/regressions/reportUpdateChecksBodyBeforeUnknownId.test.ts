// Regression: on 3.1.0, `PUT /reports/{id}` with an unknown id answered 400 (the body's eventID
// was looked up first) where every other kind answered 404, and unknown references in a 3.1.0
// body answered 400 although that document's 409 reads "Could for example be a violation of a
// foreign key constraint". Now an unknown id is 404 before anything in the body is looked up, for
// every kind, and an unknown reference is 409 on 3.1.0 for every kind (400 on /api/openadr/v1,
// whose document's 409 speaks only of duplicates).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { V31 } from '../support/openAdrClients.ts';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startVtnApp, VTN, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
let ven: VtnClient;
beforeAll(async () => {
  ({ t, bl, ven } = await startVtnApp({ VTN_WEBHOOK_ALLOW_PRIVATE: 'true' }));
});
afterAll(() => t?.close());

const report = { eventID: 'no-such-event', clientName: 'c', resources: [] };
const event = { programID: 'no-such-program', intervals: [] };
const subscription = { clientName: 'c', programID: 'no-such-program', objectOperations: [{ objects: ['EVENT'], operations: ['CREATE'], callbackUrl: 'http://127.0.0.1:9/x' }] };

it('answers 404 for an unknown id before looking at the body’s references', async () => {
  expect((await t.api.put(`${V31}/reports/no-such-report`, report, ven.token)).status).toBe(404);
  expect((await t.api.put(`${V31}/events/no-such-event`, { ...event, reportDescriptors: [{ payloadType: 'X', reportIntervals: 'SUB_INTERVALS' }] }, bl.token)).status).toBe(404);
  expect((await t.api.put(`${V31}/subscriptions/no-such-subscription`, { ...subscription, programID: undefined }, ven.token)).status).toBe(404);
  expect((await t.api.put(`${V31}/resources/no-such-resource`, { resourceName: 'r', venID: 'no-such-ven' }, bl.token)).status).toBe(404);
  expect((await t.api.put(`${VTN}/reports/no-such-report`, { ...report, programID: 'no-such-program' }, ven.token)).status).toBe(404);
});

it('answers 409 on 3.1.0 and 400 on v1 for a reference to nothing, for every kind', async () => {
  for (const [path, body, token] of [
    ['/events', event, bl.token],
    ['/reports', report, ven.token],
    ['/subscriptions', subscription, ven.token],
    ['/resources', { resourceName: 'r', venID: 'no-such-ven' }, bl.token],
  ] as const) {
    const res = await t.api.post(`${V31}${path}`, body, token);
    expect(res.status, `${path}: ${res.text}`).toBe(409);
    expect(res.body.errors).toHaveLength(1);
  }
  expect((await t.api.post(`${VTN}/events`, event, bl.token)).status).toBe(400);
  const program = await expectStatus(t.api.post(`${V31}/programs`, { programName: 'p' }, bl.token), 201);
  const known = await expectStatus(t.api.post(`${V31}/events`, { programID: program.id, intervals: [] }, bl.token), 201);
  const mine = await expectStatus(t.api.post(`${V31}/reports`, { eventID: known.id, clientName: 'c' }, ven.token), 201);
  expect(mine.programID).toBe(program.id);
  expect((await t.api.put(`${V31}/reports/${mine.id}`, report, ven.token)).status).toBe(409);
});
