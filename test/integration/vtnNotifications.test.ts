// Webhook notifications against real HTTP receivers: the body and the bearer token, retries
// with the same notification id, per-subscription order, dead letters and their retry through
// the admin API, no delivery after a subscription is deleted, programID/targets/operation
// filtering, VEN privacy of notifications, and callbackUrl validation.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, startReceiver, VEN_SCOPES, VTN, vtnClient, waitFor, type Receiver, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
const receivers: Receiver[] = [];

beforeAll(async () => {
  t = await startTestApp({
    VTN_WEBHOOK_ALLOW_PRIVATE: 'true',
    VTN_DISPATCH_POLL_MS: '50',
    VTN_WEBHOOK_BACKOFF_BASE_MS: '20',
    VTN_WEBHOOK_BACKOFF_CAP_MS: '100',
    VTN_WEBHOOK_MAX_ATTEMPTS: '4',
    VTN_WEBHOOK_TIMEOUT_MS: '500',
  });
  bl = await vtnClient(t.api, t.adminToken, [...BL_SCOPES, 'write_reports']);
});
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});
afterAll(() => t?.close());

async function receiver(respond?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(respond);
  receivers.push(r);
  return r;
}

const api = (c: VtnClient = bl) => ({
  post: (path: string, body: unknown) => expectStatus(t.api.post(`${VTN}${path}`, body, c.token), 201),
  put: (path: string, body: unknown) => expectStatus(t.api.put(`${VTN}${path}`, body, c.token), 200),
  delete: (path: string) => expectStatus(t.api.delete(`${VTN}${path}`, c.token), 200),
});
let n = 0;
const program = (extra: Record<string, unknown> = {}) => api().post('/programs', { programName: `n-${++n}`, ...extra });
const subscribe = (programID: string, url: string, objects: string[], operations: string[], extra: Record<string, unknown> = {}, c: VtnClient = bl) =>
  api(c).post('/subscriptions', { clientName: 'test', programID, objectOperations: [{ objects, operations, callbackUrl: url, bearerToken: `token-${n}` }], ...extra });

async function notifications(query: string): Promise<any[]> {
  return expectStatus(t.api.get(`/api/admin/notifications?${query}`, t.adminToken), 200);
}
const delivered = (r: Receiver) => r.received.filter((x) => x.status >= 200 && x.status < 300);

describe('delivery', () => {
  it('POSTs {notificationID, objectType, operation, object, targets} with the bearer token, for POST, PUT and DELETE', async () => {
    const r = await receiver();
    const p = await program();
    const sub = await subscribe(p.id, `${r.url}/hooks/vtn?x=1`, ['EVENT'], ['POST', 'PUT', 'DELETE']);
    const targets = [{ type: 'GROUP', values: ['a'] }];
    const created = await api().post('/events', { programID: p.id, targets, intervalPeriod: { start: '2024-01-01T00:00:00Z', duration: 'PT1H' } });
    const updated = await api().put(`/events/${created.id}`, { programID: p.id, targets, priority: 1 });
    const deleted = await api().delete(`/events/${created.id}`);
    await waitFor('three notifications', () => r.received.length >= 3);
    expect(r.received.map((x) => x.body.operation)).toEqual(['POST', 'PUT', 'DELETE']);
    expect(r.received.map((x) => x.body.object)).toEqual([created, updated, deleted]);
    for (const x of r.received) {
      expect(x.path).toBe('/hooks/vtn?x=1');
      expect(x.headers.authorization).toBe(`Bearer ${sub.objectOperations[0].bearerToken}`);
      expect(x.headers['content-type']).toBe('application/json');
      expect(x.headers['x-notification-id']).toBe(x.body.notificationID);
      expect(x.body).toEqual({ notificationID: expect.stringMatching(/^[0-9a-f-]{36}$/), objectType: 'EVENT', operation: x.body.operation, object: x.body.object, targets });
    }
    expect(new Set(r.received.map((x) => x.body.notificationID)).size).toBe(3);
    await waitFor('delivered state', async () => (await notifications(`subscriptionID=${sub.id}&state=delivered`)).length === 3);
    const [first] = await notifications(`subscriptionID=${sub.id}`);
    expect(first).toMatchObject({ id: r.received[0]!.body.notificationID, subscriptionID: sub.id, objectType: 'EVENT', operation: 'POST', objectID: created.id, state: 'delivered', attempts: 1, lastStatus: 200, lastError: null });
  });

  it('retries a receiver failing twice, then succeeding, with the same notification id', async () => {
    const r = await receiver((i) => (i === 0 ? 503 : i === 1 ? 500 : 200));
    const p = await program();
    const sub = await subscribe(p.id, r.url, ['EVENT'], ['POST']);
    const e = await api().post('/events', { programID: p.id });
    const [row] = await waitFor('delivery', async () => {
      const rows = await notifications(`subscriptionID=${sub.id}&state=delivered`);
      return rows.length === 1 && rows;
    });
    expect(r.received.map((x) => x.status)).toEqual([503, 500, 200]);
    expect(new Set(r.received.map((x) => x.body.notificationID))).toEqual(new Set([row.id]));
    expect(r.received.map((x) => x.headers['x-notification-attempt'])).toEqual(['1', '2', '3']);
    expect(r.received[2]!.body.object.id).toBe(e.id);
    expect(row).toMatchObject({ state: 'delivered', attempts: 3, lastStatus: 200, lastError: 'HTTP 500' });
  });

  it('delivers one subscription’s notifications one at a time, in order, through retries', async () => {
    const r = await receiver((i) => (i % 3 === 0 ? 503 : 200));
    const p = await program();
    await subscribe(p.id, r.url, ['EVENT'], ['POST']);
    const created: string[] = [];
    for (let i = 0; i < 6; i += 1) created.push((await api().post('/events', { programID: p.id, eventName: `e${i}` })).id);
    await waitFor('six deliveries', () => delivered(r).length === 6);
    expect(delivered(r).map((x) => x.body.object.id)).toEqual(created);
    // Every attempt of a notification comes before any attempt of the next.
    const sequence = r.received.map((x) => created.indexOf(x.body.object.id));
    expect([...sequence].sort((a, b) => a - b)).toEqual(sequence);
  });

  it('does not follow redirects and gives up on a permanent refusal', async () => {
    const moved = await receiver(() => 302);
    const gone = await receiver(() => 410);
    const p = await program();
    const s1 = await subscribe(p.id, moved.url, ['EVENT'], ['POST']);
    const s2 = await subscribe(p.id, gone.url, ['EVENT'], ['POST']);
    await api().post('/events', { programID: p.id });
    const [redirected] = await waitFor('dead', async () => {
      const rows = await notifications(`subscriptionID=${s1.id}&state=dead`);
      return rows.length === 1 && rows;
    });
    expect(redirected).toMatchObject({ attempts: 1, lastStatus: 302, lastError: expect.stringMatching(/redirects are not followed/) });
    const [refused] = await waitFor('dead', async () => {
      const rows = await notifications(`subscriptionID=${s2.id}&state=dead`);
      return rows.length === 1 && rows;
    });
    expect(refused).toMatchObject({ attempts: 1, lastStatus: 410, lastError: 'HTTP 410', nextAttemptAt: null });
    expect(moved.received).toHaveLength(1);
    expect(gone.received).toHaveLength(1);
  });

  it('dead-letters after the retry limit (timeouts count), and an administrator can retry it', async () => {
    let healthy = false;
    const r = await receiver(() => (healthy ? 200 : 503));
    const p = await program();
    const sub = await subscribe(p.id, r.url, ['EVENT'], ['POST']);
    await api().post('/events', { programID: p.id });
    const [dead] = await waitFor('dead letter', async () => {
      const rows = await notifications(`subscriptionID=${sub.id}&state=dead`);
      return rows.length === 1 && rows;
    });
    expect(dead).toMatchObject({ attempts: 4, lastStatus: 503, lastError: 'HTTP 503' });
    expect(r.received).toHaveLength(4);
    expect(await notifications(`subscriptionID=${sub.id}&state=pending`)).toEqual([]);
    const detail = await expectStatus(t.api.get(`/api/admin/notifications/${dead.id}`, t.adminToken), 200);
    expect(detail.body).toEqual(r.received[0]!.body);

    // Retry from the admin API: pending again, then delivered.
    expect((await t.api.post(`/api/admin/notifications/${dead.id}/retry`, undefined, bl.token)).status).toBe(403);
    healthy = true;
    const retried = await expectStatus(t.api.request('POST', `/api/admin/notifications/${dead.id}/retry`, { token: t.adminToken }), 200);
    expect(retried).toMatchObject({ id: dead.id, state: 'pending', attempts: 0 });
    await waitFor('redelivery', async () => (await notifications(`subscriptionID=${sub.id}&state=delivered`)).length === 1);
    expect(r.received.at(-1)!.body.notificationID).toBe(dead.id);
    expect((await t.api.request('POST', `/api/admin/notifications/${dead.id}/retry`, { token: t.adminToken })).status).toBe(409);
    expect((await t.api.request('POST', '/api/admin/notifications/00000000-0000-4000-8000-000000000000/retry', { token: t.adminToken })).status).toBe(404);
    expect((await t.api.get('/api/admin/notifications/not-a-uuid', t.adminToken)).status).toBe(400);
    expect((await t.api.get('/api/admin/notifications?state=lost', t.adminToken)).status).toBe(400);
    expect((await t.api.get('/api/admin/notifications', bl.token)).status).toBe(403);

    // A receiver that never answers in time fails like any other.
    const silent = await receiver(() => 0);
    const hang = await program();
    const hangSub = await subscribe(hang.id, `${silent.url}/slow`, ['EVENT'], ['POST']);
    await api().post('/events', { programID: hang.id });
    const [timedOut] = await waitFor(
      'timeouts',
      async () => {
        const rows = await notifications(`subscriptionID=${hangSub.id}&state=dead`);
        return rows.length === 1 && rows;
      },
      20_000,
    );
    expect(timedOut).toMatchObject({ attempts: 4, lastStatus: null, lastError: expect.stringMatching(/no complete answer within 500 ms/) });
  });

  it('stops delivering for a deleted subscription', async () => {
    const failing = await receiver(() => 503);
    const witness = await receiver();
    const p = await program();
    const doomed = await subscribe(p.id, failing.url, ['EVENT'], ['POST']);
    const watching = await subscribe(p.id, witness.url, ['EVENT'], ['POST']);
    await api().post('/events', { programID: p.id });
    await waitFor('a failed attempt', () => failing.received.length >= 1);
    expect(await notifications(`subscriptionID=${doomed.id}&state=pending`)).toHaveLength(1);
    await api().delete(`/subscriptions/${doomed.id}`);
    const attemptsAtDeletion = failing.received.length;
    expect(await notifications(`subscriptionID=${doomed.id}&state=pending`)).toEqual([]);

    const later = await api().post('/events', { programID: p.id });
    await waitFor('the witness hears of the later event', () => witness.received.some((x) => x.body.object.id === later.id));
    expect(await notifications(`subscriptionID=${doomed.id}`)).toEqual([]);
    expect((await notifications(`subscriptionID=${watching.id}`)).length).toBe(2);
    // At most the attempt already in flight when it was deleted.
    expect(failing.received.length).toBeLessThanOrEqual(attemptsAtDeletion + 1);
  });
});

describe('matching', () => {
  it('filters by object kind, operation, programID and targets', async () => {
    const r1 = await receiver();
    const r2 = await receiver();
    const r3 = await receiver();
    const p1 = await program();
    const p2 = await program();
    const s1 = await subscribe(p1.id, r1.url, ['EVENT'], ['POST'], { targets: [{ type: 'GROUP', values: ['A'] }] });
    const s2 = await subscribe(p2.id, r2.url, ['EVENT'], ['POST', 'PUT']);
    const s3 = await subscribe(p1.id, r3.url, ['PROGRAM'], ['PUT']);

    const untargeted = await api().post('/events', { programID: p1.id });
    const forA = await api().post('/events', { programID: p1.id, targets: [{ type: 'GROUP', values: ['B', 'A'] }] });
    await api().post('/events', { programID: p1.id, targets: [{ type: 'GROUP', values: ['B'] }] });
    await api().post('/events', { programID: p1.id, targets: [{ type: 'ZONE', values: ['A'] }] });
    const inP2 = await api().post('/events', { programID: p2.id, targets: [{ type: 'GROUP', values: ['B'] }] });
    await api().put(`/events/${inP2.id}`, { programID: p2.id, priority: 3 });
    await api().put(`/programs/${p1.id}`, { programName: p1.programName, programType: 'changed' });
    await api().put(`/programs/${p2.id}`, { programName: p2.programName, programType: 'changed' });

    const objectIds = async (subscriptionID: string) => (await notifications(`subscriptionID=${subscriptionID}`)).map((x) => `${x.operation} ${x.objectID}`);
    expect(await objectIds(s1.id)).toEqual([`POST ${untargeted.id}`, `POST ${forA.id}`]);
    expect(await objectIds(s2.id)).toEqual([`POST ${inP2.id}`, `PUT ${inP2.id}`]);
    expect(await objectIds(s3.id)).toEqual([`PUT ${p1.id}`]);
    await waitFor('deliveries', () => r1.received.length === 2 && r2.received.length === 2 && r3.received.length === 1);
    expect(r3.received[0]!.body).toMatchObject({ objectType: 'PROGRAM', operation: 'PUT', object: { id: p1.id, programType: 'changed' } });
  });

  it('tells a VEN client’s subscription only about what that client may see', async () => {
    const venClient = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
    const other = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
    const ven = await api().post('/vens', { venName: `ven-${++n}`, clientID: venClient.clientId, targets: [{ type: 'GROUP', values: ['mine'] }] });
    const r = await receiver();
    const p = await program();
    const sub = await subscribe(p.id, r.url, ['EVENT', 'REPORT', 'VEN', 'SUBSCRIPTION'], ['POST', 'PUT'], {}, venClient);
    const open = await api().post('/events', { programID: p.id });
    const mine = await api().post('/events', { programID: p.id, targets: [{ type: 'GROUP', values: ['mine'] }] });
    await api().post('/events', { programID: p.id, targets: [{ type: 'GROUP', values: ['theirs'] }] });
    const ownReport = await api(venClient).post('/reports', { programID: p.id, eventID: open.id, clientName: 'me' });
    await api(other).post('/reports', { programID: p.id, eventID: open.id, clientName: 'them' });
    await api(other).post('/subscriptions', { clientName: 'them', programID: p.id });
    await api().put(`/vens/${ven.id}`, { venName: ven.venName, targets: ven.targets, attributes: [] });
    await api().post('/vens', { venName: `ven-${++n}` });
    const heard = (await notifications(`subscriptionID=${sub.id}`)).map((x) => `${x.objectType} ${x.objectID}`);
    // Its own creation included (a subscription to SUBSCRIPTION POST matches itself).
    expect(heard).toEqual([`SUBSCRIPTION ${sub.id}`, `EVENT ${open.id}`, `EVENT ${mine.id}`, `REPORT ${ownReport.id}`, `VEN ${ven.id}`]);
  });

  it('notifies VEN and resource changes whatever the programID, resources deleted with their VEN included', async () => {
    const r = await receiver();
    const p = await program();
    const sub = await subscribe(p.id, r.url, ['VEN', 'RESOURCE'], ['POST', 'DELETE']);
    const ven = await api().post('/vens', { venName: `ven-${++n}` });
    const res = await api().post(`/vens/${ven.id}/resources`, { resourceName: 'battery' });
    await api().delete(`/vens/${ven.id}`);
    const heard = (await notifications(`subscriptionID=${sub.id}`)).map((x) => `${x.operation} ${x.objectType} ${x.objectID}`);
    expect(heard).toEqual([`POST VEN ${ven.id}`, `POST RESOURCE ${res.id}`, `DELETE VEN ${ven.id}`, `DELETE RESOURCE ${res.id}`]);
    await waitFor('deliveries', () => r.received.length === 4);
    expect(r.received[2]!.body.object.resources.map((x: any) => x.id)).toEqual([res.id]);
  });

  it('follows a subscription’s entries as they are updated', async () => {
    const before = await receiver();
    const after = await receiver();
    const p = await program();
    const sub = await subscribe(p.id, before.url, ['EVENT'], ['POST']);
    const first = await api().post('/events', { programID: p.id });
    await api().put(`/subscriptions/${sub.id}`, {
      clientName: 'test',
      programID: p.id,
      objectOperations: [
        { objects: ['EVENT'], operations: ['GET', 'DELETE'], callbackUrl: after.url, bearerToken: 'new' },
        { objects: ['PROGRAM'], operations: ['PUT'], callbackUrl: after.url, bearerToken: 'new' },
      ],
    });
    await api().post('/events', { programID: p.id });
    await api().delete(`/events/${first.id}`);
    const heard = (await notifications(`subscriptionID=${sub.id}`)).map((x) => `${x.operation} ${x.objectType} ${x.callbackUrl === after.url ? 'after' : 'before'}`);
    expect(heard).toEqual(['POST EVENT before', 'DELETE EVENT after']);
    await waitFor('deliveries', () => before.received.length === 1 && after.received.length === 1);
    expect(after.received[0]!.headers.authorization).toBe('Bearer new');
  });

  it('writes nothing for a change that is rolled back', async () => {
    const r = await receiver();
    const p = await program();
    const taken = await program();
    const sub = await subscribe(p.id, r.url, ['PROGRAM'], ['PUT']);
    expect((await t.api.put(`${VTN}/programs/${p.id}`, { programName: taken.programName }, bl.token)).status).toBe(409);
    expect(await notifications(`subscriptionID=${sub.id}`)).toEqual([]);
  });
});

describe('callback URLs', () => {
  it('refuses loopback, private, link-local and other special-purpose callbacks unless allowed', async () => {
    const strict = await startTestApp();
    try {
      const c = await vtnClient(strict.api, strict.adminToken, BL_SCOPES);
      const p = await expectStatus(strict.api.post(`${VTN}/programs`, { programName: 'strict' }, c.token), 201);
      const sub = (callbackUrl: string) => strict.api.post(`${VTN}/subscriptions`, { clientName: 'c', programID: p.id, objectOperations: [{ objects: ['EVENT'], operations: ['POST'], callbackUrl }] }, c.token);
      for (const url of ['http://127.0.0.1:8080/x', 'http://localhost/x', 'http://api.localhost/x', 'http://10.1.2.3/x', 'http://192.168.0.10/x', 'http://172.16.5.4/x', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/x', 'http://[fd00::1]/x', 'http://[::ffff:127.0.0.1]/x', 'http://0.0.0.0/x']) {
        const res = await sub(url);
        expect(res.status, url).toBe(400);
        expect(res.body.errors).toEqual([{ path: 'objectOperations[0].callbackUrl', message: expect.stringMatching(/^must not point at a loopback, private, link-local or other special-purpose address \(.+\)$/) }]);
      }
      expect((await sub('https://vtn-hooks.example.com/openadr')).status).toBe(201);
      expect((await sub('http://93.184.215.14:8443/hook')).status).toBe(201);
    } finally {
      await strict.close();
    }
  });
});
