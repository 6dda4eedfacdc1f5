// The VTN across processes: an outbox row written by an instance that then crashes is
// delivered by the next one; two instances on one database share the work (each notification
// once, in order) and see each other's changes at once despite their read caches.
import { afterEach, describe, expect, it } from 'vitest';
import { fetchToken } from '../support/fixtures.ts';
import { startFlexProcess, type FlexProcess } from '../support/flexProcess.ts';
import { Api, createTestDatabase, startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, startReceiver, VTN, waitFor, type Receiver } from '../support/vtn.ts';

const ADMIN = `flex_pat_vtn_instances_${'y'.repeat(32)}`;
const DISPATCH = { VTN_WEBHOOK_ALLOW_PRIVATE: 'true', VTN_DISPATCH_POLL_MS: '50' };
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

async function app(databaseUrl: string): Promise<TestApp> {
  const t = await startTestApp(DISPATCH, databaseUrl);
  cleanups.push(() => t.close());
  return t;
}

/** An OpenADR organization with a business-logic VTN credential; returns its token. */
async function businessLogic(api: Api, admin: string): Promise<string> {
  const org = await expectStatus(api.post('/api/admin/organizations', { name: `instances-${Date.now()}`, features: ['OpenADR'] }, admin), 201);
  const credential = await expectStatus(api.post('/api/openadr/vtn/credential', { organizationId: org.id, name: 'bl', scopes: BL_SCOPES }, admin), 200);
  return fetchToken(api, credential.clientId, credential.clientSecret);
}

describe('outbox across a crash', () => {
  it('delivers a notification written before the writer was killed, after the restart', async () => {
    const databaseUrl = await createTestDatabase();
    const r = await receiver();
    // The first instance does not dispatch: its notification can only be delivered by the next.
    const first: FlexProcess = await startFlexProcess({ DATABASE_URL: databaseUrl, ADMIN_TOKEN: ADMIN, VTN_DISPATCHER: 'false', ...DISPATCH });
    cleanups.push(async () => {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
      await first.exited;
    });
    const api = new Api(first.baseUrl);
    const token = await businessLogic(api, ADMIN);
    const p = await expectStatus(api.post(`${VTN}/programs`, { programName: 'crash' }, token), 201);
    await expectStatus(api.post(`${VTN}/subscriptions`, { clientName: 'c', programID: p.id, objectOperations: [{ objects: ['EVENT'], operations: ['POST'], callbackUrl: r.url, bearerToken: 'b' }] }, token), 201);
    const e = await expectStatus(api.post(`${VTN}/events`, { programID: p.id }, token), 201);
    const [pending] = await expectStatus(api.get('/api/admin/notifications?state=pending', ADMIN), 200);
    expect(pending).toMatchObject({ objectID: e.id, state: 'pending', attempts: 0 });

    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();
    expect(r.received).toEqual([]);

    const second = await app(databaseUrl);
    await waitFor('delivery after the restart', () => r.received.length === 1);
    expect(r.received[0]!.body).toMatchObject({ notificationID: pending.id, objectType: 'EVENT', operation: 'POST', object: { id: e.id } });
    expect(r.received[0]!.headers.authorization).toBe('Bearer b');
    await waitFor('delivered state', async () => (await expectStatus(second.api.get('/api/admin/notifications?state=delivered', second.adminToken), 200)).length === 1);
  }, 120_000);
});

describe('two instances on one database', () => {
  it('see each other’s changes at once and deliver each notification once, in order', async () => {
    const databaseUrl = await createTestDatabase();
    const a = await app(databaseUrl);
    const b = await app(databaseUrl);
    // Each start replaces the bootstrap administrator's token: b's is the valid one.
    const token = await businessLogic(a.api, b.adminToken);
    const p = await expectStatus(a.api.post(`${VTN}/programs`, { programName: 'shared' }, token), 201);

    // b caches the empty list, a writes, b sees the change (NOTIFY at a's commit).
    const path = `${VTN}/events?programID=${p.id}`;
    expect(await expectStatus(b.api.get(path, token), 200)).toEqual([]);
    expect(await expectStatus(b.api.get(path, token), 200)).toEqual([]);
    const e = await expectStatus(a.api.post(`${VTN}/events`, { programID: p.id }, token), 201);
    await waitFor('b to see a’s event', async () => (await expectStatus(b.api.get(path, token), 200)).length === 1, 5000);
    await expectStatus(b.api.put(`${VTN}/events/${e.id}`, { programID: p.id, priority: 9 }, token), 200);
    await waitFor('a to see b’s update', async () => (await expectStatus(a.api.get(`${VTN}/events/${e.id}`, token), 200)).priority === 9, 5000);

    const r = await receiver();
    await expectStatus(a.api.post(`${VTN}/subscriptions`, { clientName: 'c', programID: p.id, objectOperations: [{ objects: ['EVENT'], operations: ['POST'], callbackUrl: r.url }] }, token), 201);
    const created: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      const via = i % 2 === 0 ? a : b;
      created.push((await expectStatus(via.api.post(`${VTN}/events`, { programID: p.id, eventName: `e${i}` }, token), 201)).id);
    }
    await waitFor('20 deliveries', () => r.received.length >= 20);
    expect(r.received.map((x) => x.body.object.id)).toEqual(created);
    expect(new Set(r.received.map((x) => x.body.notificationID)).size).toBe(20);
  }, 120_000);
});
