// Regression: a VEN never saw events targeted through its resources. OpenADR 3.1.0 ("Object
// Privacy") grants a VEN the targets "in their associated ven or resource objects", but only the
// VEN's own targets (and its name) were granted: GET /events with the VEN's token answered [] for
// an event targeted at a target its resource holds, and neither its MQTT topics nor its webhook
// subscription carried it. One rule (src/vtn/visibility.ts) now serves all three.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blResource, blVen, mqttSubscriber, SURFACES } from '../support/openAdrClients.ts';
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

describe.each(SURFACES)('resource targets on $name', (s) => {
  it('shows the VEN events targeted at its resource’s targets over REST, MQTT and webhooks', async () => {
    const group = `GROUP:res-${s.name}`;
    const program = await expectStatus(t.api.post(`${s.base}/programs`, { programName: `res-${s.name}` }, bl.token), 201);
    const v = await blVen(t.api, s, bl, ven, `ven-res-${s.name}`);
    await blResource(t.api, s, bl, v.id, 'battery', [group]);
    const subscription = await expectStatus(
      t.api.post(`${s.base}/subscriptions`, { clientName: 'ven', programID: program.id, objectOperations: [{ objects: ['EVENT'], operations: [s.name === '3.1.0' ? 'CREATE' : 'POST'], callbackUrl: `${receiver.url}/${s.name}` }] }, ven.token),
      201,
    );
    const mqtt = await mqttSubscriber(t.app.mqttPort, ven, [`openadr3/${ven.organizationId}/vens/${v.id}/events/+`]);
    try {
      const mine = await expectStatus(t.api.post(`${s.base}/events`, { programID: program.id, eventName: 'mine', targets: s.targets(group), intervals: [] }, bl.token), 201);
      const other = await expectStatus(t.api.post(`${s.base}/events`, { programID: program.id, eventName: 'other', targets: s.targets('GROUP:elsewhere'), intervals: [] }, bl.token), 201);

      const listed = await expectStatus(t.api.get(`${s.base}/events?programID=${program.id}`, ven.token), 200);
      expect(listed.map((e: any) => e.id)).toEqual([mine.id]);
      expect((await t.api.get(`${s.base}/events/${other.id}`, ven.token)).status).toBe(404);
      await waitFor('webhook', () => receiver.received.some((r) => r.path === `/${s.name}` && r.body.object.id === mine.id));
      await waitFor('MQTT', () => mqtt.messages.some((m) => m.body.object.id === mine.id));
      // Something after the other event went out on both channels: the other one was never sent.
      await expectStatus(t.api.post(`${s.base}/events`, { programID: program.id, eventName: 'last', targets: s.targets(group), intervals: [] }, bl.token), 201);
      await waitFor('last webhook', () => receiver.received.some((r) => r.path === `/${s.name}` && r.body.object.eventName === 'last'));
      await waitFor('last MQTT', () => mqtt.messages.some((m) => m.body.object.eventName === 'last'));
      expect(receiver.received.some((r) => r.body.object.id === other.id)).toBe(false);
      expect(mqtt.messages.some((m) => m.body.object.id === other.id)).toBe(false);
      expect(subscription.id).toBeTruthy();
    } finally {
      await mqtt.close();
    }
  });
});
