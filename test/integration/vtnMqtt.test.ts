// MQTT notifications on the embedded broker (OpenADR 3.1.0 notifier), with a real MQTT client
// (the `mqtt` package): a 3.1 VEN finds its topics, subscribes, and receives the create, update
// and delete of the events it may read within a second; it cannot subscribe to another VEN's
// topics nor to whole collections; a bad token cannot connect; a 3.0.1 client and a 3.1.0
// client create and read the same event.
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, startReceiver, VEN_SCOPES, VTN, vtnClient, waitFor, type VtnClient } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';

interface Message {
  topic: string;
  body: any;
  at: number;
}

async function connect(port: number, client: VtnClient, token = client.token): Promise<{ mqtt: MqttClient; messages: Message[] }> {
  const c = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { username: client.clientId, password: token, reconnectPeriod: 0, connectTimeout: 5000 });
  const messages: Message[] = [];
  c.on('message', (topic, payload) => messages.push({ topic, body: JSON.parse(payload.toString()), at: Date.now() }));
  return { mqtt: c, messages };
}

/** The QoS the broker grants a subscription (128: refused). */
async function granted(client: MqttClient, topic: string): Promise<number> {
  try {
    return (await client.subscribeAsync(topic, { qos: 1 }))[0]!.qos;
  } catch (err) {
    const packet = (err as { packet?: { granted?: number[] } }).packet;
    if (packet?.granted) return packet.granted[0]!;
    throw err;
  }
}

describe('MQTT notifications on the embedded broker', () => {
  let t: TestApp;
  let bl: VtnClient;
  let ven1: VtnClient;
  let ven2: VtnClient;
  let venId1: string;
  let venId2: string;
  let programId: string;
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    t = await startTestApp({ VTN_DISPATCH_POLL_MS: '50', VTN_WEBHOOK_ALLOW_PRIVATE: 'true' });
    bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
    ven1 = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
    ven2 = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
    programId = (await expectStatus(t.api.post(`${V31}/programs`, { programName: 'mqtt-program' }, bl.token), 201)).id;
    venId1 = (await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'VEN_VEN_REQUEST', venName: 'ven-one' }, ven1.token), 201)).id;
    venId2 = (await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'VEN_VEN_REQUEST', venName: 'ven-two' }, ven2.token), 201)).id;
    // The names the VENs registered under become VEN_NAME targets once business logic confirms them.
    for (const [id, name, client] of [[venId1, 'ven-one', ven1], [venId2, 'ven-two', ven2]] as const) {
      await expectStatus(t.api.put(`${V31}/vens/${id}`, { objectType: 'BL_VEN_REQUEST', venName: name, clientID: client.clientId }, bl.token), 200);
    }
  });
  afterAll(async () => {
    for (const c of clients) await c.endAsync(true).catch(() => undefined);
    await t?.close();
  });

  it('announces the broker and the VEN’s topics; a VEN receives create, update and delete of its events within a second', async () => {
    const notifiers = await expectStatus(t.api.get(`${V31}/notifiers`, ven1.token), 200);
    expect(notifiers.WEBHOOK).toBe(true);
    expect(notifiers.MQTT).toEqual({ URIS: [`mqtt://127.0.0.1:${t.app.mqttPort}`], serialization: 'JSON', authentication: { method: 'OAUTH2_BEARER_TOKEN', username: '{clientID}' } });
    const { topics } = await expectStatus(t.api.get(`${V31}/notifiers/mqtt/topics/vens/${venId1}/events`, ven1.token), 200);
    expect(topics.CREATE).toBe(`openadr3/${bl.organizationId}/vens/${venId1}/events/create`);

    const sub = await connect(t.app.mqttPort, ven1);
    clients.push(sub.mqtt);
    expect(await granted(sub.mqtt, topics.ALL)).toBe(1);

    const created = Date.now();
    const event = await expectStatus(t.api.post(`${V31}/events`, { programID: programId, eventName: 'peak', targets: ['VEN_NAME:ven-one'], intervals: [] }, bl.token), 201);
    const c = await waitFor('create', () => sub.messages.find((m) => m.body.operation === 'CREATE' && m.body.object.id === event.id), 5000);
    expect(c.at - created).toBeLessThan(1000);
    expect(c.topic).toBe(topics.CREATE);
    expect(c.body).toMatchObject({ objectType: 'EVENT', object: { id: event.id, programID: programId, targets: ['VEN_NAME:ven-one'] }, targets: ['VEN_NAME:ven-one'] });

    const updated = Date.now();
    await expectStatus(t.api.put(`${V31}/events/${event.id}`, { programID: programId, eventName: 'peak 2', targets: ['VEN_NAME:ven-one'], intervals: [] }, bl.token), 200);
    const u = await waitFor('update', () => sub.messages.find((m) => m.body.operation === 'UPDATE' && m.body.object.id === event.id), 5000);
    expect(u.at - updated).toBeLessThan(1000);
    expect(u.body.object.eventName).toBe('peak 2');

    const deleted = Date.now();
    await expectStatus(t.api.delete(`${V31}/events/${event.id}`, bl.token), 200);
    const d = await waitFor('delete', () => sub.messages.find((m) => m.body.operation === 'DELETE' && m.body.object.id === event.id), 5000);
    expect(d.at - deleted).toBeLessThan(1000);
    expect(sub.messages.map((m) => m.body.operation)).toEqual(['CREATE', 'UPDATE', 'DELETE']);
  });

  it('a VEN cannot subscribe to another VEN’s topics or to whole collections, and does not hear events targeted elsewhere', async () => {
    const sub = await connect(t.app.mqttPort, ven2);
    clients.push(sub.mqtt);
    const org = bl.organizationId;
    for (const topic of [`openadr3/${org}/vens/${venId1}/events/+`, `openadr3/${org}/events/+`, `openadr3/${org}/vens/+/events/+`, '#', `openadr3/${org + 1}/vens/${venId2}/events/+`]) {
      expect(await granted(sub.mqtt, topic), topic).toBe(128);
    }
    expect(await granted(sub.mqtt, `openadr3/${org}/vens/${venId2}/#`)).toBe(1);
    // The topics endpoints say the same.
    await expectStatus(t.api.get(`${V31}/notifiers/mqtt/topics/vens/${venId1}/events`, ven2.token), 404);
    await expectStatus(t.api.get(`${V31}/notifiers/mqtt/topics/events`, ven2.token), 403);
    expect((await expectStatus(t.api.get(`${V31}/notifiers/mqtt/topics/events`, bl.token), 200)).topics.ALL).toBe(`openadr3/${bl.organizationId}/events/+`);

    const forOne = await expectStatus(t.api.post(`${V31}/events`, { programID: programId, targets: ['VEN_NAME:ven-one'] }, bl.token), 201);
    const forAll = await expectStatus(t.api.post(`${V31}/events`, { programID: programId }, bl.token), 201);
    await waitFor('the untargeted event', () => sub.messages.find((m) => m.body.object.id === forAll.id), 5000);
    expect(sub.messages.some((m) => m.body.object?.id === forOne.id)).toBe(false);
    await expectStatus(t.api.delete(`${V31}/events/${forOne.id}`, bl.token), 200);
    await expectStatus(t.api.delete(`${V31}/events/${forAll.id}`, bl.token), 200);
  });

  it('refuses a connection without a valid VTN access token, and clients cannot publish', async () => {
    await expect(mqtt.connectAsync(`mqtt://127.0.0.1:${t.app.mqttPort}`, { username: 'x', password: 'not-a-token', reconnectPeriod: 0, connectTimeout: 3000 })).rejects.toThrow();
    await expect(mqtt.connectAsync(`mqtt://127.0.0.1:${t.app.mqttPort}`, { reconnectPeriod: 0, connectTimeout: 3000 })).rejects.toThrow();
    const sub = await connect(t.app.mqttPort, ven1);
    const spy = await connect(t.app.mqttPort, ven1);
    clients.push(sub.mqtt, spy.mqtt);
    await spy.mqtt.subscribeAsync(`openadr3/${bl.organizationId}/vens/${venId1}/#`, { qos: 1 });
    // A forged notification is dropped by the broker (the publisher's connection is closed).
    await sub.mqtt.publishAsync(`openadr3/${bl.organizationId}/vens/${venId1}/events/create`, '{"forged":true}', { qos: 0 }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(spy.messages.some((m) => m.body.forged)).toBe(false);
  });

  it('a 3.0.1 client and a 3.1.0 client create and read the same event', async () => {
    const from301 = await expectStatus(
      t.api.post(`${VTN}/events`, { programID: programId, eventName: 'from 3.0.1', targets: [{ type: 'GROUP', values: ['north'] }, { type: 'TARGET', values: ['plain'] }] }, bl.token),
      201,
    );
    const as31 = await expectStatus(t.api.get(`${V31}/events/${from301.id}`, bl.token), 200);
    expect(as31).toMatchObject({ id: from301.id, eventName: 'from 3.0.1', targets: ['GROUP:north', 'plain'] });
    const from31 = await expectStatus(t.api.post(`${V31}/events`, { programID: programId, eventName: 'from 3.1.0', targets: ['GROUP:north', 'plain'], duration: 'PT2H' }, bl.token), 201);
    expect(from31.duration).toBe('PT2H');
    const as301 = await expectStatus(t.api.get(`${VTN}/events/${from31.id}`, bl.token), 200);
    expect(as301.targets).toEqual([{ type: 'GROUP', values: ['north'] }, { type: 'TARGET', values: ['plain'] }]);
    expect(as301.duration).toBeUndefined();
    // Both versions' target filters find both events.
    const v1 = await expectStatus(t.api.get(`${VTN}/events?targetType=GROUP&targetValues=north`, bl.token), 200);
    const v31 = await expectStatus(t.api.get(`${V31}/events?targets=GROUP:north`, bl.token), 200);
    expect(v1.map((e: any) => e.id).sort()).toEqual([from301.id, from31.id].sort());
    expect(v31.map((e: any) => e.id).sort()).toEqual([from301.id, from31.id].sort());
    // A 3.0.1 update keeps the 3.1-only duration; a 3.1 update without it clears it.
    await expectStatus(t.api.put(`${VTN}/events/${from31.id}`, { programID: programId, eventName: 'renamed by 3.0.1' }, bl.token), 200);
    expect((await expectStatus(t.api.get(`${V31}/events/${from31.id}`, bl.token), 200)).duration).toBe('PT2H');
    await expectStatus(t.api.put(`${V31}/events/${from31.id}`, { programID: programId, eventName: 'renamed by 3.1' }, bl.token), 200);
    expect((await expectStatus(t.api.get(`${V31}/events/${from31.id}`, bl.token), 200)).duration).toBeUndefined();
  });

  it('notifies a subscription’s webhook in the version of the surface that last wrote it', async () => {
    const receiver = await startReceiver();
    try {
      const entry = (operations: string[]) => [{ objects: ['EVENT'], operations, callbackUrl: `${receiver.url}/hook` }];
      const sub = await expectStatus(t.api.post(`${V31}/subscriptions`, { clientName: 'versions', programID: programId, objectOperations: entry(['CREATE']) }, bl.token), 201);
      const first = await expectStatus(t.api.post(`${V31}/events`, { programID: programId, targets: ['GROUP:none'] }, bl.token), 201);
      const n31 = await waitFor('a 3.1 notification', () => receiver.received.find((r) => r.body.object.id === first.id));
      expect(n31.body).toMatchObject({ objectType: 'EVENT', operation: 'CREATE', targets: ['GROUP:none'], object: { targets: ['GROUP:none'] } });
      // Rewritten through v1: 3.0.1 bodies from then on.
      await expectStatus(t.api.put(`${VTN}/subscriptions/${sub.id}`, { clientName: 'versions', programID: programId, objectOperations: entry(['POST']) }, bl.token), 200);
      const second = await expectStatus(t.api.post(`${V31}/events`, { programID: programId, targets: ['GROUP:none'] }, bl.token), 201);
      const n301 = await waitFor('a 3.0.1 notification', () => receiver.received.find((r) => r.body.object.id === second.id));
      expect(n301.body).toMatchObject({ objectType: 'EVENT', operation: 'POST', targets: [{ type: 'GROUP', values: ['none'] }] });
      for (const id of [first.id, second.id]) await expectStatus(t.api.delete(`${V31}/events/${id}`, bl.token), 200);
      await expectStatus(t.api.delete(`${V31}/subscriptions/${sub.id}`, bl.token), 200);
    } finally {
      await receiver.close();
    }
  });

  it('refuses to start on a taken MQTT_PORT, saying what to set', async () => {
    await expect(startTestApp({ MQTT_PORT: String(t.app.mqttPort) })).rejects.toThrow(/MQTT_PORT \d+ on 127\.0\.0\.1 is in use: set MQTT_PORT \(0 = any free port\)/);
  });
});
