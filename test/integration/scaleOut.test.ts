// Scale-out, proven: two Flex processes on one PostgreSQL (an embedded server started
// by this test, its URL handed to both, as a deployment would with a managed database). They
// start at once and migrate once; a client's rate limit is shared; a VTN change made through one
// is served by the other (by invalidation, not expiry); a due clearing runs once; every webhook notification is
// delivered once; a rotated secret and a deleted client are refused by both within AUTH_CACHE_MS.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/store/embeddedPostgres.ts';
import { createOrgClient, fetchToken, type OrgClient } from '../support/fixtures.ts';
import { startFlexProcess, type FlexProcess } from '../support/flexProcess.ts';
import { TEST_PG_SETTINGS } from '../support/globalSetup.ts';
import { createMarket, createMeasuredResource, eventually } from '../support/productFixtures.ts';
import { Api, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, startReceiver, VTN, waitFor, type Receiver } from '../support/vtn.ts';

const ADMIN = `flex_pat_scale_out_${'s'.repeat(32)}`;
const AUTH_CACHE_MS = 500;
const API_PER_MINUTE = 40;

let postgres: RunningPostgres;
let dataDir: string;
let databaseUrl: string;
let instances: FlexProcess[] = [];
let a: Api;
let b: Api;
const receivers: Receiver[] = [];

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-scale-out-'));
  fs.chmodSync(dataDir, 0o755);
  postgres = await startEmbeddedPostgres({ dataDir, port: 0, log: pino({ level: 'warn' }), database: 'postgres', settings: TEST_PG_SETTINGS });
  const admin = new pg.Client({ connectionString: postgres.connectionString });
  await admin.connect();
  await admin.query('CREATE DATABASE flex_scale');
  await admin.end();
  databaseUrl = postgres.connectionString.replace(/\/postgres$/, '/flex_scale');
  const env = {
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN: ADMIN,
    RATE_LIMIT_STORE: 'postgres',
    RATE_LIMIT_API_PER_MINUTE: String(API_PER_MINUTE),
    AUTH_CACHE_MS: String(AUTH_CACHE_MS),
    CLEARING_INTERVAL_MS: '100',
    VTN_WEBHOOK_ALLOW_PRIVATE: 'true',
    VTN_DISPATCH_POLL_MS: '50',
    DB_POOL_MAX: '5',
    // An hour: a read cached by one instance can only change through the other's invalidation
    // (LISTEN/NOTIFY), never by expiring while the test waits.
    VTN_READ_CACHE_MS: '3600000',
  };
  // Both at once, on an empty database.
  instances = await Promise.all([startFlexProcess(env, 120_000), startFlexProcess(env, 120_000)]);
  a = new Api(instances[0]!.baseUrl);
  b = new Api(instances[1]!.baseUrl);
}, 180_000);

afterAll(async () => {
  for (const r of receivers) await r.close();
  for (const flex of instances) {
    flex.child.kill('SIGTERM');
    const timer = setTimeout(() => flex.child.kill('SIGKILL'), 15_000);
    await flex.exited;
    clearTimeout(timer);
  }
  await postgres?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The two instances as the fixtures' TestApp shape (they only use api and adminToken). */
const asTestApp = (api: Api) => ({ api, adminToken: ADMIN }) as unknown as TestApp;

describe('two instances on one PostgreSQL', () => {
  it('started at once, migrated once', async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number; distinct_n: number }>('SELECT count(*)::int AS n, count(DISTINCT (domain, version))::int AS distinct_n FROM schema_migrations');
      expect(rows[0]!.n).toBeGreaterThan(10);
      expect(rows[0]!.n).toBe(rows[0]!.distinct_n);
      // One instance applied every migration; the other waited on the lock and found none to apply.
      const applied = instances.map((flex) => (flex.output().match(/"msg":"applied migration"/g) ?? []).length).sort((x, y) => x - y);
      expect(applied).toEqual([0, rows[0]!.n]);
    } finally {
      await client.end();
    }
    // Both serve, and a token issued by one is accepted by the other (one signing key).
    const client1 = await createOrgClient(a, ADMIN, { permissions: ['Organization.Organization.Read'] });
    expect((await b.get('/api/me', client1.token)).status).toBe(200);
  });

  it("shares a client's rate limit", async () => {
    const client = await createOrgClient(b, ADMIN, { permissions: ['Organization.Organization.Read'] });
    // Fixed windows aligned to the minute: start early in one so the run stays inside it.
    if (new Date().getSeconds() > 40) await new Promise((resolve) => setTimeout(resolve, (61 - new Date().getSeconds()) * 1000));
    const statuses: number[] = [];
    for (let i = 0; i < API_PER_MINUTE + 10; i += 1) statuses.push((await (i % 2 === 0 ? a : b).get('/api/me', client.token)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(API_PER_MINUTE);
    expect(statuses.slice(API_PER_MINUTE)).toEqual(Array(10).fill(429));
  }, 90_000);

  it('serves a VTN change made through the other by invalidation, and delivers each notification once', async () => {
    const org = await expectStatus(a.post('/api/admin/organizations', { name: 'scale-vtn', features: ['OpenADR'] }, ADMIN), 201);
    const credential = await expectStatus(a.post('/api/openadr/vtn/credential', { organizationId: org.id, name: 'bl', scopes: BL_SCOPES }, ADMIN), 200);
    const token = await fetchToken(a, credential.clientId, credential.clientSecret);
    const program = await expectStatus(a.post(`${VTN}/programs`, { programName: 'scale' }, token), 201);
    const list = `${VTN}/events?programID=${program.id}`;
    // b caches the empty list for VTN_READ_CACHE_MS (an hour here): only a's invalidation can
    // make b serve the new event while the test waits. How soon is not asserted (no timing
    // assertions: a loaded machine may take longer than the usual few milliseconds).
    expect(await expectStatus(b.get(list, token), 200)).toEqual([]);
    expect(await expectStatus(b.get(list, token), 200)).toEqual([]);
    const created = await expectStatus(a.post(`${VTN}/events`, { programID: program.id, eventName: 'first' }, token), 201);
    await waitFor('b to serve the event a created', async () => (await expectStatus(b.get(list, token), 200)).length === 1, 20_000);
    await expectStatus(b.put(`${VTN}/events/${created.id}`, { programID: program.id, eventName: 'first', priority: 7 }, token), 200);
    await waitFor('a to serve b’s update', async () => (await expectStatus(a.get(`${VTN}/events/${created.id}`, token), 200)).priority === 7, 20_000);

    const receiver = await startReceiver();
    receivers.push(receiver);
    await expectStatus(b.post(`${VTN}/subscriptions`, { clientName: 'scale', programID: program.id, objectOperations: [{ objects: ['EVENT'], operations: ['POST', 'PUT'], callbackUrl: receiver.url }] }, token), 201);
    const ids: string[] = [];
    for (let i = 0; i < 12; i += 1) ids.push((await expectStatus((i % 2 === 0 ? a : b).post(`${VTN}/events`, { programID: program.id, eventName: `e${i}` }, token), 201)).id);
    await waitFor('12 deliveries', () => receiver.received.length >= 12, 10_000);
    // Both dispatchers poll the outbox every 50 ms: give a duplicate every chance to show up.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(receiver.received).toHaveLength(12);
    expect(receiver.received.map((r) => r.body.object.id).sort()).toEqual([...ids].sort());
    expect(new Set(receiver.received.map((r) => r.body.notificationID)).size).toBe(12);
  }, 60_000);

  it('runs a due clearing once', async () => {
    const Q = 900_000;
    const DAY = 86_400_000;
    const iso = (ms: number) => new Date(ms).toISOString();
    const market = await createMarket(asTestApp(a), 2);
    const [p1, p2] = market.providers as [OrgClient, OrgClient];
    const r1 = await createMeasuredResource(asTestApp(b), p1.organizationId, market.zoneId);
    const r2 = await createMeasuredResource(asTestApp(a), p2.organizationId, market.zoneId);
    const start = Math.ceil((Date.now() + 600_000) / Q) * Q;
    const order = await a.post(
      '/api/product/order/availability',
      { organizationId: market.operator.organizationId, marketZoneId: market.zoneId, productType: 3, start: iso(start), end: iso(start + Q), expiresAt: iso(Date.now() + 3000), quantity: 30, availabilityPrice: 1 },
      market.operator.token,
    );
    expect(order.status, order.text).toBe(201);
    for (const [client, resource, price, api] of [[p1, r1, 1, a], [p2, r2, 2, b]] as const) {
      const res = await api.post(`/api/product/offer/availability/resource/${resource.id}`, { organizationId: client.organizationId, offers: [{ availabilityOrderId: order.body.id, activationPrice: price, maxQuantity: 20, minQuantity: 5 }] }, client.token);
      expect(res.status, res.text).toBe(201);
    }
    const period = `start=${iso(start - DAY)}&end=${iso(start + DAY)}`;
    const cleared = await eventually(async () => {
      const o = (await b.get(`/api/admin/orders/availability?${period}`, ADMIN)).body.find((x: { id: number }) => x.id === order.body.id);
      return o.clearingStatus === 1 ? undefined : o;
    }, 20_000, 'the clearing');
    expect(cleared.clearingStatus).toBe(2);
    // Both schedulers ran every 100 ms meanwhile; one cleared, the other found nothing to do.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const transactions = (await a.get(`/api/product/transaction/availability?organizationId=${market.operator.organizationId}&${period}`, market.operator.token)).body.filter((x: { availabilityOrderId: number }) => x.availabilityOrderId === order.body.id);
    expect(transactions.map((x: { resourceId: number; quantity: number }) => [x.resourceId, x.quantity]).sort()).toEqual([[r1.id, 20], [r2.id, 10]].sort());
  }, 60_000);

  it('refuses a rotated secret and a deleted client on both within AUTH_CACHE_MS', async () => {
    const client = await createOrgClient(a, ADMIN, { permissions: ['Organization.Organization.Read'] });
    const both = async (token: string) => [(await a.get('/api/me', token)).status, (await b.get('/api/me', token)).status];
    // Both instances have the client in their caches.
    expect(await both(client.token)).toEqual([200, 200]);
    const rotated = await expectStatus(a.put(`/api/organization/${client.organizationId}/client/${client.id}/secret`, undefined, ADMIN), 200);
    // Once the documented window has passed, both refuse the old token (waiting longer, as a loaded
    // machine may, can only make that surer: no upper bound on time is asserted); the old secret
    // is refused at once.
    await new Promise((resolve) => setTimeout(resolve, AUTH_CACHE_MS + 50));
    expect(await both(client.token)).toEqual([401, 401]);
    expect((await b.request('POST', '/oauth/token', { form: { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, audience: 'flex-api' } })).status).toBe(401);
    const fresh = await fetchToken(b, client.clientId, rotated.clientSecret);
    expect(await both(fresh)).toEqual([200, 200]);

    await expectStatus(b.delete(`/api/organization/${client.organizationId}/client/${client.id}`, ADMIN), 204);
    await new Promise((resolve) => setTimeout(resolve, AUTH_CACHE_MS + 50));
    expect(await both(fresh)).toEqual([401, 401]);
  });
});
