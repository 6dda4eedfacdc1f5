// Dispatch of flexibility transactions to the bound VEN resource (docs/flexibility-loop.md): the
// binding's rules; an acceptance becomes an event in the provider's VTN (program per zone, VEN
// and resource targets, one interval with the signed kW setpoint, the correlation id as its
// name) that the VEN reads and is notified of; a change replaces it, a cancellation deletes it;
// unbinding deletes it; an unbound resource's transaction shows `none` with the reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accept, bind, createBoundableResource, createLoopWorld, nextSlot, placeOrder, transactions, type LoopWorld } from '../support/loopFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { VTN, expectStatus, startReceiver, waitFor, type Receiver } from '../support/vtn.ts';
import { openAdrSpecPath, readSpecComponents, specCheck } from '../support/openAdrSpec.ts';

const V31 = '/api/openadr/3.1.0';

describe('dispatch of flexibility transactions to the bound VEN resource', () => {
  let t: TestApp;
  let w: LoopWorld;
  let receiver: Receiver;
  let start: number;

  beforeAll(async () => {
    t = await startTestApp({ VTN_DISPATCH_POLL_MS: '50', VTN_WEBHOOK_ALLOW_PRIVATE: 'true', DISPATCH_INTERVAL_MS: '100' });
    w = await createLoopWorld(t);
    receiver = await startReceiver();
    start = nextSlot();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  const dispatchOf = async (id: number, state: string) =>
    waitFor(`dispatch ${state}`, async () => {
      const list = await transactions(t.api, w.provider, start - 86_400_000, start + 86_400_000);
      const tx = list.find((x) => x.id === id);
      return tx?.dispatch?.state === state ? tx.dispatch : undefined;
    });

  it('shows the binding on the resource, and refuses what cannot be bound', async () => {
    const listed = await expectStatus(t.api.get(`/api/grid/resource?organizationId=${w.provider.organizationId}`, w.provider.token), 200);
    expect(listed.find((r: any) => r.id === w.resource.id).binding).toEqual({ venID: w.venId, resourceID: w.venResourceId });
    const other = await createBoundableResource(t, w.provider.organizationId, w.zoneId);
    expect(listed.some((r: any) => r.binding === null) || (await expectStatus(t.api.get(`/api/grid/resource?organizationId=${w.provider.organizationId}`, w.provider.token), 200)).find((r: any) => r.id === other.id).binding === null).toBe(true);
    const put = (body: unknown, token = w.provider.token, id = other.id) => t.api.put(`/api/grid/resource/${id}/binding`, body, token);
    const org = w.provider.organizationId;
    expect((await put({ organizationId: org, venID: 'nope', resourceID: w.venResourceId })).body.errors[0].path).toBe('venID');
    expect((await put({ organizationId: org, venID: w.venId, resourceID: 'nope' })).body.errors[0].path).toBe('resourceID');
    // One VEN resource controls one grid resource.
    expect((await put({ organizationId: org, venID: w.venId, resourceID: w.venResourceId })).status).toBe(409);
    // Another organization's resource, a caller without OpenADR, a missing permission.
    expect((await put({ organizationId: w.operator.organizationId, venID: w.venId, resourceID: w.venResourceId }, t.adminToken)).status).toBe(404);
    expect((await put({ organizationId: org, venID: w.venId, resourceID: w.venResourceId }, w.operator.token)).status).toBe(403);
    expect((await put({ organizationId: w.operator.organizationId, venID: w.venId, resourceID: w.venResourceId }, w.operator.token)).status).toBe(403);
    expect((await put({ organizationId: org, venID: w.venId }, w.provider.token)).status).toBe(400);
    expect((await t.api.delete(`/api/grid/resource/${other.id}/binding?organizationId=${org}`, w.provider.token)).status).toBe(404);
  });

  it('an acceptance becomes an event the VEN reads, is notified of over webhook, and can find by the correlation id', async () => {
    await expectStatus(
      t.api.post(`${VTN}/subscriptions`, { clientName: 'ven', programID: await zoneProgram(), objectOperations: [{ objects: ['EVENT'], operations: ['POST', 'PUT', 'DELETE'], callbackUrl: `${receiver.url}/ven` }] }, w.venClient.token),
      201,
    );
    const order = await placeOrder(t.api, w, start, { minutes: 60 });
    const tx = await accept(t.api, w.provider, order.id, w.resource.id, 40);
    expect(['pending', 'sent']).toContain(tx.dispatch.state);
    const dispatch = await dispatchOf(tx.id, 'sent');
    const event = await expectStatus(t.api.get(`${VTN}/events/${dispatch.eventID}`, w.venClient.token), 200);
    expect(event).toMatchObject({
      eventName: tx.transactionCorrelationId,
      targets: [
        { type: 'VEN_NAME', values: [w.venName] },
        { type: 'RESOURCE_NAME', values: [w.resourceName] },
      ],
      payloadDescriptors: [{ objectType: 'EVENT_PAYLOAD_DESCRIPTOR', payloadType: 'DISPATCH_SETPOINT_RELATIVE', units: 'KW' }],
      intervalPeriod: { start: new Date(start).toISOString(), duration: 'PT1H' },
      intervals: [{ id: 0, payloads: [{ type: 'DISPATCH_SETPOINT_RELATIVE', values: [-40] }] }],
    });
    expect(event.reportDescriptors[0]).toMatchObject({ payloadType: 'USAGE', units: 'KWH' });
    // What the VENs get is valid OpenADR, in both versions (the program made on first use too).
    for (const version of ['3.0.1', '3.1.0'] as const) {
      const spec = openAdrSpecPath(version);
      if (!spec) continue;
      const check = specCheck(`openadr-${version}`, readSpecComponents(spec));
      const base = version === '3.0.1' ? VTN : V31;
      expect(check('event', await expectStatus(t.api.get(`${base}/events/${dispatch.eventID}`, w.venClient.token), 200)), `event, ${version}`).toEqual([]);
      expect(check('program', await expectStatus(t.api.get(`${base}/programs/${event.programID}`, w.venClient.token), 200)), `program, ${version}`).toEqual([]);
    }
    const byName = await expectStatus(t.api.get(`${V31}/events?targets=EVENT_NAME:${tx.transactionCorrelationId}`, w.venClient.token), 200);
    expect(byName.map((e: any) => e.id)).toEqual([dispatch.eventID]);
    const note = await waitFor('webhook', () => receiver.received.find((r) => r.body.object.id === dispatch.eventID && r.body.operation === 'POST'));
    expect(note.body.object.intervals[0].payloads[0].values).toEqual([-40]);
    // The buyer sees the dispatch too.
    const bought = await transactions(t.api, w.operator, start - 1, start + 1);
    expect(bought.find((x) => x.id === tx.id).dispatch).toMatchObject({ state: 'sent', eventID: dispatch.eventID });
  });

  async function zoneProgram(): Promise<string> {
    // The zone's program is made on first use; the VEN subscribes to it once it exists.
    const programs = await expectStatus(t.api.get(`${VTN}/programs`, w.bl.token), 200);
    const found = programs.find((p: any) => p.programName === w.zoneName);
    if (found) return found.id;
    return (await expectStatus(t.api.post(`${VTN}/programs`, { programName: w.zoneName }, w.bl.token), 201)).id;
  }

  it('a change replaces the event, a cancellation deletes it; only the buyer, only before the start', async () => {
    const order = await placeOrder(t.api, w, start + 3_600_000, { minutes: 60, productType: 2 });
    const tx = await accept(t.api, w.provider, order.id, w.resource.id, 20);
    const first = await dispatchOf(tx.id, 'sent');
    const event = await expectStatus(t.api.get(`${VTN}/events/${first.eventID}`, w.bl.token), 200);
    expect(event.intervals[0].payloads[0].values).toEqual([20]);
    const path = `/api/product/transaction/flexibility/${tx.id}`;
    expect((await t.api.request('PATCH', path, { json: { organizationId: w.provider.organizationId, quantity: 10 }, token: w.provider.token })).status).toBe(403);
    expect((await t.api.request('PATCH', path, { json: { organizationId: w.operator.organizationId, quantity: 30 }, token: w.operator.token })).status).toBe(400);
    const changed = await expectStatus(
      t.api.request('PATCH', path, { json: { organizationId: w.operator.organizationId, quantity: 10, start: new Date(start + 3_600_000 + 900_000).toISOString(), reason: 'less needed' }, token: w.operator.token }),
      200,
    );
    expect(changed.quantity).toBe(10);
    await waitFor('event replaced', async () => {
      const e = await expectStatus(t.api.get(`${VTN}/events/${first.eventID}`, w.bl.token), 200);
      return e.intervals[0].payloads[0].values[0] === 13.333333 && e.intervalPeriod.duration === 'PT45M' ? e : undefined;
    });
    expect((await dispatchOf(tx.id, 'sent')).eventID).toBe(first.eventID);
    const cancelled = await expectStatus(t.api.post(`${path}/cancellation`, { organizationId: w.operator.organizationId, reason: 'resolved' }, w.operator.token), 200);
    expect(cancelled).toMatchObject({ transactionId: tx.id, transactionCorrelationId: tx.transactionCorrelationId, reason: 'resolved' });
    await waitFor('event deleted', async () => ((await t.api.get(`${VTN}/events/${first.eventID}`, w.bl.token)).status === 404 ? true : undefined));
    expect((await transactions(t.api, w.provider, start, start + 86_400_000)).some((x) => x.id === tx.id)).toBe(false);
    expect((await t.api.post(`${path}/cancellation`, { organizationId: w.operator.organizationId }, w.operator.token)).status).toBe(404);
  });

  it('unbound: none with the reason; binding dispatches what has not ended, unbinding deletes it', async () => {
    const other = await createBoundableResource(t, w.provider.organizationId, w.zoneId);
    const order = await placeOrder(t.api, w, start + 7_200_000, { minutes: 30 });
    const tx = await accept(t.api, w.provider, order.id, other.id, 5);
    expect(tx.dispatch).toEqual({ eventID: null, state: 'none', reason: 'the grid resource is not bound to a VEN resource' });
    const resource = await expectStatus(t.api.post(`${VTN}/vens/${w.venId}/resources`, { resourceName: 'heat-pump-2' }, w.bl.token), 201);
    await bind(t.api, w.provider, other.id, w.venId, resource.id);
    const sent = await dispatchOf(tx.id, 'sent');
    const event = await expectStatus(t.api.get(`${VTN}/events/${sent.eventID}`, w.venClient.token), 200);
    expect(event.targets[1]).toEqual({ type: 'RESOURCE_NAME', values: ['heat-pump-2'] });
    await expectStatus(t.api.delete(`/api/grid/resource/${other.id}/binding?organizationId=${w.provider.organizationId}`, w.provider.token), 200);
    const none = await dispatchOf(tx.id, 'none');
    expect(none.reason).toMatch(/not bound/);
    expect((await t.api.get(`${VTN}/events/${sent.eventID}`, w.bl.token)).status).toBe(404);
    // The VEN resource deleted in the VTN: the binding stays, dispatch says why there is no event.
    await bind(t.api, w.provider, other.id, w.venId, resource.id);
    await dispatchOf(tx.id, 'sent');
    await expectStatus(t.api.delete(`${VTN}/vens/${w.venId}/resources/${resource.id}`, w.bl.token), 200);
    await expectStatus(t.api.request('PATCH', `/api/product/transaction/flexibility/${tx.id}`, { json: { organizationId: w.operator.organizationId, quantity: 4 }, token: w.operator.token }), 200);
    const gone = await dispatchOf(tx.id, 'none');
    expect(gone.reason).toMatch(/no longer exists/);
  });
});
