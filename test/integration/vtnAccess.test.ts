// Who may do what in the VTN: the scope each endpoint needs (each scope's allowed and refused
// calls), organization isolation, and VEN privacy (a VEN client sees only its own objects and
// what targets it). The scope table below is docs/vtn.md's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { ALL_SCOPES, BL_SCOPES, expectStatus, VEN_SCOPES, VTN, vtnClient, type VtnClient } from '../support/vtn.ts';

let t: TestApp;

beforeAll(async () => {
  // AUTH_CACHE_MS=0: a feature switched off applies to the next request.
  t = await startTestApp({ AUTH_CACHE_MS: '0' });
});
afterAll(() => t?.close());

const READ_VEN = ['read_all', 'read_ven_objects'];
const READ_TARGETS = ['read_all', 'read_targets'];
/** [method, path, body, scopes that may call it] for the 30 endpoints. */
const TABLE: [string, string, unknown, string[]][] = [];
for (const [kind, read, write, body] of [
  ['vens', READ_VEN, ['write_vens'], { venName: 'scope-ven' }],
  ['vens/no-such-ven/resources', READ_VEN, ['write_vens'], { resourceName: 'r' }],
  ['reports', READ_VEN, ['write_reports'], { programID: 'none', eventID: 'none', clientName: 'c' }],
  ['subscriptions', READ_VEN, ['write_subscriptions'], { clientName: 'c', programID: 'none' }],
  ['programs', READ_TARGETS, ['write_programs'], { programName: 'scope-program' }],
  ['events', READ_TARGETS, ['write_events'], { programID: 'none' }],
] as const) {
  TABLE.push(['GET', `/${kind}`, undefined, [...read]], ['POST', `/${kind}`, body, [...write]]);
  TABLE.push(['GET', `/${kind}/no-such-id`, undefined, [...read]], ['PUT', `/${kind}/no-such-id`, body, [...write]], ['DELETE', `/${kind}/no-such-id`, undefined, [...write]]);
}

describe('scopes', () => {
  it('each scope allows exactly the endpoints of the scope table and refuses the others (403)', async () => {
    expect(TABLE).toHaveLength(30);
    const org = (await vtnClient(t.api, t.adminToken, ['read_all'])).organizationId;
    const failures: string[] = [];
    for (const scope of ALL_SCOPES) {
      const client = await vtnClient(t.api, t.adminToken, [scope], org);
      for (const [method, path, body, allowed] of TABLE) {
        const res = await t.api.request(method, `${VTN}${path}`, { token: client.token, json: body });
        const expectAllowed = allowed.includes(scope);
        if (expectAllowed && res.status === 403) failures.push(`${scope}: ${method} ${path} refused: ${res.text}`);
        if (!expectAllowed && (res.status !== 403 || !String(res.body.detail).includes(allowed.join(', ')))) failures.push(`${scope}: ${method} ${path} → ${res.status}, expected 403`);
        if (expectAllowed && res.status >= 500) failures.push(`${scope}: ${method} ${path} → ${res.status}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('refuses tokens without a VTN: no organization, an organization client, a disabled feature', async () => {
    // The bootstrap administrator's token belongs to no organization.
    const calls: [string, string][] = [
      ['GET', '/events'],
      ['POST', '/programs'],
      ['GET', '/vens/x'],
    ];
    for (const [method, path] of calls) {
      const res = await t.api.request(method, `${VTN}${path}`, { token: t.adminToken, json: method === 'POST' ? { programName: 'x' } : undefined });
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(/no organization/);
    }
    const orgClient = await createOrgClient(t.api, t.adminToken, { features: ['OpenADR'], permissions: ['Organization.Organization.ReadWrite'] });
    const refused = await t.api.get(`${VTN}/events`, orgClient.token);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('read_all');

    const client = await vtnClient(t.api, t.adminToken, ['read_all']);
    expect((await t.api.get(`${VTN}/events`, client.token)).status).toBe(200);
    const org = await t.api.get(`/api/admin/organizations/${client.organizationId}`, t.adminToken);
    await expectStatus(t.api.put(`/api/admin/organizations/${client.organizationId}`, { name: org.body.name, features: [] }, t.adminToken), 200);
    const disabled = await t.api.get(`${VTN}/events`, client.token);
    expect(disabled.status).toBe(403);
    expect(disabled.body.type).toBe('urn:flex:error:feature_disabled');
  });

  it('lets a global administrator with an organization act as a business-logic client there', async () => {
    const bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
    const user = await expectStatus(t.api.post('/api/admin/users', { name: 'vtn-admin', organizationId: bl.organizationId, globalAdmin: true }, t.adminToken), 201);
    const p = await expectStatus(t.api.post(`${VTN}/programs`, { programName: 'by-admin' }, user.token), 201);
    expect((await expectStatus(t.api.get(`${VTN}/programs`, bl.token), 200)).map((x: any) => x.id)).toContain(p.id);
  });
});

describe('organization isolation', () => {
  it('keeps each organization’s VTN to itself', async () => {
    const a = await vtnClient(t.api, t.adminToken, [...BL_SCOPES, 'write_reports']);
    const b = await vtnClient(t.api, t.adminToken, [...BL_SCOPES, 'write_reports']);
    const post = (c: VtnClient, path: string, body: unknown) => expectStatus(t.api.post(`${VTN}${path}`, body, c.token), 201);
    const p = await post(a, '/programs', { programName: 'shared-name' });
    const e = await post(a, '/events', { programID: p.id });
    const r = await post(a, '/reports', { programID: p.id, eventID: e.id, clientName: 'x' });
    const s = await post(a, '/subscriptions', { clientName: 'x', programID: p.id });
    const v = await post(a, '/vens', { venName: 'shared-ven' });
    const res = await post(a, `/vens/${v.id}/resources`, { resourceName: 'r' });

    for (const path of ['/programs', '/events', '/reports', '/subscriptions', '/vens']) {
      expect(await expectStatus(t.api.get(`${VTN}${path}`, b.token), 200), path).toEqual([]);
    }
    const objects: [string, unknown][] = [
      [`/programs/${p.id}`, { programName: 'x' }],
      [`/events/${e.id}`, { programID: p.id }],
      [`/reports/${r.id}`, { programID: p.id, eventID: e.id, clientName: 'x' }],
      [`/subscriptions/${s.id}`, { clientName: 'x', programID: p.id }],
      [`/vens/${v.id}`, { venName: 'x' }],
      [`/vens/${v.id}/resources/${res.id}`, { resourceName: 'x' }],
    ];
    for (const [path, body] of objects) {
      expect((await t.api.get(`${VTN}${path}`, b.token)).status, path).toBe(404);
      expect((await t.api.put(`${VTN}${path}`, body, b.token)).status, path).toBe(404);
      expect((await t.api.delete(`${VTN}${path}`, b.token)).status, path).toBe(404);
    }
    expect((await t.api.get(`${VTN}/vens/${v.id}/resources`, b.token)).status).toBe(404);
    // References do not cross organizations either; names are per VTN.
    expect((await t.api.post(`${VTN}/events`, { programID: p.id }, b.token)).status).toBe(400);
    await post(b, '/programs', { programName: 'shared-name' });
    await post(b, '/vens', { venName: 'shared-ven' });
    for (const [path] of objects) expect((await t.api.get(`${VTN}${path}`, a.token)).status, path).toBe(200);
  });
});

describe('VEN privacy', () => {
  let bl: VtnClient;
  let venA: VtnClient;
  let venB: VtnClient;
  const as = (c: VtnClient) => ({
    get: (path: string) => t.api.get(`${VTN}${path}`, c.token),
    post: (path: string, body: unknown) => t.api.post(`${VTN}${path}`, body, c.token),
    put: (path: string, body: unknown) => t.api.put(`${VTN}${path}`, body, c.token),
    delete: (path: string) => t.api.delete(`${VTN}${path}`, c.token),
    ids: async (path: string) => ((await expectStatus(t.api.get(`${VTN}${path}`, c.token), 200)) as { id: string }[]).map((x) => x.id),
  });

  beforeAll(async () => {
    bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
    venA = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
    venB = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
  });

  it('shows a VEN client only its own VENs and resources, and keeps their targets out of its hands', async () => {
    const a = await expectStatus(as(bl).post('/vens', { venName: 'ven-a', clientID: venA.clientId, targets: [{ type: 'GROUP', values: ['g1'] }] }), 201);
    const b = await expectStatus(as(bl).post('/vens', { venName: 'ven-b', clientID: venB.clientId }), 201);
    const free = await expectStatus(as(bl).post('/vens', { venName: 'ven-free' }), 201);
    expect(a.clientID).toBe(venA.clientId);
    expect(await as(bl).ids('/vens')).toEqual([a.id, b.id, free.id]);
    expect(await as(venA).ids('/vens')).toEqual([a.id]);
    expect(await as(venA).ids('/vens?venName=ven-b')).toEqual([]);
    for (const id of [b.id, free.id]) {
      expect((await as(venA).get(`/vens/${id}`)).status).toBe(404);
      expect((await as(venA).put(`/vens/${id}`, { venName: 'stolen' })).status).toBe(404);
      expect((await as(venA).delete(`/vens/${id}`)).status).toBe(404);
      expect((await as(venA).get(`/vens/${id}/resources`)).status).toBe(404);
      expect((await as(venA).post(`/vens/${id}/resources`, { resourceName: 'r' })).status).toBe(404);
    }
    const resB = await expectStatus(as(bl).post(`/vens/${b.id}/resources`, { resourceName: 'r' }), 201);
    expect((await as(venA).get(`/vens/${b.id}/resources/${resB.id}`)).status).toBe(404);

    // Its own VEN: resources yes, targets no (a resource's targets reach its VEN too).
    expect((await as(venA).post(`/vens/${a.id}/resources`, { resourceName: 'battery', targets: [{ type: 'GROUP', values: ['anything'] }] })).status).toBe(403);
    const resA = await expectStatus(as(venA).post(`/vens/${a.id}/resources`, { resourceName: 'battery' }), 201);
    expect(await as(venA).ids(`/vens/${a.id}/resources`)).toEqual([resA.id]);
    const changed = await as(venA).put(`/vens/${a.id}`, { venName: 'ven-a', targets: [{ type: 'GROUP', values: ['g2'] }] });
    expect(changed.status).toBe(403);
    expect(changed.body.detail).toMatch(/targets/);
    const same = await expectStatus(as(venA).put(`/vens/${a.id}`, { venName: 'ven-a', targets: [{ type: 'GROUP', values: ['g1'] }] }), 200);
    expect(same.targets).toEqual([{ type: 'GROUP', values: ['g1'] }]);
    const omitted = await expectStatus(as(venA).put(`/vens/${a.id}`, { venName: 'ven-a', attributes: [{ type: 'X', values: [1] }] }), 200);
    expect(omitted).toMatchObject({ targets: [{ type: 'GROUP', values: ['g1'] }], clientID: venA.clientId, attributes: [{ type: 'X', values: [1] }] });
    expect((await as(venA).put(`/vens/${a.id}`, { venName: 'ven-a', clientID: venB.clientId })).status).toBe(403);
    // It may rename it (the new name is not a VEN_NAME target until business logic confirms it;
    // test/regressions/venNameSquatting.test.ts), but not to a name in use.
    expect((await as(venA).put(`/vens/${a.id}`, { venName: 'ven-b' })).status).toBe(409);
    expect((await expectStatus(as(venA).put(`/vens/${a.id}`, { venName: 'ven-a-renamed' }), 200)).venName).toBe('ven-a-renamed');
    await expectStatus(as(venA).put(`/vens/${a.id}`, { venName: 'ven-a' }), 200);

    // A VEN client registering a VEN gets it bound to itself, without targets.
    const own = await expectStatus(as(venA).post('/vens', { venName: 'ven-a-2' }), 201);
    expect(own.clientID).toBe(venA.clientId);
    expect((await as(venA).post('/vens', { venName: 'ven-a-3', targets: [{ type: 'GROUP', values: ['g9'] }] })).status).toBe(403);
    expect((await as(venA).post('/vens', { venName: 'ven-a-4', clientID: venB.clientId })).status).toBe(403);
    expect(await as(venA).ids('/vens')).toEqual([a.id, own.id]);
    // Business logic binds and re-binds.
    await expectStatus(as(bl).put(`/vens/${free.id}`, { venName: 'ven-free', clientID: venB.clientId }), 200);
    expect(await as(venB).ids('/vens')).toEqual([b.id, free.id]);
  });

  it('shows a VEN client untargeted programs and events and those targeting its VENs', async () => {
    const c = await vtnClient(t.api, t.adminToken, ['read_targets', 'write_vens'], bl.organizationId);
    const ven = await expectStatus(as(bl).post('/vens', { venName: 'ven-c', clientID: c.clientId, targets: [{ type: 'GROUP', values: ['c1'] }] }), 201);
    const prog = (name: string, targets?: unknown) => expectStatus(as(bl).post('/programs', { programName: name, targets }), 201);
    const p0 = await prog('open-program');
    const p1 = await prog('c1-program', [{ type: 'GROUP', values: ['c1', 'other'] }]);
    const p2 = await prog('c2-program', [{ type: 'GROUP', values: ['c2'] }]);
    const p3 = await prog('by-name-program', [{ type: 'VEN_NAME', values: ['ven-c'] }]);
    const ev = (targets?: unknown) => expectStatus(as(bl).post('/events', { programID: p0.id, targets }), 201);
    const e0 = await ev();
    const e1 = await ev([{ type: 'GROUP', values: ['c1'] }]);
    const e2 = await ev([{ type: 'GROUP', values: ['c2'] }]);
    const e3 = await ev([{ type: 'VEN_NAME', values: ['ven-c'] }]);

    const visiblePrograms = await as(c).ids('/programs');
    expect(visiblePrograms).toEqual(expect.arrayContaining([p0.id, p1.id, p3.id]));
    expect(visiblePrograms).not.toContain(p2.id);
    expect(await as(c).ids(`/events?programID=${p0.id}`)).toEqual([e0.id, e1.id, e3.id]);
    expect((await as(c).get(`/events/${e2.id}`)).status).toBe(404);
    expect((await as(c).get(`/programs/${p2.id}`)).status).toBe(404);
    expect(await as(bl).ids(`/events?programID=${p0.id}`)).toEqual([e0.id, e1.id, e2.id, e3.id]);

    // Re-targeting the VEN changes what it sees, at once (no stale cache).
    await expectStatus(as(bl).put(`/vens/${ven.id}`, { venName: 'ven-c', targets: [{ type: 'GROUP', values: ['c2'] }] }), 200);
    expect(await as(c).ids(`/events?programID=${p0.id}`)).toEqual([e0.id, e2.id, e3.id]);
    expect((await as(c).get(`/events/${e2.id}`)).status).toBe(200);
    expect((await as(c).get(`/events/${e1.id}`)).status).toBe(404);
    // And renaming it drops what targeted its old name.
    await expectStatus(as(bl).put(`/vens/${ven.id}`, { venName: 'ven-c-renamed' }), 200);
    expect(await as(c).ids(`/events?programID=${p0.id}`)).toEqual([e0.id]);
  });

  it('keeps reports and subscriptions to the VEN client that made them', async () => {
    const p = await expectStatus(as(bl).post('/programs', { programName: 'privacy-reports' }), 201);
    const e = await expectStatus(as(bl).post('/events', { programID: p.id }), 201);
    const hidden = await expectStatus(as(bl).post('/events', { programID: p.id, targets: [{ type: 'GROUP', values: ['nobody'] }] }), 201);
    const report = { programID: p.id, eventID: e.id, clientName: 'a' };
    const ra = await expectStatus(as(venA).post('/reports', report), 201);
    const rb = await expectStatus(as(venB).post('/reports', { ...report, clientName: 'b' }), 201);
    // A VEN client cannot report on (or even name) an event not meant for it.
    const refused = await as(venA).post('/reports', { ...report, eventID: hidden.id });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].path).toBe('eventID');
    const sub = { clientName: 'a', programID: p.id, objectOperations: [{ objects: ['EVENT'], operations: ['POST'], callbackUrl: 'https://example.com/a' }] };
    const sa = await expectStatus(as(venA).post('/subscriptions', sub), 201);
    const sb = await expectStatus(as(venB).post('/subscriptions', sub), 201);

    expect(await as(venA).ids(`/reports?programID=${p.id}`)).toEqual([ra.id]);
    expect(await as(venB).ids(`/reports?programID=${p.id}`)).toEqual([rb.id]);
    expect(await as(venA).ids(`/subscriptions?programID=${p.id}`)).toEqual([sa.id]);
    for (const [path, body] of [
      [`/reports/${rb.id}`, report],
      [`/subscriptions/${sb.id}`, sub],
    ] as const) {
      expect((await as(venA).get(path)).status).toBe(404);
      expect((await as(venA).put(path, body)).status).toBe(404);
      expect((await as(venA).delete(path)).status).toBe(404);
    }
    expect(await as(bl).ids(`/subscriptions?programID=${p.id}`)).toEqual([sa.id, sb.id]);
    await expectStatus(as(venA).put(`/reports/${ra.id}`, { ...report, reportName: 'edited' }), 200);
    await expectStatus(as(venA).delete(`/subscriptions/${sa.id}`), 200);
  });
});
