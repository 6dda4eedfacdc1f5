// Regression: messages queued for a persistent MQTT session (clean session off) while its client
// was away were delivered on reconnection whatever had changed since: a VEN client whose VEN had
// meanwhile been bound to another credential still received that VEN's events, those queued
// before the change and those published after it. The broker checked topics only at SUBSCRIBE;
// it now checks every message again when delivering it, against the session's rights as they
// are then, and drops a persistent session that lost a VEN it subscribed to.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSession, granted, type Session } from '../support/mqtt.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, VEN_SCOPES, vtnClient, waitFor, type VtnClient } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';

describe('messages queued for a persistent MQTT session whose VEN moved to another credential', () => {
  let t: TestApp;
  let bl: VtnClient;
  let owner: VtnClient;
  let newOwner: VtnClient;
  const open: Session[] = [];

  beforeAll(async () => {
    t = await startTestApp({ VTN_DISPATCH_POLL_MS: '50' });
    bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
    owner = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
    newOwner = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
  });
  afterAll(async () => {
    for (const s of open) await s.client.endAsync(true).catch(() => undefined);
    await t?.close();
  });

  it('are not delivered, neither those queued before the change nor after it', async () => {
    const org = bl.organizationId;
    const program = (await expectStatus(t.api.post(`${V31}/programs`, { programName: 'moves' }, bl.token), 201)).id;
    const moving = await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'BL_VEN_REQUEST', venName: 'moving', clientID: owner.clientId }, bl.token), 201);
    const staying = await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'BL_VEN_REQUEST', venName: 'staying', clientID: owner.clientId }, bl.token), 201);

    const first = await connectSession(t.app.mqttPort, { username: owner.clientId, password: owner.token, clientId: 'owner-gateway', clean: false });
    expect(await granted(first.client, [`openadr3/${org}/vens/${moving.id}/events/+`])).toEqual([1]);
    await first.client.endAsync();

    const watch = await connectSession(t.app.mqttPort, { username: bl.clientId, password: bl.token });
    open.push(watch);
    expect(await granted(watch.client, [`openadr3/${org}/#`])).toEqual([1]);
    const before = await expectStatus(t.api.post(`${V31}/events`, { programID: program, eventName: 'before the move', targets: ['VEN_NAME:moving'] }, bl.token), 201);
    await expectStatus(t.api.put(`${V31}/vens/${moving.id}`, { objectType: 'BL_VEN_REQUEST', venName: 'moving', clientID: newOwner.clientId }, bl.token), 200);
    const after = await expectStatus(t.api.post(`${V31}/events`, { programID: program, eventName: 'after the move', targets: ['VEN_NAME:moving'] }, bl.token), 201);
    await waitFor('the events routed', () => watch.messages.some((m) => m.body.object?.id === after.id), 5000);

    const again = await connectSession(t.app.mqttPort, { username: owner.clientId, password: owner.token, clientId: 'owner-gateway', clean: false });
    open.push(again);
    // The session lost a VEN it subscribed to: dropped, so its client knows to start afresh.
    expect(again.sessionPresent).toBe(false);
    // What is still its own keeps coming, after anything that was queued.
    expect(await granted(again.client, [`openadr3/${org}/vens/${staying.id}/events/+`])).toEqual([1]);
    const control = await expectStatus(t.api.post(`${V31}/events`, { programID: program, eventName: 'still mine', targets: ['VEN_NAME:staying'] }, bl.token), 201);
    await waitFor('the event of the VEN still bound', () => again.messages.some((m) => m.body.object?.id === control.id), 5000);
    const ids = again.messages.map((m) => m.body.object?.id);
    expect(ids).not.toContain(before.id);
    expect(ids).not.toContain(after.id);
  });
});
