// What the VTN serves, checked against the released OpenADR 3.0.1 document itself
// (shared/spec/openadr-3.0.1.yaml, loaded with a YAML library, its component schemas compiled
// with Ajv): realistic objects of every kind, as created, read, listed, updated and deleted, and
// the webhook notifications, must each be valid 3.0.1 objects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAdrSpecPath, readSpecComponents, specCheck, type SpecCheck } from '../support/openAdrSpec.ts';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startReceiver, startVtnApp, VTN, waitFor, type Receiver, type VtnClient } from '../support/vtn.ts';

const SPEC = openAdrSpecPath('3.0.1');

describe.skipIf(!SPEC)('OpenADR 3.0.1 conformance of what the VTN serves (needs shared/spec/openadr-3.0.1.yaml)', () => {
  let t: TestApp;
  let bl: VtnClient;
  let ven: VtnClient;
  let receiver: Receiver;
  let check: SpecCheck;

  beforeAll(async () => {
    check = specCheck('openadr-3.0.1', readSpecComponents(SPEC!));
    ({ t, bl, ven } = await startVtnApp({ VTN_WEBHOOK_ALLOW_PRIVATE: 'true', VTN_DISPATCH_POLL_MS: '50' }, ['read_all', 'write_reports', 'write_subscriptions', 'write_vens']));
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  const expectValid = (kind: string, value: unknown) => expect(check(kind, value), `${kind}: ${JSON.stringify(value)}`).toEqual([]);

  it('the spec’s own validator refuses what the VTN once stored', () => {
    expect(check('event', { programID: 'p', intervals: null })).not.toEqual([]);
    expect(check('duration', 'PT1.5H')).not.toEqual([]);
    expect(check('report', { programID: 'p', eventID: 'e', clientName: 'c', resources: [{ resourceName: 'r' }] })).not.toEqual([]);
  });

  it('serves valid 3.0.1 objects of every kind, minimal and complete, through create, read, list, update and delete', async () => {
    const api = (token = bl.token) => ({
      post: (p: string, body: unknown) => expectStatus(t.api.post(`${VTN}${p}`, body, token), 201),
      get: (p: string) => expectStatus(t.api.get(`${VTN}${p}`, token), 200),
      put: (p: string, body: unknown) => expectStatus(t.api.put(`${VTN}${p}`, body, token), 200),
      del: (p: string) => expectStatus(t.api.delete(`${VTN}${p}`, token), 200),
    });
    const period = { start: '2024-06-15T09:30:00Z', duration: 'PT1H', randomizeStart: 'PT5M' };
    const targets = [{ type: 'GROUP', values: ['north', 5, true] }];
    const payloads = [{ type: 'PRICE', values: [0.17, { x: 1, y: 2.5 }] }];
    const subscribe = [{ objects: ['PROGRAM', 'EVENT', 'REPORT', 'SUBSCRIPTION', 'VEN', 'RESOURCE'], operations: ['POST', 'PUT', 'DELETE'], callbackUrl: `${receiver.url}/hook`, bearerToken: 'token-1' }];

    // The VEN client's VEN shares the objects' target, so that it sees the targeted program.
    const v = await api().post('/vens', { venName: 'VEN-1', clientID: ven.clientId, attributes: [{ type: 'LOCATION', values: [{ x: 1, y: 2 }] }], targets });
    const minimalProgram = await api().post('/programs', { programName: 'minimal' });
    const program = await api().post('/programs', {
      programName: 'complete',
      programLongName: 'Residential TOU',
      retailerName: 'ACME',
      retailerLongName: 'ACME Electric',
      programType: 'PRICING_TARIFF',
      country: 'US',
      principalSubdivision: 'CO',
      timeZoneOffset: '-PT7H',
      intervalPeriod: { start: '2024-01-01T00:00:00Z', duration: 'P1Y' },
      programDescriptions: [{ URL: 'https://example.com/program' }],
      bindingEvents: true,
      localPrice: false,
      payloadDescriptors: [{ objectType: 'EVENT_PAYLOAD_DESCRIPTOR', payloadType: 'PRICE', units: 'KWH', currency: 'USD' }],
      targets,
    });
    await api().post('/subscriptions', { clientName: 'bl', programID: program.id, objectOperations: subscribe });
    const minimalEvent = await api().post('/events', { programID: program.id });
    const event = await api().post('/events', {
      programID: program.id,
      eventName: 'price event',
      priority: 0,
      targets,
      reportDescriptors: [{ payloadType: 'USAGE', readingType: 'DIRECT_READ', units: 'KWH', targets, aggregate: false, startInterval: -1, numIntervals: -1, historical: true, frequency: -1, repeat: 1 }],
      payloadDescriptors: [{ payloadType: 'PRICE', units: 'KWH', currency: 'USD' }],
      intervalPeriod: period,
      intervals: [{ id: 0, payloads }, { id: 1, intervalPeriod: { start: '2024-06-15T10:30:00Z' }, payloads }],
    });
    const minimalReport = await api(ven.token).post('/reports', { programID: program.id, eventID: event.id, clientName: 'ven-1' });
    const report = await api(ven.token).post('/reports', {
      programID: program.id,
      eventID: event.id,
      clientName: 'ven-1',
      reportName: 'usage',
      payloadDescriptors: [{ objectType: 'REPORT_PAYLOAD_DESCRIPTOR', payloadType: 'USAGE', readingType: 'DIRECT_READ', units: 'KWH', accuracy: 0.1, confidence: 90 }],
      resources: [{ resourceName: 'RESOURCE-1', intervalPeriod: period, intervals: [{ id: 0, payloads: [{ type: 'USAGE', values: [1.5] }] }] }],
    });
    const minimalSubscription = await api(ven.token).post('/subscriptions', { clientName: 'ven-1', programID: program.id });
    const resource = await api().post(`/vens/${v.id}/resources`, { resourceName: 'RESOURCE-1', attributes: [{ type: 'MAX_POWER', values: [10] }], targets });
    await api().post(`/vens/${v.id}/resources`, { resourceName: 'RESOURCE-2' });

    for (const [kind, doc] of [['program', minimalProgram], ['program', program], ['event', minimalEvent], ['event', event], ['report', minimalReport], ['report', report], ['subscription', minimalSubscription], ['resource', resource]] as const) expectValid(kind, doc);
    expectValid('program', await api().get(`/programs/${program.id}`));
    expectValid('event', await api().get(`/events/${event.id}`));
    expectValid('report', await api(ven.token).get(`/reports/${report.id}`));
    expectValid('ven', await api().get(`/vens/${v.id}`));
    expectValid('resource', await api().get(`/vens/${v.id}/resources/${resource.id}`));
    for (const [kind, list] of [['program', '/programs'], ['event', '/events'], ['report', '/reports'], ['subscription', '/subscriptions'], ['ven', '/vens'], ['resource', `/vens/${v.id}/resources`]] as const) {
      const items = await api().get(list);
      expect(items.length, list).toBeGreaterThan(0);
      for (const item of items) expectValid(kind, item);
    }
    expectValid('event', await api().put(`/events/${minimalEvent.id}`, { programID: program.id, intervalPeriod: period }));
    expectValid('report', await api(ven.token).put(`/reports/${minimalReport.id}`, { programID: program.id, eventID: event.id, clientName: 'ven-1' }));
    expectValid('event', await api().del(`/events/${minimalEvent.id}`));
    expectValid('ven', await api().del(`/vens/${v.id}`));

    // The notifications about all of that (VtnNotification adds notificationID, an extension).
    const notified = await waitFor('the notifications', () => receiver.received.length >= 10 && receiver.received);
    for (const n of notified) expectValid('notification', n.body);
  });
});
