// Regression: MQTT client ids were not tied to the credential. Any authenticated client, of any
// organization, connecting with another client's id kicked that client's live connection,
// resumed its persistent session (sessionPresent, and the QoS 1 messages queued for it), or wiped
// it by connecting with clean session on. Client ids now live in the namespace of the credential
// that connects: the same id under another credential is another session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSession, granted, type Session } from '../support/mqtt.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, VEN_SCOPES, vtnClient, waitFor, type VtnClient } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';

describe('an MQTT client id used by another credential', () => {
  let t: TestApp;
  let bl: VtnClient;
  let victim: VtnClient;
  let sameOrganization: VtnClient;
  let otherOrganization: VtnClient;
  const open: Session[] = [];

  beforeAll(async () => {
    t = await startTestApp({ VTN_DISPATCH_POLL_MS: '50' });
    bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
    victim = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
    sameOrganization = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
    otherOrganization = await vtnClient(t.api, t.adminToken, BL_SCOPES);
  });
  afterAll(async () => {
    for (const s of open) await s.client.endAsync(true).catch(() => undefined);
    await t?.close();
  });

  it('neither kicks, resumes nor wipes the owner’s session', async () => {
    const org = bl.organizationId;
    const program = (await expectStatus(t.api.post(`${V31}/programs`, { programName: 'ids' }, bl.token), 201)).id;
    const ven = (await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'BL_VEN_REQUEST', venName: 'victim-ven', clientID: victim.clientId }, bl.token), 201)).id;
    const id = 'gateway-7';
    const owner = { username: victim.clientId, password: victim.token, clientId: id, clean: false };

    // Kick: the owner stays connected while others use its id.
    const live = await connectSession(t.app.mqttPort, owner);
    expect(await granted(live.client, [`openadr3/${org}/vens/${ven}/events/+`])).toEqual([1]);
    for (const other of [sameOrganization, otherOrganization]) {
      const intruder = await connectSession(t.app.mqttPort, { username: other.clientId, password: other.token, clientId: id, clean: false });
      open.push(intruder);
      expect(intruder.sessionPresent).toBe(false);
    }
    const whileLive = await expectStatus(t.api.post(`${V31}/events`, { programID: program, eventName: 'while live', targets: ['VEN_NAME:victim-ven'] }, bl.token), 201);
    await waitFor('the owner’s live delivery', () => live.messages.some((m) => m.body.object?.id === whileLive.id), 5000);
    expect(live.closed).toBe(false);
    await live.client.endAsync();

    // Takeover: a message queued for the owner is not handed to another credential.
    const queued = await expectStatus(t.api.post(`${V31}/events`, { programID: program, eventName: 'queued', targets: ['VEN_NAME:victim-ven'] }, bl.token), 201);
    const watch = await connectSession(t.app.mqttPort, { username: bl.clientId, password: bl.token });
    open.push(watch);
    expect(await granted(watch.client, [`openadr3/${org}/#`])).toEqual([1]);
    const marker = await expectStatus(t.api.post(`${V31}/events`, { programID: program, eventName: 'marker' }, bl.token), 201);
    await waitFor('the queued event routed', () => watch.messages.some((m) => m.body.object?.id === marker.id), 5000);
    for (const other of [sameOrganization, otherOrganization]) {
      const taker = await connectSession(t.app.mqttPort, { username: other.clientId, password: other.token, clientId: id, clean: false });
      open.push(taker);
      expect(taker.sessionPresent).toBe(false);
      // Wipe: clean session on, under another credential.
      const wiper = await connectSession(t.app.mqttPort, { username: other.clientId, password: other.token, clientId: id, clean: true });
      open.push(wiper);
    }

    const back = await connectSession(t.app.mqttPort, owner);
    open.push(back);
    expect(back.sessionPresent).toBe(true);
    await waitFor('the queued event, to its owner', () => back.messages.some((m) => m.body.object?.id === queued.id), 5000);
    for (const s of open) expect(s.messages.filter((m) => m.body.object?.id === queued.id && s !== back && s !== watch)).toEqual([]);
  });
});
