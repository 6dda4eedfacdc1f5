// What the public OpenADR 3 VTN suites exercise of our behaviour, in our own words, on both
// surfaces (3.0.1 at /api/openadr/v1, 3.1.0 at /api/openadr/3.1.0): objects created and updated
// the way generated clients send them (every optional member they were not given as null),
// read back, listed with filters and pages, deleted; 404 for unknown ids before anything in the
// body is looked at; 409 for taken names; unknown references (400 on v1, 409 on 3.1.0).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SURFACES } from '../../support/openAdrClients.ts';
import type { TestApp } from '../../support/testApp.ts';
import { expectStatus, startVtnApp, type VtnClient } from '../../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
let ven: VtnClient;
beforeAll(async () => {
  ({ t, bl, ven } = await startVtnApp({ VTN_WEBHOOK_ALLOW_PRIVATE: 'true' }, ['read_targets', 'read_ven_objects', 'write_reports', 'write_subscriptions', 'write_vens']));
});
afterAll(() => t?.close());

const period = { start: '2023-01-01T00:00:00Z', duration: 'PT5M', randomizeStart: null };
const intervals = [{ id: 0, intervalPeriod: null, payloads: [{ type: 'SIMPLE', values: [2, 3] }] }];

describe.each(SURFACES)('OpenADR objects on $name', (s) => {
  const v31 = s.name === '3.1.0';
  const program = (programName: string, extra: Record<string, unknown> = {}) => ({
    programName,
    programLongName: null,
    retailerName: null,
    retailerLongName: null,
    programType: null,
    country: null,
    principalSubdivision: null,
    intervalPeriod: null,
    programDescriptions: null,
    bindingEvents: null,
    localPrice: null,
    payloadDescriptors: null,
    targets: null,
    ...(v31 ? { attributes: null } : { timeZoneOffset: null }),
    ...extra,
  });
  const event = (programID: string, extra: Record<string, unknown> = {}) => ({
    programID,
    eventName: null,
    priority: null,
    targets: null,
    payloadDescriptors: null,
    reportDescriptors: null,
    intervalPeriod: period,
    intervals,
    ...(v31 ? { duration: null } : {}),
    ...extra,
  });

  it('creates, reads, updates and deletes a program with every member', async () => {
    const full = program(`full-${s.name}`, {
      programLongName: 'Test Program Long Name',
      retailerName: 'Retailer',
      programType: 'PRICING_TARIFF',
      country: 'NL',
      principalSubdivision: 'NB',
      intervalPeriod: { start: '2023-01-01T00:00:00Z', duration: 'PT5M', randomizeStart: 'PT5M' },
      payloadDescriptors: [{ payloadType: 'SIMPLE', units: 'KWH', currency: 'EUR' }],
      programDescriptions: [{ URL: 'https://example.com' }],
      bindingEvents: true,
      localPrice: true,
      targets: s.targets('GROUP:test-value'),
    });
    const created = await expectStatus(t.api.post(`${s.base}/programs`, full, bl.token), 201);
    expect(created).toMatchObject({ programName: full.programName, country: 'NL', principalSubdivision: 'NB', bindingEvents: true, targets: full.targets, intervalPeriod: full.intervalPeriod });
    expect(await expectStatus(t.api.get(`${s.base}/programs/${created.id}`, bl.token), 200)).toEqual(created);
    const updated = await expectStatus(t.api.put(`${s.base}/programs/${created.id}`, { ...full, programLongName: 'Updated', intervalPeriod: null }, bl.token), 200);
    expect(updated.programLongName).toBe('Updated');
    expect(updated).not.toHaveProperty('intervalPeriod');
    await expectStatus(t.api.delete(`${s.base}/programs/${created.id}`, bl.token), 200);
    expect((await t.api.get(`${s.base}/programs/${created.id}`, bl.token)).status).toBe(404);
  });

  it('creates events sent with nulls, lists them by program, target and page, updates and deletes them', async () => {
    const p = await expectStatus(t.api.post(`${s.base}/programs`, program(`events-${s.name}`), bl.token), 201);
    const e1 = await expectStatus(t.api.post(`${s.base}/events`, event(p.id, { eventName: 'test-event-1', targets: s.targets('GROUP:test-value-1') }), bl.token), 201);
    const e2 = await expectStatus(t.api.post(`${s.base}/events`, event(p.id, { eventName: 'test-event-2', targets: s.targets('GROUP:test-value-2') }), bl.token), 201);
    expect(e1).toMatchObject({ programID: p.id, eventName: 'test-event-1', priority: null, intervals: [{ id: 0, payloads: [{ type: 'SIMPLE', values: [2, 3] }] }] });
    const names = async (q: string) => (await expectStatus(t.api.get(`${s.base}/events?${q}`, bl.token), 200)).map((e: any) => e.eventName);
    expect(await names(`programID=${p.id}`)).toEqual(['test-event-1', 'test-event-2']);
    expect(await names(`programID=${p.id}&${s.targetQuery('GROUP:test-value-1')}`)).toEqual(['test-event-1']);
    expect(await names(`programID=${p.id}&skip=0&limit=1`)).toEqual(['test-event-1']);
    const updated = await expectStatus(t.api.put(`${s.base}/events/${e2.id}`, event(p.id, { eventName: 'renamed', priority: 1 }), bl.token), 200);
    expect(updated).toMatchObject({ eventName: 'renamed', priority: 1 });
    for (const e of [e1, e2]) await expectStatus(t.api.delete(`${s.base}/events/${e.id}`, bl.token), 200);
    expect(await names(`programID=${p.id}`)).toEqual([]);
  });

  it('takes reports from a VEN client, with the report descriptors’ nulls', async () => {
    const p = await expectStatus(t.api.post(`${s.base}/programs`, program(`reports-${s.name}`), bl.token), 201);
    const e = await expectStatus(t.api.post(`${s.base}/events`, event(p.id, { reportDescriptors: [{ payloadType: 'USAGE', readingType: null, units: null, targets: null }] }), bl.token), 201);
    const report = {
      ...(v31 ? {} : { programID: p.id }),
      eventID: e.id,
      clientName: 'test-client',
      reportName: null,
      payloadDescriptors: null,
      resources: [{ resourceName: 'test-resource', intervalPeriod: period, intervals: [{ id: 0, intervalPeriod: null, payloads: [{ type: 'USAGE', values: [2.5] }] }] }],
    };
    const created = await expectStatus(t.api.post(`${s.base}/reports`, report, ven.token), 201);
    expect(created).toMatchObject({ eventID: e.id, programID: p.id, clientName: 'test-client' });
    const updated = await expectStatus(t.api.put(`${s.base}/reports/${created.id}`, { ...report, reportName: 'usage' }, ven.token), 200);
    expect(updated.reportName).toBe('usage');
    expect((await expectStatus(t.api.get(`${s.base}/reports?eventID=${e.id}`, ven.token), 200)).map((r: any) => r.id)).toEqual([created.id]);
    await expectStatus(t.api.delete(`${s.base}/reports/${created.id}`, ven.token), 200);
  });

  it('keeps VEN names unique (409) and lists VENs by name and target', async () => {
    const body = (venName: string, targets: string[] = []) => (v31 ? { objectType: 'BL_VEN_REQUEST', venName, clientID: 'a-random-client-id', targets, attributes: null } : { venName, targets: s.targets(...targets), attributes: null });
    const a = await expectStatus(t.api.post(`${s.base}/vens`, body(`dup-${s.name}`, ['GROUP:ven-target']), bl.token), 201);
    expect((await t.api.post(`${s.base}/vens`, body(`dup-${s.name}`), bl.token)).status).toBe(409);
    const listed = await expectStatus(t.api.get(`${s.base}/vens?venName=dup-${s.name}`, bl.token), 200);
    expect(listed.map((v: any) => v.id)).toEqual([a.id]);
    expect((await expectStatus(t.api.get(`${s.base}/vens?${s.targetQuery('GROUP:ven-target')}`, bl.token), 200)).map((v: any) => v.id)).toEqual([a.id]);
    await expectStatus(t.api.delete(`${s.base}/vens/${a.id}`, bl.token), 200);
  });

  it('answers 404 for unknown ids of every kind, whatever the body names', async () => {
    const unknown = 'fake-id';
    const bodies: [string, unknown, string][] = [
      ['programs', program('fake'), bl.token],
      ['events', event('fake-program'), bl.token],
      ['reports', { ...(v31 ? {} : { programID: 'fake-program' }), eventID: 'test-event', clientName: 'test-client', resources: [] }, ven.token],
      ['subscriptions', { clientName: 'c', programID: 'fake-program', objectOperations: [{ objects: ['EVENT'], operations: [v31 ? 'CREATE' : 'POST'], callbackUrl: 'http://127.0.0.1:9/x' }] }, ven.token],
      ['vens', v31 ? { objectType: 'BL_VEN_REQUEST', venName: 'fake', clientID: 'fake' } : { venName: 'fake' }, bl.token],
    ];
    for (const [kind, body, token] of bodies) {
      expect((await t.api.get(`${s.base}/${kind}/${unknown}`, token)).status, kind).toBe(404);
      expect((await t.api.put(`${s.base}/${kind}/${unknown}`, body, token)).status, kind).toBe(404);
      expect((await t.api.delete(`${s.base}/${kind}/${unknown}`, token)).status, kind).toBe(404);
    }
    const resources = v31 ? `${s.base}/resources` : `${s.base}/vens/${(await expectStatus(t.api.post(`${s.base}/vens`, { venName: 'with-resources' }, bl.token), 201)).id}/resources`;
    expect((await t.api.get(`${resources}/${unknown}`, bl.token)).status).toBe(404);
    expect((await t.api.put(`${resources}/${unknown}`, { resourceName: 'r', venID: 'fake-ven' }, bl.token)).status).toBe(404);
    expect((await t.api.delete(`${resources}/${unknown}`, bl.token)).status).toBe(404);
  });

  it('refuses an event of a program that does not exist: 409 on 3.1.0, 400 on 3.0.1', async () => {
    const res = await t.api.post(`${s.base}/events`, event('test-program', { targets: v31 ? [] : null }), bl.token);
    expect(res.status).toBe(v31 ? 409 : 400);
    expect(res.body.errors).toEqual([{ path: 'programID', message: 'must name an existing program' }]);
  });

  it('manages a VEN’s resources', async () => {
    const v = await expectStatus(t.api.post(`${s.base}/vens`, v31 ? { objectType: 'BL_VEN_REQUEST', venName: `res-${s.name}`, clientID: ven.clientId } : { venName: `res-${s.name}`, clientID: ven.clientId }, bl.token), 201);
    const path = v31 ? `${s.base}/resources` : `${s.base}/vens/${v.id}/resources`;
    const body = (resourceName: string) => (v31 ? { objectType: 'BL_RESOURCE_REQUEST', resourceName, venID: v.id, clientID: ven.clientId, attributes: null, targets: null } : { resourceName, attributes: null, targets: null });
    const r = await expectStatus(t.api.post(path, body('test-resource'), bl.token), 201);
    expect(r).toMatchObject({ resourceName: 'test-resource', venID: v.id });
    expect((await expectStatus(t.api.put(`${path}/${r.id}`, body('renamed-resource'), bl.token), 200)).resourceName).toBe('renamed-resource');
    expect((await expectStatus(t.api.get(path + (v31 ? `?venID=${v.id}` : ''), ven.token), 200)).map((x: any) => x.id)).toEqual([r.id]);
    await expectStatus(t.api.delete(`${path}/${r.id}`, bl.token), 200);
    expect((await t.api.get(`${path}/${r.id}`, bl.token)).status).toBe(404);
  });
});
