// Regression: persistent MQTT sessions (clean session off) had no bounds and no end: any number
// per credential, each queueing every message it matched for as long as its client stayed away,
// and kept after the credential's secret was rotated or the credential deleted. Now a session
// holds at most MQTT_MAX_QUEUED_PER_SESSION messages (one more drops it: its client sees
// sessionPresent false and reads what it missed over REST), a credential at most
// MQTT_MAX_SESSIONS_PER_CREDENTIAL sessions (the least recently connected one that is away makes
// room; when all are connected a new one is refused with return code 3), and a rotated or deleted
// credential loses its sessions within AUTH_CACHE_MS, connected or not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connackCode, connectSession, granted } from '../support/mqtt.ts';
import { fetchToken } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, VEN_SCOPES, vtnClient, waitFor, type VtnClient } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';
const AUTH_CACHE_MS = 300;

describe('persistent MQTT sessions', () => {
  let t: TestApp;
  let bl: VtnClient;
  let program: string;

  beforeAll(async () => {
    t = await startTestApp({ VTN_DISPATCH_POLL_MS: '50', AUTH_CACHE_MS: String(AUTH_CACHE_MS), MQTT_MAX_QUEUED_PER_SESSION: '3', MQTT_MAX_SESSIONS_PER_CREDENTIAL: '2' });
    bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
    program = (await expectStatus(t.api.post(`${V31}/programs`, { programName: 'sessions' }, bl.token), 201)).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A persistent session of `c` subscribed to its organization's event creations, then left. */
  async function leave(c: VtnClient, clientId: string): Promise<void> {
    const s = await connectSession(t.app.mqttPort, { username: c.clientId, password: c.token, clientId, clean: false });
    expect(await granted(s.client, [`openadr3/${c.organizationId}/events/create`])).toEqual([1]);
    await s.client.endAsync();
  }

  /** Creates events until `n` have been routed (seen by a live observer). */
  async function events(n: number): Promise<void> {
    const watch = await connectSession(t.app.mqttPort, { username: bl.clientId, password: bl.token });
    try {
      expect(await granted(watch.client, [`openadr3/${bl.organizationId}/events/create`])).toEqual([1]);
      for (let i = 0; i < n; i++) await expectStatus(t.api.post(`${V31}/events`, { programID: program, eventName: `e${i}` }, bl.token), 201);
      await waitFor(`${n} events routed`, () => watch.messages.length >= n, 5000);
    } finally {
      await watch.client.endAsync(true);
    }
  }

  it('are dropped when more messages wait than MQTT_MAX_QUEUED_PER_SESSION', async () => {
    const c = await vtnClient(t.api, t.adminToken, BL_SCOPES, bl.organizationId);
    await leave(c, 'within');
    await leave(c, 'over');
    await events(3);
    const within = await connectSession(t.app.mqttPort, { username: c.clientId, password: c.token, clientId: 'within', clean: false });
    expect(within.sessionPresent).toBe(true);
    await waitFor('the three waiting events', () => within.messages.length === 3, 5000);
    await within.client.endAsync();
    await events(1);
    // 'over' now had four: dropped; 'within' had one.
    const over = await connectSession(t.app.mqttPort, { username: c.clientId, password: c.token, clientId: 'over', clean: false });
    expect(over.sessionPresent).toBe(false);
    const again = await connectSession(t.app.mqttPort, { username: c.clientId, password: c.token, clientId: 'within', clean: false });
    expect(again.sessionPresent).toBe(true);
    for (const s of [over, again]) await s.client.endAsync();
  });

  it('number at most MQTT_MAX_SESSIONS_PER_CREDENTIAL per credential', async () => {
    const c = await vtnClient(t.api, t.adminToken, BL_SCOPES, bl.organizationId);
    const other = await vtnClient(t.api, t.adminToken, BL_SCOPES, bl.organizationId);
    await leave(c, 'first');
    await leave(c, 'second');
    await leave(other, 'first');
    // A third makes room by dropping the least recently connected one that is away.
    await leave(c, 'third');
    const present = async (cred: VtnClient, id: string) => {
      const s = await connectSession(t.app.mqttPort, { username: cred.clientId, password: cred.token, clientId: id, clean: false });
      await s.client.endAsync();
      return s.sessionPresent;
    };
    expect(await present(c, 'third')).toBe(true);
    expect(await present(c, 'second')).toBe(true);
    expect(await present(other, 'first')).toBe(true);
    // 'first' was dropped (and connecting made it again, dropping 'third', the oldest away).
    expect(await present(c, 'first')).toBe(false);
    // When all are connected, one more is refused.
    const a = await connectSession(t.app.mqttPort, { username: c.clientId, password: c.token, clientId: 'first', clean: false });
    const b = await connectSession(t.app.mqttPort, { username: c.clientId, password: c.token, clientId: 'second', clean: false });
    expect(await connackCode(t.app.mqttPort, { username: c.clientId, password: c.token, clientId: 'fourth', clean: false })).toBe(3);
    // Clean sessions are not counted.
    expect(await connackCode(t.app.mqttPort, { username: c.clientId, password: c.token, clientId: 'fourth', clean: true })).toBe(0);
    for (const s of [a, b]) await s.client.endAsync();
  });

  it('end with their credential’s secret rotation, connected or away', async () => {
    const created = await expectStatus(t.api.post('/api/openadr/vtn/credential', { organizationId: bl.organizationId, name: 'rotated', scopes: VEN_SCOPES }, t.adminToken), 200);
    const c: VtnClient = { organizationId: bl.organizationId, clientId: created.clientId, token: await fetchToken(t.api, created.clientId, created.clientSecret) };
    const ven = (await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'VEN_VEN_REQUEST', venName: 'rotating' }, c.token), 201)).id;
    const away = await connectSession(t.app.mqttPort, { username: c.clientId, password: c.token, clientId: 'away', clean: false });
    expect(await granted(away.client, [`openadr3/${c.organizationId}/vens/${ven}/events/+`])).toEqual([1]);
    await away.client.endAsync();
    const live = await connectSession(t.app.mqttPort, { username: c.clientId, password: c.token, clientId: 'live', clean: false });
    expect(await granted(live.client, [`openadr3/${c.organizationId}/vens/${ven}/events/+`])).toEqual([1]);

    const rotated = await expectStatus(t.api.put(`/api/openadr/vtn/credential/${created.id}/secret?organizationId=${bl.organizationId}`, undefined, t.adminToken), 200);
    await waitFor('the live session closed', () => live.closed, 10 * AUTH_CACHE_MS + 2000);
    // Give the periodic check a round for the session that is away.
    await new Promise((resolve) => setTimeout(resolve, 3 * AUTH_CACHE_MS));
    const token = await fetchToken(t.api, c.clientId, rotated.clientSecret);
    for (const id of ['away', 'live']) {
      const s = await connectSession(t.app.mqttPort, { username: c.clientId, password: token, clientId: id, clean: false });
      expect(s.sessionPresent, id).toBe(false);
      await s.client.endAsync();
    }
  });
});
