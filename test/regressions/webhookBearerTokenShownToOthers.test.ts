// Regression: a subscription's webhook `bearerToken` (the subscriber's secret) was shown to every
// reader: business-logic clients listing subscriptions, the notifications of SUBSCRIPTION changes
// (their bodies carry the subscription), `GET /api/admin/notifications/{id}`, and the MQTT
// messages. Only the subscription's own writer reads it back now, as OpenADR serves it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mqttSubscriber, SURFACES } from '../support/openAdrClients.ts';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startReceiver, startVtnApp, waitFor, type Receiver, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
let ven: VtnClient;
let receiver: Receiver;
beforeAll(async () => {
  ({ t, bl, ven } = await startVtnApp({ VTN_WEBHOOK_ALLOW_PRIVATE: 'true', VTN_DISPATCH_POLL_MS: '50' }));
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

describe.each(SURFACES)('bearer tokens on $name', (s) => {
  it('shows a subscription’s bearer token to its writer only', async () => {
    const secret = `ven-secret-${s.name}`;
    const op = (o: string) => (s.name === '3.1.0' ? { POST: 'CREATE', PUT: 'UPDATE' }[o]! : o);
    const program = await expectStatus(t.api.post(`${s.base}/programs`, { programName: `tokens-${s.name}` }, bl.token), 201);
    await expectStatus(
      t.api.post(`${s.base}/subscriptions`, { clientName: 'bl', programID: program.id, objectOperations: [{ objects: ['SUBSCRIPTION'], operations: [op('POST')], callbackUrl: `${receiver.url}/bl-${s.name}` }] }, bl.token),
      201,
    );
    const mqtt = await mqttSubscriber(t.app.mqttPort, bl, [`openadr3/${bl.organizationId}/subscriptions/+`]);
    try {
      const mine = await expectStatus(
        t.api.post(`${s.base}/subscriptions`, { clientName: 'ven', programID: program.id, objectOperations: [{ objects: ['EVENT'], operations: [op('POST')], callbackUrl: `${receiver.url}/ven`, bearerToken: secret }] }, ven.token),
        201,
      );
      expect(mine.objectOperations[0].bearerToken).toBe(secret);
      expect((await expectStatus(t.api.get(`${s.base}/subscriptions/${mine.id}`, ven.token), 200)).objectOperations[0].bearerToken).toBe(secret);

      expect((await t.api.get(`${s.base}/subscriptions`, bl.token)).text).not.toContain(secret);
      expect((await t.api.get(`${s.base}/subscriptions/${mine.id}`, bl.token)).text).not.toContain(secret);
      const notified = await waitFor('notification', () => receiver.received.find((r) => r.path === `/bl-${s.name}` && r.body.object.id === mine.id));
      expect(JSON.stringify(notified.body)).not.toContain(secret);
      const published = await waitFor('MQTT', () => mqtt.messages.find((m) => m.body.object.id === mine.id));
      expect(JSON.stringify(published.body)).not.toContain(secret);
      const admin = await expectStatus(t.api.get('/api/admin/notifications?limit=100', t.adminToken), 200);
      expect(JSON.stringify(admin)).not.toContain(secret);
      for (const n of (admin.notifications ?? admin.items ?? admin) as any[]) {
        expect((await t.api.get(`/api/admin/notifications/${n.id}`, t.adminToken)).text).not.toContain(secret);
      }
      expect((await t.api.get('/api/admin/mqtt-messages?limit=100', t.adminToken)).text).not.toContain(secret);
      // A business-logic client deleting it gets it back without the token.
      expect((await t.api.delete(`${s.base}/subscriptions/${mine.id}`, bl.token)).text).not.toContain(secret);
    } finally {
      await mqtt.close();
    }
  });
});
