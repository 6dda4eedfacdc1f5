// The 30 demand-response endpoints: every success path (POST 201, GET/PUT 200, DELETE 200 with
// the deleted object) and each error the interface names: 400 with the offending paths, 404 for
// unknown ids, 409 for taken names and for a program that still has events, 415 for non-JSON.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startVtnApp, VTN, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
let ven: VtnClient;

beforeAll(async () => {
  ({ t, bl, ven } = await startVtnApp({ VTN_WEBHOOK_ALLOW_PRIVATE: 'true' }, ['read_all', 'write_reports']));
});
afterAll(() => t?.close());

const post = (path: string, body: unknown, token = bl.token) => t.api.post(`${VTN}${path}`, body, token);
const put = (path: string, body: unknown, token = bl.token) => t.api.put(`${VTN}${path}`, body, token);
const get = (path: string, token = bl.token) => t.api.get(`${VTN}${path}`, token);
const del = (path: string, token = bl.token) => t.api.delete(`${VTN}${path}`, token);

let counter = 0;
const uniqueName = (prefix: string) => `${prefix}-${++counter}`;

async function program(extra: Record<string, unknown> = {}) {
  return expectStatus(post('/programs', { programName: uniqueName('program'), ...extra }), 201);
}
async function event(programID: string, extra: Record<string, unknown> = {}) {
  return expectStatus(post('/events', { programID, ...extra }), 201);
}

/** Create, read, replace, delete, and the 404s after: the life of any object. */
async function lifecycle(path: string, create: Record<string, unknown>, update: Record<string, unknown>, kind: string, token = bl.token) {
  const created = await post(path, { ...create, id: 'client-chosen', createdDateTime: '2000-01-01T00:00:00Z', objectType: kind }, token);
  expect(created.status, created.text).toBe(201);
  expect(created.headers.get('content-type')).toBe('application/json');
  const { id, createdDateTime, modificationDateTime } = created.body;
  expect(id).toMatch(/^[a-zA-Z0-9_-]{1,128}$/);
  expect(id).not.toBe('client-chosen');
  expect(created.body).toMatchObject({ ...create, objectType: kind });
  expect(createdDateTime).not.toBe('2000-01-01T00:00:00Z');
  expect(modificationDateTime).toBe(createdDateTime);

  expect(await expectStatus(get(`${path}/${id}`, token), 200)).toEqual(created.body);
  const updated = await put(`${path}/${id}`, { ...update, modificationDateTime: '2000-01-01T00:00:00Z' }, token);
  expect(updated.status, updated.text).toBe(200);
  expect(updated.body).toMatchObject({ ...update, id, createdDateTime, objectType: kind });
  expect(Date.parse(updated.body.modificationDateTime)).toBeGreaterThan(Date.parse(modificationDateTime));
  const again = await expectStatus(put(`${path}/${id}`, update, token), 200);
  expect(Date.parse(again.modificationDateTime)).toBeGreaterThan(Date.parse(updated.body.modificationDateTime));
  expect(await expectStatus(get(`${path}/${id}`, token), 200)).toEqual(again);

  const deleted = await expectStatus(del(`${path}/${id}`, token), 200);
  expect(deleted).toEqual(again);
  for (const res of [await get(`${path}/${id}`, token), await put(`${path}/${id}`, update, token), await del(`${path}/${id}`, token)]) {
    expect(res.status).toBe(404);
    expect(res.body.type).toBe('urn:flex:error:not_found');
  }
  return id as string;
}

describe('programs', () => {
  it('create, get, update, delete', async () => {
    await lifecycle(
      '/programs',
      { programName: uniqueName('p'), programLongName: 'Residential TOU', country: 'NL', principalSubdivision: 'NH', targets: [{ type: 'GROUP', values: ['north'] }] },
      { programName: uniqueName('p'), retailerName: 'ACME', bindingEvents: true, intervalPeriod: { start: '2024-01-01T00:00:00Z', duration: 'P1Y' } },
      'PROGRAM',
    );
  });

  it('fills the interface defaults and lists programs', async () => {
    const created = await program();
    expect(created.timeZoneOffset).toBe('PT0S');
    const listed = await expectStatus(get('/programs'), 200);
    expect(listed.map((p: any) => p.id)).toContain(created.id);
  });

  it('validates the body', async () => {
    const cases: [unknown, string][] = [
      [{}, 'programName'],
      [{ programName: '' }, 'programName'],
      [{ programName: 'x'.repeat(129) }, 'programName'],
      [{ programName: 'a', country: 'XX' }, 'country'],
      [{ programName: 'a', country: 'nl' }, 'country'],
      [{ programName: 'a', timeZoneOffset: '1 hour' }, 'timeZoneOffset'],
      [{ programName: 'a', intervalPeriod: { start: '2024-01-01T00:00:00+01:00' } }, 'intervalPeriod'],
      [{ programName: 'a', intervalPeriod: { duration: 'PT1H' } }, 'intervalPeriod'],
      [{ programName: 'a', targets: [{ type: 'GROUP' }] }, 'targets[0].values'],
      [{ programName: 'a', targets: [{ values: ['x'] }] }, 'targets[0].type'],
      [{ programName: 'a', targets: [{ type: 'GROUP', values: [{ x: 1 }] }] }, 'targets[0].values[0]'],
      [{ programName: 'a', programDescriptions: [{ URL: 'not a uri' }] }, 'programDescriptions[0].URL'],
      [{ programName: 'a', unknownField: 1 }, 'unknownField'],
      [{ programName: 'a', id: 'has space' }, 'id'],
      [{ programName: 'a', objectType: 'EVENT' }, 'objectType'],
    ];
    for (const [body, path] of cases) {
      const res = await post('/programs', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.type).toBe('urn:flex:error:validation_failed');
      expect(res.body.errors.map((e: any) => e.path).join(' '), JSON.stringify(body)).toContain(path);
    }
  });

  it('refuses a programName already used, on create and on update (409)', async () => {
    const a = await program();
    const b = await program();
    const taken = await post('/programs', { programName: a.programName });
    expect(taken.status).toBe(409);
    expect(taken.body.detail).toContain(a.programName);
    expect((await put(`/programs/${b.id}`, { programName: a.programName })).status).toBe(409);
    // Keeping its own name is no conflict.
    expect((await put(`/programs/${a.id}`, { programName: a.programName, programType: 'X' })).status).toBe(200);
  });

  it('refuses to delete a program that still has events (409)', async () => {
    const p = await program();
    const e = await event(p.id);
    const refused = await del(`/programs/${p.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/1 event/);
    await expectStatus(del(`/events/${e.id}`), 200);
    await expectStatus(del(`/programs/${p.id}`), 200);
  });
});

describe('events', () => {
  it('create, get, update, delete', async () => {
    const p = await program();
    const q = await program();
    await lifecycle(
      '/events',
      {
        programID: p.id,
        eventName: 'price event',
        priority: 2,
        targets: [{ type: 'GROUP', values: ['a', 'b'] }],
        payloadDescriptors: [{ objectType: 'EVENT_PAYLOAD_DESCRIPTOR', payloadType: 'PRICE', units: 'KWH', currency: 'EUR' }],
        reportDescriptors: [{ payloadType: 'USAGE', readingType: 'DIRECT_READ', aggregate: false, startInterval: -1, numIntervals: -1, historical: true, frequency: -1, repeat: 1 }],
        intervalPeriod: { start: '2024-06-01T12:00:00Z', duration: 'PT1H', randomizeStart: 'PT5M' },
        intervals: [
          { id: 0, payloads: [{ type: 'PRICE', values: [0.17] }] },
          { id: 1, intervalPeriod: { start: '2024-06-01T14:00:00Z', duration: 'PT30M' }, payloads: [{ type: 'PRICE', values: [0.2, 'x', true, { x: 1, y: 2 }] }] },
        ],
      },
      { programID: q.id, eventName: null, priority: null, intervals: [] },
      'EVENT',
    );
  });

  it('fills eventName and priority with null', async () => {
    const e = await event((await program()).id);
    expect(e).toMatchObject({ eventName: null, priority: null });
  });

  it('validates the body and the program reference', async () => {
    const p = await program();
    const cases: [unknown, string][] = [
      [{}, 'programID'],
      [{ programID: 'x'.repeat(129) }, 'programID'],
      [{ programID: 'bad id!' }, 'programID'],
      [{ programID: p.id, priority: -1 }, 'priority'],
      [{ programID: p.id, priority: 1.5 }, 'priority'],
      [{ programID: p.id, eventName: 'x'.repeat(129) }, 'eventName'],
      [{ programID: p.id, intervals: [{ id: 1.5, payloads: [] }] }, 'intervals[0].id'],
      [{ programID: p.id, intervals: [{ id: '1', payloads: [] }] }, 'intervals[0].id'],
      [{ programID: p.id, intervals: [{ id: 1 }] }, 'intervals[0].payloads'],
      [{ programID: p.id, intervals: [{ id: 1, payloads: [], intervalPeriod: { start: '2024-13-01T00:00:00Z' } }] }, 'intervals[0].intervalPeriod'],
      [{ programID: p.id, intervalPeriod: { start: '2024-01-01T00:00:00Z', duration: 'P' } }, 'intervalPeriod.duration'],
      [{ programID: p.id, payloadDescriptors: [{ units: 'KWH' }] }, 'payloadDescriptors[0].payloadType'],
      [{ programID: p.id, targets: 'GROUP' }, 'targets'],
    ];
    for (const [body, path] of cases) {
      const res = await post('/events', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((e: any) => e.path).join(' '), JSON.stringify(body)).toContain(path);
    }
    const unknown = await post('/events', { programID: 'no-such-program' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ path: 'programID', message: 'must name an existing program' }]);
    const e = await event(p.id);
    expect((await put(`/events/${e.id}`, { programID: 'no-such-program' })).status).toBe(400);
  });
});

describe('reports', () => {
  it('create, get, update, delete', async () => {
    const p = await program();
    const e1 = await event(p.id);
    const e2 = await event(p.id);
    await lifecycle(
      '/reports',
      {
        programID: p.id,
        eventID: e1.id,
        clientName: 'ven-1',
        reportName: 'usage',
        payloadDescriptors: [{ objectType: 'REPORT_PAYLOAD_DESCRIPTOR', payloadType: 'USAGE', readingType: 'DIRECT_READ', units: 'KWH', accuracy: 0.1, confidence: 90 }],
        resources: [{ resourceName: 'meter-1', intervalPeriod: { start: '2024-06-01T12:00:00Z', duration: 'PT15M' }, intervals: [{ id: 0, payloads: [{ type: 'USAGE', values: [1.5] }] }] }],
      },
      { programID: p.id, eventID: e2.id, clientName: 'ven-1', reportName: null },
      'REPORT',
      ven.token,
    );
  });

  it('validates the body and the references', async () => {
    const p = await program();
    const other = await program();
    const e = await event(p.id);
    for (const [body, path] of [
      [{ eventID: e.id, clientName: 'c' }, 'programID'],
      [{ programID: p.id, clientName: 'c' }, 'eventID'],
      [{ programID: p.id, eventID: e.id }, 'clientName'],
      [{ programID: p.id, eventID: e.id, clientName: '' }, 'clientName'],
      [{ programID: p.id, eventID: e.id, clientName: 'c', resources: [{ intervals: [] }] }, 'resources[0].resourceName'],
      [{ programID: p.id, eventID: e.id, clientName: 'c', payloadDescriptors: [{ payloadType: 'USAGE', confidence: 101 }] }, 'payloadDescriptors[0].confidence'],
    ] as const) {
      const res = await post('/reports', body, ven.token);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((x: any) => x.path).join(' ')).toContain(path);
    }
    const noProgram = await post('/reports', { programID: 'nope', eventID: e.id, clientName: 'c' }, ven.token);
    expect(noProgram.body.errors).toEqual([{ path: 'programID', message: 'must name an existing program' }]);
    const noEvent = await post('/reports', { programID: p.id, eventID: 'nope', clientName: 'c' }, ven.token);
    expect(noEvent.body.errors).toEqual([{ path: 'eventID', message: 'must name an existing event' }]);
    const wrongProgram = await post('/reports', { programID: other.id, eventID: e.id, clientName: 'c' }, ven.token);
    expect(wrongProgram.status).toBe(400);
    expect(wrongProgram.body.errors).toEqual([{ path: 'eventID', message: 'must be an event of programID' }]);
  });

  it('keeps reports when their event is deleted (they are records)', async () => {
    const p = await program();
    const e = await event(p.id);
    const r = await expectStatus(post('/reports', { programID: p.id, eventID: e.id, clientName: 'c' }, ven.token), 201);
    await expectStatus(del(`/events/${e.id}`), 200);
    expect((await get(`/reports/${r.id}`, ven.token)).status).toBe(200);
  });
});

describe('subscriptions', () => {
  it('create, get, update, delete', async () => {
    const p = await program();
    await lifecycle(
      '/subscriptions',
      {
        clientName: 'bl-1',
        programID: p.id,
        objectOperations: [{ objects: ['EVENT', 'PROGRAM'], operations: ['POST', 'PUT', 'DELETE'], callbackUrl: 'https://example.com/hook', bearerToken: 'secret' }],
        targets: [{ type: 'GROUP', values: ['a'] }],
      },
      { clientName: 'bl-2', programID: p.id, objectOperations: [{ objects: ['REPORT'], operations: ['GET'], callbackUrl: 'http://example.com/other', bearerToken: null }] },
      'SUBSCRIPTION',
    );
  });

  it('validates the body, the program and the callback URL', async () => {
    const p = await program();
    const op = { objects: ['EVENT'], operations: ['POST'], callbackUrl: 'https://example.com/h' };
    for (const [body, path] of [
      [{ programID: p.id }, 'clientName'],
      [{ clientName: 'c' }, 'programID'],
      [{ clientName: 'c', programID: p.id, objectOperations: [{ ...op, objects: ['THING'] }] }, 'objectOperations[0].objects[0]'],
      [{ clientName: 'c', programID: p.id, objectOperations: [{ ...op, operations: ['PATCH'] }] }, 'objectOperations[0].operations[0]'],
      [{ clientName: 'c', programID: p.id, objectOperations: [{ ...op, objects: [] }] }, 'objectOperations[0].objects'],
      [{ clientName: 'c', programID: p.id, objectOperations: [{ objects: ['EVENT'], operations: ['POST'] }] }, 'objectOperations[0].callbackUrl'],
      [{ clientName: 'c', programID: p.id, objectOperations: [{ ...op, callbackUrl: 'ftp://example.com/x' }] }, 'objectOperations[0].callbackUrl'],
      [{ clientName: 'c', programID: p.id, objectOperations: [op, { ...op, callbackUrl: 'not a url' }] }, 'objectOperations[1].callbackUrl'],
      [{ clientName: 'c', programID: p.id, objectOperations: [{ ...op, callbackUrl: 'https://user:pw@example.com/' }] }, 'objectOperations[0].callbackUrl'],
    ] as const) {
      const res = await post('/subscriptions', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((x: any) => x.path).join(' ')).toContain(path);
    }
    const noProgram = await post('/subscriptions', { clientName: 'c', programID: 'nope', objectOperations: [op] });
    expect(noProgram.body.errors).toEqual([{ path: 'programID', message: 'must name an existing program' }]);
  });
});

describe('vens and resources', () => {
  it('create, get, update, delete a VEN', async () => {
    await lifecycle(
      '/vens',
      { venName: uniqueName('ven'), attributes: [{ type: 'LOCATION', values: ['north'] }], targets: [{ type: 'GROUP', values: ['g1'] }], resources: [], clientID: null },
      { venName: uniqueName('ven'), targets: [], resources: [], clientID: null },
      'VEN',
    );
  });

  it('refuses a venName already used (409) and validates the body', async () => {
    const a = await expectStatus(post('/vens', { venName: uniqueName('ven') }), 201);
    const b = await expectStatus(post('/vens', { venName: uniqueName('ven') }), 201);
    expect((await post('/vens', { venName: a.venName })).status).toBe(409);
    expect((await put(`/vens/${b.id}`, { venName: a.venName })).status).toBe(409);
    for (const body of [{}, { venName: '' }, { venName: 'v', attributes: [{ type: 'X', values: 'y' }] }, { venName: 'v', clientID: '' }]) {
      expect((await post('/vens', body)).status, JSON.stringify(body)).toBe(400);
    }
  });

  it('manages resources under their VEN, served nested in it', async () => {
    const v = await expectStatus(post('/vens', { venName: uniqueName('ven') }), 201);
    expect(v.resources).toEqual([]);
    const resourceId = await lifecycle(
      `/vens/${v.id}/resources`,
      { resourceName: 'battery', attributes: [{ type: 'CAPACITY', values: [13.5] }], targets: [{ type: 'GROUP', values: ['g1'] }] },
      { resourceName: 'battery-2', targets: null },
      'RESOURCE',
    );
    expect(resourceId).toBeTruthy();
    const kept = await expectStatus(post(`/vens/${v.id}/resources`, { resourceName: 'heat pump', venID: 'ignored' }), 201);
    expect(kept.venID).toBe(v.id);
    const withResources = await expectStatus(get(`/vens/${v.id}`), 200);
    expect(withResources.resources).toEqual([kept]);
    expect(await expectStatus(get(`/vens/${v.id}/resources`), 200)).toEqual([kept]);
    // A VEN body's `resources` is ignored: resources have their own endpoints.
    const replaced = await expectStatus(put(`/vens/${v.id}`, { venName: v.venName, resources: [] }), 200);
    expect(replaced.resources).toEqual([kept]);
  });

  it('keeps resourceName unique per VEN, answers 404 for unknown VENs, deletes resources with their VEN', async () => {
    const v1 = await expectStatus(post('/vens', { venName: uniqueName('ven') }), 201);
    const v2 = await expectStatus(post('/vens', { venName: uniqueName('ven') }), 201);
    const r1 = await expectStatus(post(`/vens/${v1.id}/resources`, { resourceName: 'pump' }), 201);
    expect((await post(`/vens/${v1.id}/resources`, { resourceName: 'pump' })).status).toBe(409);
    const r2 = await expectStatus(post(`/vens/${v1.id}/resources`, { resourceName: 'pump-2' }), 201);
    expect((await put(`/vens/${v1.id}/resources/${r2.id}`, { resourceName: 'pump' })).status).toBe(409);
    await expectStatus(post(`/vens/${v2.id}/resources`, { resourceName: 'pump' }), 201);
    expect((await post(`/vens/${v1.id}/resources`, {})).status).toBe(400);

    expect((await get('/vens/no-such-ven/resources')).status).toBe(404);
    expect((await post('/vens/no-such-ven/resources', { resourceName: 'x' })).status).toBe(404);
    // A resource is addressed under its own VEN only.
    expect((await get(`/vens/${v2.id}/resources/${r1.id}`)).status).toBe(404);
    expect((await del(`/vens/${v2.id}/resources/${r1.id}`)).status).toBe(404);

    const deleted = await expectStatus(del(`/vens/${v1.id}`), 200);
    expect(deleted.resources.map((r: any) => r.id)).toEqual([r1.id, r2.id]);
    expect((await get(`/vens/${v1.id}/resources/${r1.id}`)).status).toBe(404);
    expect((await get(`/vens/${v1.id}/resources`)).status).toBe(404);
  });
});

describe('requests', () => {
  it('answers a non-JSON body with 415 and malformed JSON with 400', async () => {
    const p = await program();
    for (const path of ['/programs', '/events', '/reports', '/subscriptions', '/vens', `/programs/${p.id}`]) {
      const method = path.includes(p.id) ? 'PUT' : 'POST';
      const token = path === '/reports' ? ven.token : bl.token;
      const res = await t.api.request(method, `${VTN}${path}`, { token, body: 'programName=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(res.status, path).toBe(415);
      expect(res.body.type).toBe('urn:flex:error:unsupported_media_type');
    }
    const malformed = await t.api.request('POST', `${VTN}/programs`, { token: bl.token, body: '{"programName":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.type).toBe('urn:flex:error:malformed_json');
  });

  it('validates path ids on every id route', async () => {
    for (const path of ['/programs/', '/events/', '/reports/', '/subscriptions/', '/vens/', '/vens/v/resources/']) {
      for (const id of ['bad%20id', 'x'.repeat(129), 'a.b']) {
        const res = await get(`${path}${id}`);
        expect(res.status, `${path}${id}`).toBe(400);
        expect(res.body.errors[0].path).toMatch(/^path\./);
      }
    }
  });

  it('serves all 30 endpoints of the interface, and the usage-report extension', () => {
    const all = t.app.router.routes.filter((r) => r.def.path.startsWith(VTN)).map((r) => `${r.def.method} ${r.def.path}`);
    expect(all.filter((r) => r.endsWith('/processing'))).toEqual([`GET ${VTN}/reports/:reportID/processing`]);
    const vtnRoutes = all.filter((r) => !r.endsWith('/processing'));
    expect(vtnRoutes).toHaveLength(30);
    for (const kind of ['vens', 'vens/:venID/resources', 'reports', 'subscriptions', 'programs', 'events']) {
      const id = kind === 'vens/:venID/resources' ? 'resourceID' : `${kind.slice(0, -1)}ID`;
      for (const route of [`GET ${VTN}/${kind}`, `POST ${VTN}/${kind}`, `GET ${VTN}/${kind}/:${id}`, `PUT ${VTN}/${kind}/:${id}`, `DELETE ${VTN}/${kind}/:${id}`]) {
        expect(vtnRoutes).toContain(route);
      }
    }
  });
});
