// Regression: GET /api/admin/notifications/{id} showed a 3.0.1
// body (operation POST, targets as value maps) for a notification of a subscription written
// through the 3.1.0 surface, whose receiver gets a 3.1 body (operation CREATE, targets as
// strings, 3.1 object). The view now builds the body with the dispatcher's own function, in the
// notification's version, and says which version that is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, startReceiver, VTN, vtnClient, waitFor, type Receiver, type VtnClient } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';

describe('the admin view of one webhook notification', () => {
  let t: TestApp;
  let bl: VtnClient;
  let receiver: Receiver;
  let programId: string;

  beforeAll(async () => {
    t = await startTestApp({ VTN_DISPATCH_POLL_MS: '50', VTN_WEBHOOK_ALLOW_PRIVATE: 'true' });
    bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
    receiver = await startReceiver();
    programId = (await expectStatus(t.api.post(`${V31}/programs`, { programName: 'admin-view' }, bl.token), 201)).id;
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  async function viewOf(subscriptionId: string, eventId: string) {
    const received = await waitFor('the webhook', () => receiver.received.find((r) => r.body?.object?.id === eventId));
    const list = await expectStatus(t.api.get(`/api/admin/notifications?subscriptionID=${subscriptionId}`, t.adminToken), 200);
    const entry = list.find((n: { objectID: string }) => n.objectID === eventId);
    const detail = await expectStatus(t.api.get(`/api/admin/notifications/${entry.id}`, t.adminToken), 200);
    return { received: received.body, detail };
  }

  it('shows the 3.1 body a 3.1 subscription’s receiver gets', async () => {
    const sub = await expectStatus(
      t.api.post(`${V31}/subscriptions`, { clientName: 'admin-31', programID: programId, objectOperations: [{ objects: ['EVENT'], operations: ['CREATE'], callbackUrl: `${receiver.url}/31` }] }, bl.token),
      201,
    );
    const event = await expectStatus(t.api.post(`${V31}/events`, { programID: programId, eventName: 'for 3.1', targets: ['GROUP:north'], duration: 'PT1H' }, bl.token), 201);
    const { received, detail } = await viewOf(sub.id, event.id);
    expect(detail.openadrVersion).toBe('3.1.0');
    expect(detail.body).toEqual(received);
    expect(detail.body).toMatchObject({ operation: 'CREATE', targets: ['GROUP:north'], object: { targets: ['GROUP:north'], duration: 'PT1H' } });
    await expectStatus(t.api.delete(`${V31}/subscriptions/${sub.id}`, bl.token), 200);
  });

  it('shows the 3.0.1 body a 3.0.1 subscription’s receiver gets', async () => {
    const sub = await expectStatus(
      t.api.post(`${VTN}/subscriptions`, { clientName: 'admin-301', programID: programId, objectOperations: [{ objects: ['EVENT'], operations: ['POST'], callbackUrl: `${receiver.url}/301` }] }, bl.token),
      201,
    );
    const event = await expectStatus(t.api.post(`${VTN}/events`, { programID: programId, eventName: 'for 3.0.1', targets: [{ type: 'GROUP', values: ['north'] }] }, bl.token), 201);
    const { received, detail } = await viewOf(sub.id, event.id);
    expect(detail.openadrVersion).toBe('3.0.1');
    expect(detail.body).toEqual(received);
    expect(detail.body).toMatchObject({ operation: 'POST', targets: [{ type: 'GROUP', values: ['north'] }] });
  });
});
