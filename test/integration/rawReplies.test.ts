// Every route that answers with a `raw` body (encoded by its handler, not by the response
// serializer) is driven here on the real server, and each raw JSON reply is checked against the
// response schema the route publishes (test/support/rawReplies.ts). Runs once per time-series
// backend: PostgreSQL always, QuestDB where QUESTDB_HTTP_URL and QUESTDB_PG_URL name a server.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RAW_WITHOUT_SCHEMA, type RawReplyLog } from '../support/rawReplies.ts';
import { batch, createMeter, createRegister, readingsUrl, series } from '../support/meterFixtures.ts';
import { createOrgClient } from '../support/fixtures.ts';
import { connect, createMarket, createMeasuredResource, insertFlexibilityTransaction } from '../support/productFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, VTN, vtnClient } from '../support/vtn.ts';

/** The routes known to reply raw JSON; each must be driven and checked below. */
const RAW_JSON_ROUTES = [
  'GET /api/readings',
  'GET /api/readings/average/hourly',
  'GET /api/product/settlement/specification',
  'GET /api/product/settlement/changes',
  ...['programs', 'events', 'reports', 'subscriptions', 'vens'].flatMap((kind) => [`GET ${VTN}/${kind}`, `POST ${VTN}/${kind}`, `GET ${VTN}/${kind}/:id`, `PUT ${VTN}/${kind}/:id`, `DELETE ${VTN}/${kind}/:id`]),
  ...['GET', 'POST'].map((m) => `${m} ${VTN}/vens/:venID/resources`),
  ...['GET', 'PUT', 'DELETE'].map((m) => `${m} ${VTN}/vens/:venID/resources/:id`),
];

const questdb = process.env.QUESTDB_HTTP_URL && process.env.QUESTDB_PG_URL ? { TIMESERIES_BACKEND: 'questdb', QUESTDB_HTTP_URL: process.env.QUESTDB_HTTP_URL, QUESTDB_PG_URL: process.env.QUESTDB_PG_URL } : undefined;
const BACKENDS: [string, Record<string, string>][] = [['postgres', {}], ...(questdb ? [['questdb', questdb] as [string, Record<string, string>]] : [])];

describe.each(BACKENDS)('raw replies match their response schemas (%s)', (_backend, env) => {
  let t: TestApp;
  let db: pg.Client;
  let log: RawReplyLog;

  beforeAll(async () => {
    t = await startTestApp({ ...env, VTN_WEBHOOK_ALLOW_PRIVATE: 'true', VALIDATION_INTERVAL_MS: '3600000' });
    db = await connect(t);
    log = t.rawReplies;
  });
  afterAll(async () => {
    await db?.end();
    await t?.close();
  });

  it('readings: as stored, in buckets, local days, virtual, hourly averages', async () => {
    const c = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
    const meter = await createMeter(t.api, t.adminToken, [c.organizationId]);
    const energy = await createRegister(t.api, t.adminToken, meter.id);
    const power = await createRegister(t.api, t.adminToken, meter.id, { measurementType: 3, timeZone: 'Europe/Oslo' });
    const virtual = await createRegister(t.api, t.adminToken, meter.id, {
      isVirtual: true,
      virtualDefinition: { calculationType: 1, expression: 'r0 * 2 - r1', sourceRegisters: [energy.id, power.id], sumPreviousValues: false },
    });
    const values = series('2024-03-30T22:00:00Z', 200, 900, (i) => i / 4);
    await expectStatus(t.api.post('/api/readings', batch(meter.externalId, { [energy.externalId]: values, [power.externalId]: values }), c.token), 204);
    const ids = [energy.id, power.id, virtual.id];
    for (const resolution of [undefined, 900, 3600, 86400]) {
      const body = await expectStatus(t.api.get(readingsUrl(c.organizationId, ids, '2024-03-30T00:00:00Z', '2024-04-02T00:00:00Z', resolution), c.token), 200);
      expect(body.map((r: { readings: unknown[] }) => r.readings.length > 0)).toEqual([true, true, true]);
    }
    const hourly = `/api/readings/average/hourly?organizationId=${c.organizationId}&registerId=${ids.join(',')}&start=2024-03-30T00:00:00Z&end=2024-04-02T00:00:00Z`;
    await expectStatus(t.api.get(hourly, c.token), 200);
  });

  it('the settlement specification', async () => {
    const market = await createMarket(t, 1);
    const provider = market.providers[0]!;
    const resource = await createMeasuredResource(t, provider.organizationId, market.zoneId);
    const id = await insertFlexibilityTransaction(db, { market, seller: provider.organizationId, resourceId: resource.id, productType: 1, start: '2024-03-05T10:00:00Z', end: '2024-03-05T11:00:00Z', quantity: '3.5', unitPrice: '1.25' });
    await db.query(`UPDATE flexibility_transactions SET delivery_validation_status = 2, validated_at = now(), delivery_percentage = 90, remuneration_percentage = 90 WHERE id = $1`, [id]);
    for (const who of [provider, market.operator]) {
      const spec = await expectStatus(t.api.get(`/api/product/settlement/specification?organizationId=${who.organizationId}&start=2024-03-01T00:00:00Z&end=2024-04-01T00:00:00Z`, who.token), 200);
      expect(spec.counterParts).toHaveLength(1);
      const since = new Date(Date.parse(spec.asOf) - 60_000).toISOString();
      const changes = await expectStatus(t.api.get(`/api/product/settlement/changes?organizationId=${who.organizationId}&start=2024-03-01T00:00:00Z&end=2024-04-01T00:00:00Z&since=${since}`, who.token), 200);
      expect(changes.changes).toHaveLength(1);
    }
  });

  it('every VTN object kind: create, list, get, replace, delete', async () => {
    const bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
    const ven = await vtnClient(t.api, t.adminToken, ['read_all', 'write_reports', 'write_subscriptions'], bl.organizationId);
    const lifecycle = async (path: string, create: object, update: object, token = bl.token) => {
      const created = await expectStatus(t.api.post(`${VTN}${path}`, create, token), 201);
      await expectStatus(t.api.get(`${VTN}${path}`, token), 200);
      await expectStatus(t.api.get(`${VTN}${path}/${created.id}`, token), 200);
      await expectStatus(t.api.put(`${VTN}${path}/${created.id}`, update, token), 200);
      return created.id as string;
    };
    const remove = (path: string, token = bl.token) => expectStatus(t.api.delete(`${VTN}${path}`, token), 200);

    const program = await lifecycle('/programs', { programName: 'raw-p', targets: [{ type: 'GROUP', values: ['north'] }] }, { programName: 'raw-p2', intervalPeriod: { start: '2024-01-01T00:00:00Z', duration: 'P1Y' } });
    const event = await lifecycle(
      '/events',
      { programID: program, eventName: 'price', priority: 2, intervalPeriod: { start: '2024-06-01T12:00:00Z', duration: 'PT1H' }, intervals: [{ id: 0, payloads: [{ type: 'PRICE', values: [0.25] }] }] },
      { programID: program, eventName: 'price-2', intervals: [{ id: 0, payloads: [{ type: 'PRICE', values: [0.3] }] }] },
    );
    const report = await lifecycle(
      '/reports',
      {
        programID: program,
        eventID: event,
        clientName: 'ven-1',
        resources: [{ resourceName: 'meter-1', intervalPeriod: { start: '2024-06-01T12:00:00Z', duration: 'PT15M' }, intervals: [{ id: 0, payloads: [{ type: 'USAGE', values: [1.5] }] }] }],
      },
      { programID: program, eventID: event, clientName: 'ven-1', reportName: 'usage', resources: [] },
      ven.token,
    );
    const subscription = await lifecycle(
      '/subscriptions',
      { clientName: 'bl-1', programID: program, objectOperations: [{ objects: ['EVENT'], operations: ['POST'], callbackUrl: 'https://example.com/hook', bearerToken: 'secret' }] },
      { clientName: 'bl-1', programID: program, objectOperations: [{ objects: ['PROGRAM'], operations: ['PUT'], callbackUrl: 'https://example.com/hook' }] },
    );
    const venId = await lifecycle('/vens', { venName: 'raw-ven', attributes: [{ type: 'LOCATION', values: ['north'] }], resources: [] }, { venName: 'raw-ven-2', resources: [] });
    const resource = await lifecycle(`/vens/${venId}/resources`, { resourceName: 'battery', attributes: [{ type: 'CAPACITY', values: [13.5] }] }, { resourceName: 'battery-2' });
    await remove(`/vens/${venId}/resources/${resource}`);
    await remove(`/vens/${venId}`);
    await remove(`/subscriptions/${subscription}`);
    await remove(`/reports/${report}`, ven.token);
    await remove(`/events/${event}`);
    await remove(`/programs/${program}`);
  });

  it('checked every raw JSON route, and every reply matched', () => {
    expect(log.failures).toEqual([]);
    const checked = [...log.checked.keys()].map((key) => key.replace(/:\w+ID$/, ':id'));
    expect(checked.filter((key) => !RAW_JSON_ROUTES.includes(key)), 'raw JSON routes missing from RAW_JSON_ROUTES').toEqual([]);
    expect(RAW_JSON_ROUTES.filter((key) => !checked.includes(key)), 'raw JSON routes not driven').toEqual([]);
    expect(Object.keys(RAW_WITHOUT_SCHEMA).every((key) => t.app.router.routes.some((r) => `${r.def.method} ${r.def.path}` === key))).toBe(true);
  });
});
