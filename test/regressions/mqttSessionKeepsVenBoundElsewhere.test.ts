// Regression: a VEN client's MQTT session subscribed to
// its VEN's topics kept receiving that VEN's events after the VEN was bound to another
// credential (its clientID changed by a business-logic client), although its own token was
// still valid: the binding was checked only at SUBSCRIBE. When the broker publishes a change of a
// VEN it now reads its VEN clients' rights again and drops a session subscribed to a VEN no
// longer bound to its credential (and every message is checked against those rights anyway).
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, VEN_SCOPES, vtnClient, waitFor, type VtnClient } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';

describe('an MQTT session subscribed to a VEN that is bound to another credential', () => {
  let t: TestApp;
  let bl: VtnClient;
  let oldOwner: VtnClient;
  let newOwner: VtnClient;

  beforeAll(async () => {
    t = await startTestApp({ VTN_DISPATCH_POLL_MS: '50', AUTH_CACHE_MS: '300' });
    bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
    oldOwner = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
    newOwner = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is disconnected, and cannot subscribe to it again; the credential’s other sessions stay', async () => {
    const org = bl.organizationId;
    const moved = await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'BL_VEN_REQUEST', venName: 'moving', clientID: oldOwner.clientId }, bl.token), 201);
    const staying = await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'BL_VEN_REQUEST', venName: 'staying', clientID: oldOwner.clientId }, bl.token), 201);
    const connect = () => mqtt.connectAsync(`mqtt://127.0.0.1:${t.app.mqttPort}`, { username: oldOwner.clientId, password: oldOwner.token, reconnectPeriod: 0, connectTimeout: 5000 });
    const onMoved = await connect();
    const onStaying = await connect();
    try {
      let movedClosed = false;
      let stayingClosed = false;
      onMoved.on('close', () => (movedClosed = true));
      onStaying.on('close', () => (stayingClosed = true));
      expect((await onMoved.subscribeAsync(`openadr3/${org}/vens/${moved.id}/events/+`, { qos: 1 }))[0]!.qos).toBe(1);
      expect((await onStaying.subscribeAsync(`openadr3/${org}/vens/${staying.id}/events/+`, { qos: 1 }))[0]!.qos).toBe(1);

      await expectStatus(t.api.put(`${V31}/vens/${moved.id}`, { objectType: 'BL_VEN_REQUEST', venName: 'moving', clientID: newOwner.clientId }, bl.token), 200);
      await waitFor('the session on the moved VEN to be closed', () => movedClosed, 5000);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(stayingClosed).toBe(false);

      const again = await connect();
      try {
        const granted = await again.subscribeAsync(`openadr3/${org}/vens/${moved.id}/events/+`, { qos: 1 }).then(
          (g) => g[0]!.qos,
          (err: { packet?: { granted?: number[] } }) => err.packet?.granted?.[0],
        );
        expect(granted).toBe(128);
      } finally {
        await again.endAsync(true);
      }
    } finally {
      await onMoved.endAsync(true).catch(() => undefined);
      await onStaying.endAsync(true).catch(() => undefined);
    }
  });
});
