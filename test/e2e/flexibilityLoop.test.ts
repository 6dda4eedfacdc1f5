// The whole flexibility loop through the public API only, as its three parties would run it
// (docs/flexibility-loop.md): a grid operator places a flexibility order; a provider accepts it
// for its grid resource bound to a VEN resource; the provider's VEN hears of the event over MQTT
// (an OpenADR 3.1.0 client) and by webhooks (a 3.0.1 and a 3.1.0 subscription) with the right
// interval and payload; the VEN reports its usage during the period; delivery validation reads it
// and validates the transaction; the settlement specification lists it; the provider disputes
// the line, the operator resolves the dispute, and the specification shows the resolved figures.
// The platform's own part is set up by its administrator (organizations, zone, meter, resource).
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient, type OrgClient } from '../support/fixtures.ts';
import { PROVIDER_PERMISSIONS, createBoundableResource, nextSlot, type BoundResource } from '../support/loopFixtures.ts';
import { uniqueId } from '../support/meterFixtures.ts';
import { MARKET_FEATURES, MARKET_PERMISSIONS } from '../support/productFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, VEN_SCOPES, VTN, expectStatus, startReceiver, vtnClient, waitFor, type Receiver, type VtnClient } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';
const Q = 900_000;

describe('the flexibility loop, end to end', () => {
  let t: TestApp;
  let operator: OrgClient;
  let provider: OrgClient;
  let zone: { id: number; name: string };
  let resource: BoundResource;
  let bl: VtnClient;
  let venClient: VtnClient;
  let ven: { id: string; venName: string };
  let venResource: { id: string; resourceName: string };
  let receiver: Receiver;
  let broker: MqttClient;
  const messages: { topic: string; body: any }[] = [];
  let start: number;
  let transaction: any;
  let eventId: string;

  beforeAll(async () => {
    t = await startTestApp({ VTN_WEBHOOK_ALLOW_PRIVATE: 'true', VTN_DISPATCH_POLL_MS: '50', DISPATCH_INTERVAL_MS: '200', USAGE_REPORTS_INTERVAL_MS: '200' });
    receiver = await startReceiver();
    // The platform's administrator: the two organizations, their zone, the provider's metered resource.
    operator = await createOrgClient(t.api, t.adminToken, { features: MARKET_FEATURES, permissions: MARKET_PERMISSIONS });
    provider = await createOrgClient(t.api, t.adminToken, { features: [...MARKET_FEATURES, 'OpenADR'], permissions: PROVIDER_PERMISSIONS });
    const name = uniqueId('Zone West');
    zone = { name, id: (await expectStatus(t.api.post('/api/admin/zones', { name, timeResolution: 1, orderQuantityResolution: 1, organizationIds: [operator.organizationId, provider.organizationId] }, t.adminToken), 201)).id };
    resource = await createBoundableResource(t, provider.organizationId, zone.id);
    bl = await vtnClient(t.api, t.adminToken, BL_SCOPES, provider.organizationId);
    venClient = await vtnClient(t.api, t.adminToken, VEN_SCOPES, provider.organizationId);
  });
  afterAll(async () => {
    await broker?.endAsync(true).catch(() => undefined);
    await receiver?.close();
    await t?.close();
  });

  it('the provider registers its VEN, binds its grid resource to it, and the VEN listens (MQTT 3.1.0, webhooks 3.0.1 and 3.1.0)', async () => {
    ven = await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'BL_VEN_REQUEST', venName: 'ven-west-1', clientID: venClient.clientId }, bl.token), 201);
    venResource = await expectStatus(t.api.post(`${VTN}/vens/${ven.id}/resources`, { resourceName: 'battery-west' }, bl.token), 201);
    const bound = await expectStatus(t.api.put(`/api/grid/resource/${resource.id}/binding`, { organizationId: provider.organizationId, venID: ven.id, resourceID: venResource.id }, provider.token), 200);
    expect(bound.binding).toEqual({ venID: ven.id, resourceID: venResource.id });
    // The zone's program, as the provider's business logic keeps it (dispatch finds it by name).
    const program = await expectStatus(t.api.post(`${VTN}/programs`, { programName: zone.name }, bl.token), 201);
    // The VEN: its MQTT topic from the 3.1.0 notifier, and a webhook subscription on each surface.
    const notifiers = await expectStatus(t.api.get(`${V31}/notifiers`, venClient.token), 200);
    const topics = await expectStatus(t.api.get(`${V31}/notifiers/mqtt/topics/vens/${ven.id}/events`, venClient.token), 200);
    broker = await mqtt.connectAsync(notifiers.MQTT.URIS[0], { username: venClient.clientId, password: venClient.token, reconnectPeriod: 0 });
    broker.on('message', (topic, payload) => messages.push({ topic, body: JSON.parse(payload.toString()) }));
    await broker.subscribeAsync(topics.topics.CREATE, { qos: 1 });
    await expectStatus(t.api.post(`${VTN}/subscriptions`, { clientName: 'ven-west-1', programID: program.id, objectOperations: [{ objects: ['EVENT'], operations: ['POST'], callbackUrl: `${receiver.url}/v301` }] }, venClient.token), 201);
    await expectStatus(t.api.post(`${V31}/subscriptions`, { clientName: 'ven-west-1', programID: program.id, objectOperations: [{ objects: ['EVENT'], operations: ['CREATE'], callbackUrl: `${receiver.url}/v310` }] }, venClient.token), 201);
  });

  it('the operator orders, the provider accepts for the bound resource: the VEN receives the event with its interval and payload', async () => {
    start = nextSlot();
    const order = await expectStatus(
      t.api.post(
        '/api/product/order/flexibility',
        { organizationId: operator.organizationId, marketZoneId: zone.id, productType: 1, start: new Date(start).toISOString(), end: new Date(start + 4 * Q).toISOString(), expiresAt: new Date(start - 60_000).toISOString(), unitPrice: 0.5, minQuantity: 5, maxQuantity: 50 },
        operator.token,
      ),
      201,
    );
    transaction = await expectStatus(t.api.post(`/api/product/order/flexibility/${order.id}/acceptance`, { organizationId: provider.organizationId, resourceId: resource.id, quantity: 20 }, provider.token), 201);
    const interval = { start: new Date(start).toISOString(), duration: 'PT1H' };
    const setpoint = { type: 'DISPATCH_SETPOINT_RELATIVE', values: [-20] };
    // MQTT, OpenADR 3.1.0 representation.
    const message = await waitFor('the MQTT message', () => messages.find((m) => m.body.object?.eventName === transaction.transactionCorrelationId));
    eventId = message.body.object.id;
    expect(message.body).toMatchObject({ objectType: 'EVENT', operation: 'CREATE', object: { intervalPeriod: interval, intervals: [{ id: 0, payloads: [setpoint] }], targets: ['VEN_NAME:ven-west-1', 'RESOURCE_NAME:battery-west'] } });
    // Webhooks, in the version of the surface each subscription was written through.
    const v301 = await waitFor('the 3.0.1 webhook', () => receiver.received.find((r) => r.path === '/v301' && r.body.object.id === eventId));
    expect(v301.body).toMatchObject({ objectType: 'EVENT', operation: 'POST', object: { eventName: transaction.transactionCorrelationId, intervalPeriod: interval, intervals: [{ id: 0, payloads: [setpoint] }] } });
    expect(v301.body.object.targets).toEqual([
      { type: 'VEN_NAME', values: ['ven-west-1'] },
      { type: 'RESOURCE_NAME', values: ['battery-west'] },
    ]);
    const v310 = await waitFor('the 3.1.0 webhook', () => receiver.received.find((r) => r.path === '/v310' && r.body.object.id === eventId));
    expect(v310.body).toMatchObject({ operation: 'CREATE', object: { intervals: [{ id: 0, payloads: [setpoint] }] }, targets: ['VEN_NAME:ven-west-1', 'RESOURCE_NAME:battery-west'] });
    // Polling finds it too, by the transaction's correlation id.
    const polled = await expectStatus(t.api.get(`${VTN}/events?targetType=EVENT_NAME&targetValues=${transaction.transactionCorrelationId}`, venClient.token), 200);
    expect(polled.map((e: any) => e.id)).toEqual([eventId]);
    const [listed] = (await expectStatus(t.api.get(`/api/product/transaction/flexibility?organizationId=${provider.organizationId}&start=${new Date(start).toISOString()}&end=${new Date(start + Q).toISOString()}`, provider.token), 200)).flexibilityTransactions;
    expect(listed.dispatch).toEqual({ eventID: eventId, state: 'sent', reason: null });
  });

  it('the VEN reports its usage during the period; delivery validation reads it and validates the transaction', async () => {
    // The provider's reference for the period: 10 kWh a quarter hour; the VEN used 5.
    await expectStatus(
      t.api.post(`/api/grid/resource/${resource.id}/readings/reference`, { organizationId: provider.organizationId, readings: [0, 1, 2, 3].map((i) => ({ timestamp: new Date(start + i * Q).toISOString(), value: 10, resolution: 900 })) }, provider.token),
      204,
    );
    const event = await expectStatus(t.api.get(`${V31}/events/${eventId}`, venClient.token), 200);
    const report = await expectStatus(
      t.api.post(
        `${V31}/reports`,
        {
          eventID: eventId,
          clientName: 'ven-west-1',
          payloadDescriptors: [{ objectType: 'REPORT_PAYLOAD_DESCRIPTOR', payloadType: 'USAGE', readingType: 'DIRECT_READ', units: 'KWH' }],
          resources: [{ resourceName: 'battery-west', intervalPeriod: { start: event.intervalPeriod.start, duration: 'PT15M' }, intervals: [0, 1, 2, 3].map((id) => ({ id, payloads: [{ type: 'USAGE', values: [5] }] })) }],
        },
        venClient.token,
      ),
      201,
    );
    const processing = await waitFor('the report stored', async () => {
      const p = await expectStatus(t.api.get(`${V31}/reports/${report.id}/processing`, venClient.token), 200);
      return p.state === 'pending' ? undefined : p;
    });
    expect(processing).toMatchObject({ state: 'stored', resources: [{ resourceName: 'battery-west', readings: 4 }] });
    // The platform validates the delivery (the job would wait for the period's end; asked now).
    const validated = await expectStatus(t.api.post('/api/admin/transactions/validate', { flexibilityTransactionIds: [transaction.id] }, t.adminToken), 200);
    expect(validated.flexibilityTransactions[0]).toMatchObject({ id: transaction.id, deliveryValidationStatus: 2, referenceReadingValue: 40, validationReadingValue: 20, deliveredQuantity: 20, deliveryPercentage: 100, remunerationPercentage: 100 });
    // The validation names its inputs: the actual register's readings were the VEN's.
    const [seen] = (await expectStatus(t.api.get(`/api/product/transaction/flexibility?organizationId=${operator.organizationId}&start=${new Date(start).toISOString()}&end=${new Date(start + Q).toISOString()}`, operator.token), 200)).flexibilityTransactions;
    expect(seen.validationInputs).toEqual({ actual: { registerId: resource.actualRegisterId, source: 'ven' }, reference: { registerId: expect.any(Number), source: 'register' } });
  });

  it('the settlement specification lists the validated line for both parties', async () => {
    const period = `start=${new Date(start - 86_400_000).toISOString()}&end=${new Date(start + 86_400_000).toISOString()}`;
    const sold = await expectStatus(t.api.get(`/api/product/settlement/specification?organizationId=${provider.organizationId}&${period}`, provider.token), 200);
    const line = sold.counterParts.find((c: any) => c.organizationId === operator.organizationId).flexibilitySoldSummary.transactions.find((l: any) => l.flexibilityTransactionId === transaction.id);
    expect(line).toMatchObject({ totalRemuneration: 10, remunerationPercentage: 100, totalQuantity: 20, deliveryValidationStatus: 2 });
    const bought = await expectStatus(t.api.get(`/api/product/settlement/specification?organizationId=${operator.organizationId}&${period}`, operator.token), 200);
    expect(bought.counterParts.find((c: any) => c.organizationId === provider.organizationId).flexibilityBoughtSummary.totalRemunerationSum).toBe(10);
  });

  it('the provider disputes the line, the operator resolves the dispute, and the specification shows the resolved figures', async () => {
    const period = `start=${new Date(start - 86_400_000).toISOString()}&end=${new Date(start + 86_400_000).toISOString()}`;
    const lineOf = async (org: OrgClient, counterpart: OrgClient, summary: string) => {
      const spec = await expectStatus(t.api.get(`/api/product/settlement/specification?organizationId=${org.organizationId}&${period}`, org.token), 200);
      const s = spec.counterParts.find((c: any) => c.organizationId === counterpart.organizationId)[summary];
      return { summary: s, line: s.transactions.find((l: any) => l.flexibilityTransactionId === transaction.id) };
    };
    // The provider's own meter reading disagrees: it disputes the line.
    const { response, dispute } = await expectStatus(
      t.api.post('/api/product/settlement/responses', { organizationId: provider.organizationId, flexibilityTransactionId: transaction.id, response: 'disputed', reason: 'Our VEN logged 21 kWh delivered' }, provider.token),
      201,
    );
    expect(response).toMatchObject({ response: 'disputed', lineRemuneration: 10, disputeId: expect.any(Number) });
    expect(dispute).toMatchObject({ id: response.disputeId, state: 'open', disputedRemuneration: 10 });
    expect((await lineOf(operator, provider, 'flexibilityBoughtSummary')).line).toMatchObject({ agreementState: 'disputed', agreedRemuneration: null, disputeId: response.disputeId });
    // The operator settles on 10.50 and resolves the dispute.
    const resolved = await expectStatus(
      t.api.post(`/api/product/settlement/disputes/${response.disputeId}/resolution`, { organizationId: operator.organizationId, totalRemuneration: 10.5, reason: 'Agreed on 21 kWh' }, operator.token),
      200,
    );
    expect(resolved).toMatchObject({ state: 'resolved', settledRemuneration: 10.5 });
    for (const [org, counterpart, summary] of [
      [provider, operator, 'flexibilitySoldSummary'],
      [operator, provider, 'flexibilityBoughtSummary'],
    ] as const) {
      const { summary: s, line } = await lineOf(org, counterpart, summary);
      expect(line).toMatchObject({ totalRemuneration: 10, agreementState: 'resolved', agreedRemuneration: 10.5, disputeId: response.disputeId });
      expect(s.agreedRemunerationSum).toBe(10.5);
    }
  });
});
