// Who sees which events, as the public OpenADR 3 VTN suites check it, on both surfaces and on
// every channel: a VEN client sees untargeted events and those targeted at its VEN's or its
// resources' targets (3.1.0 "Object Privacy"), never another's, not even by filtering on their
// targets; over REST, over webhooks to a real local receiver and over MQTT to a real client. A
// VEN client sees only the VEN bound to it and may rename it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blResource, blVen, mqttSubscriber, SURFACES } from '../../support/openAdrClients.ts';
import type { TestApp } from '../../support/testApp.ts';
import { expectStatus, startReceiver, startVtnApp, VEN_SCOPES, vtnClient, waitFor, type Receiver, type VtnClient } from '../../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
let ven: VtnClient;
let other: VtnClient;
let receiver: Receiver;
beforeAll(async () => {
  ({ t, bl, ven } = await startVtnApp({ VTN_WEBHOOK_ALLOW_PRIVATE: 'true', VTN_DISPATCH_POLL_MS: '50' }, ['read_targets', 'read_ven_objects', 'write_reports', 'write_subscriptions', 'write_vens']));
  other = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

describe.each(SURFACES)('event visibility on $name', (s) => {
  const create = s.name === '3.1.0' ? 'CREATE' : 'POST';

  it('shows a VEN the events targeted at its VEN and its resources, and no other, on every channel', async () => {
    const names = async (q = '') => (await expectStatus(t.api.get(`${s.base}/events${q}`, ven.token), 200)).map((e: any) => e.eventName).sort();
    const program = await expectStatus(t.api.post(`${s.base}/programs`, { programName: `privacy-${s.name}` }, bl.token), 201);
    const v = await blVen(t.api, s, bl, ven, `targeted-ven-${s.name}`, [`GROUP:ven-target-${s.name}`]);
    await blResource(t.api, s, bl, v.id, 'resource-targeted', [`GROUP:resource-target-${s.name}`]);
    await blVen(t.api, s, bl, other, `other-ven-${s.name}`, [`GROUP:other-target-${s.name}`]);
    await expectStatus(
      t.api.post(`${s.base}/subscriptions`, { clientName: 'ven', programID: program.id, objectOperations: [{ objects: ['EVENT'], operations: [create], callbackUrl: `${receiver.url}/${s.name}` }] }, ven.token),
      201,
    );
    const mqtt = await mqttSubscriber(t.app.mqttPort, ven, [`openadr3/${ven.organizationId}/vens/${v.id}/events/+`]);
    try {
      const post = (eventName: string, target?: string) =>
        expectStatus(t.api.post(`${s.base}/events`, { programID: program.id, eventName, targets: target ? s.targets(target) : null, intervals: [] }, bl.token), 201);
      await post('not-targeted-event', `GROUP:other-target-${s.name}`);
      await post('targeted-event', `GROUP:ven-target-${s.name}`);
      await post('resource-targeted-event', `GROUP:resource-target-${s.name}`);
      await post('for-everyone');
      const expected = ['for-everyone', 'resource-targeted-event', 'targeted-event'];
      expect(await names(`?programID=${program.id}`)).toEqual(expected);
      expect(await names(`?${s.targetQuery(`GROUP:resource-target-${s.name}`)}`)).toEqual(['resource-targeted-event']);
      expect(await names(`?${s.targetQuery(`GROUP:other-target-${s.name}`)}`)).toEqual([]);

      const hooked = () => receiver.received.filter((r) => r.path === `/${s.name}`).map((r) => r.body.object.eventName).sort();
      await waitFor('webhooks', () => hooked().length >= expected.length);
      const published = () => mqtt.messages.map((m) => m.body.object.eventName).sort();
      await waitFor('MQTT', () => published().length >= expected.length);
      // The untargeted event was written last: everything before it has been sent.
      expect(hooked()).toEqual(expected);
      expect(published()).toEqual(expected);
    } finally {
      await mqtt.close();
    }
  });

  it('serves the VEN a VEN client registers with no targets ([]), bound to that client', async () => {
    const body = s.name === '3.1.0' ? { objectType: 'VEN_VEN_REQUEST', venName: `self-${s.name}`, attributes: null } : { venName: `self-${s.name}`, attributes: null };
    const created = await expectStatus(t.api.post(`${s.base}/vens`, body, other.token), 201);
    expect(created).toMatchObject({ venName: `self-${s.name}`, targets: [], clientID: other.clientId });
    await expectStatus(t.api.delete(`${s.base}/vens/${created.id}`, bl.token), 200);
  });

  it('shows a VEN client only the VEN bound to it, and lets it rename that VEN', async () => {
    const mine = await blVen(t.api, s, bl, ven, `mine-${s.name}`, ['GROUP:kept']);
    const theirs = await blVen(t.api, s, bl, other, `theirs-${s.name}`);
    const listed = (await expectStatus(t.api.get(`${s.base}/vens`, ven.token), 200)).map((x: any) => x.id);
    expect(listed).toContain(mine.id);
    expect(listed).not.toContain(theirs.id);
    expect((await t.api.get(`${s.base}/vens/${theirs.id}`, ven.token)).status).toBe(404);
    const rename = s.name === '3.1.0' ? { objectType: 'VEN_VEN_REQUEST', venName: `renamed-${s.name}`, attributes: null } : { venName: `renamed-${s.name}` };
    expect((await t.api.put(`${s.base}/vens/${theirs.id}`, rename, ven.token)).status).toBe(404);
    const renamed = await expectStatus(t.api.put(`${s.base}/vens/${mine.id}`, rename, ven.token), 200);
    expect(renamed).toMatchObject({ venName: `renamed-${s.name}`, targets: mine.targets });
  });
});
