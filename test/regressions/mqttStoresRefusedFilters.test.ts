// Regression: a VEN client with a persistent session (clean session off) sent ONE SUBSCRIBE mixing
// its own VEN's filter with refused ones (another organization's prefix, `#`, another VEN's
// topics). SUBACK answered [1, 128, 128, 128], yet the broker stored all four filters with the
// session, queued what they matched while the client was away, and delivered it on reconnection:
// another organization's events and subscriptions (with the webhook's bearer token) and events
// targeted at other VENs of its own organization. Only granted filters are stored now, and every
// message is checked again against the session's rights when it is delivered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSession, granted, type Session } from '../support/mqtt.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, VEN_SCOPES, vtnClient, waitFor, type VtnClient } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';

describe('a persistent MQTT session after a SUBSCRIBE mixing granted and refused filters', () => {
  let t: TestApp;
  let bl1: VtnClient;
  let bl2: VtnClient;
  let attacker: VtnClient;
  let neighbour: VtnClient;
  const open: Session[] = [];

  beforeAll(async () => {
    t = await startTestApp({ VTN_DISPATCH_POLL_MS: '50', VTN_WEBHOOK_ALLOW_PRIVATE: 'true' });
    bl1 = await vtnClient(t.api, t.adminToken, BL_SCOPES);
    bl2 = await vtnClient(t.api, t.adminToken, BL_SCOPES);
    attacker = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl1.organizationId);
    neighbour = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl1.organizationId);
  });
  afterAll(async () => {
    for (const s of open) await s.client.endAsync(true).catch(() => undefined);
    await t?.close();
  });

  it('stores and delivers only what the granted filter matches', async () => {
    const [org1, org2] = [bl1.organizationId, bl2.organizationId];
    const own = (await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'BL_VEN_REQUEST', venName: 'attacker-ven', clientID: attacker.clientId }, bl1.token), 201)).id;
    const other = (await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'BL_VEN_REQUEST', venName: 'neighbour-ven', clientID: neighbour.clientId }, bl1.token), 201)).id;
    const program1 = (await expectStatus(t.api.post(`${V31}/programs`, { programName: 'org-1' }, bl1.token), 201)).id;
    const program2 = (await expectStatus(t.api.post(`${V31}/programs`, { programName: 'org-2' }, bl2.token), 201)).id;

    const first = await connectSession(t.app.mqttPort, { username: attacker.clientId, password: attacker.token, clientId: 'mixed-subscriber', clean: false });
    const filters = [`openadr3/${org1}/vens/${own}/events/+`, `openadr3/${org2}/#`, '#', `openadr3/${org1}/vens/${other}/#`];
    expect(await granted(first.client, filters)).toEqual([1, 128, 128, 128]);
    await first.client.endAsync();

    // Observers that see everything of each organization: once they have the last message, the
    // broker has routed (and queued) all of them.
    const watch1 = await connectSession(t.app.mqttPort, { username: bl1.clientId, password: bl1.token });
    const watch2 = await connectSession(t.app.mqttPort, { username: bl2.clientId, password: bl2.token });
    open.push(watch1, watch2);
    expect(await granted(watch1.client, [`openadr3/${org1}/#`])).toEqual([1]);
    expect(await granted(watch2.client, [`openadr3/${org2}/#`])).toEqual([1]);

    const foreign = await expectStatus(t.api.post(`${V31}/events`, { programID: program2, eventName: 'org-2 event' }, bl2.token), 201);
    const hook = [{ objects: ['EVENT'], operations: ['CREATE'], callbackUrl: 'http://127.0.0.1:9/hook', bearerToken: 'org-2-webhook-secret' }];
    const subscription = await expectStatus(t.api.post(`${V31}/subscriptions`, { clientName: 'org-2', programID: program2, objectOperations: hook }, bl2.token), 201);
    const neighbours = await expectStatus(t.api.post(`${V31}/events`, { programID: program1, eventName: 'for the neighbour', targets: ['VEN_NAME:neighbour-ven'] }, bl1.token), 201);
    const mine = await expectStatus(t.api.post(`${V31}/events`, { programID: program1, eventName: 'for the attacker', targets: ['VEN_NAME:attacker-ven'] }, bl1.token), 201);
    await waitFor('organization 2’s messages routed', () => watch2.messages.some((m) => m.body.object?.id === subscription.id), 5000);
    await waitFor('organization 1’s messages routed', () => watch1.messages.some((m) => m.body.object?.id === mine.id), 5000);

    const again = await connectSession(t.app.mqttPort, { username: attacker.clientId, password: attacker.token, clientId: 'mixed-subscriber', clean: false });
    open.push(again);
    expect(again.sessionPresent).toBe(true);
    // Queued messages come in order: once the last one is in, nothing else is on its way.
    await waitFor('the event targeted at the attacker’s own VEN', () => again.messages.some((m) => m.body.object?.id === mine.id), 5000);
    const ids = again.messages.map((m) => m.body.object?.id);
    expect(ids).not.toContain(foreign.id);
    expect(ids).not.toContain(subscription.id);
    expect(ids).not.toContain(neighbours.id);
    expect(JSON.stringify(again.messages)).not.toContain('org-2-webhook-secret');
    expect(again.messages.every((m) => m.topic.startsWith(`openadr3/${org1}/vens/${own}/events/`))).toBe(true);
  });
});
