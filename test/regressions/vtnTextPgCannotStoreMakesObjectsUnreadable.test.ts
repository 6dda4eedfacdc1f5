// Regression: a VTN object whose text held U+0000 was stored (201) and then
// every GET, PUT and DELETE of it answered 500 (22P05 "unsupported Unicode escape sequence");
// a lone UTF-16 surrogate gave 400 "invalid input syntax for type json" from the database.
// Now both are refused before anything is stored, with a 400 naming the field, on every kind.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/store/migrate.ts';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startVtnApp, VTN, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
let ven: VtnClient;
let programID: string;
let eventID: string;
let venID: string;

beforeAll(async () => {
  ({ t, bl, ven } = await startVtnApp({ VTN_WEBHOOK_ALLOW_PRIVATE: 'true' }, ['read_all', 'write_reports']));
  programID = (await expectStatus(t.api.post(`${VTN}/programs`, { programName: 'base' }, bl.token), 201)).id;
  eventID = (await expectStatus(t.api.post(`${VTN}/events`, { programID, intervals: [] }, bl.token), 201)).id;
  venID = (await expectStatus(t.api.post(`${VTN}/vens`, { venName: 'base-ven' }, bl.token), 201)).id;
});
afterAll(() => t?.close());

/** Sends the body as JSON text in which `BAD` is replaced by an escape PostgreSQL cannot keep. */
function send(method: string, path: string, body: unknown, escape: string, token = bl.token) {
  const text = JSON.stringify(body).replace('BAD', escape);
  return t.api.request(method, `${VTN}${path}`, { token, body: text, headers: { 'content-type': 'application/json' } });
}

const cases = (): { kind: string; path: string; body: () => unknown; field: string; token?: () => string }[] => [
  { kind: 'program', path: '/programs', body: () => ({ programName: 'p', programLongName: 'aBADb' }), field: 'programLongName' },
  { kind: 'program target', path: '/programs', body: () => ({ programName: 'p2', targets: [{ type: 'GROUP', values: ['x', 'BAD'] }] }), field: 'targets[0].values[1]' },
  { kind: 'event', path: '/events', body: () => ({ programID, eventName: 'BAD', intervals: [] }), field: 'eventName' },
  { kind: 'event payload', path: '/events', body: () => ({ programID, intervals: [{ id: 0, payloads: [{ type: 'PRICE', values: ['BAD'] }] }] }), field: 'intervals[0].payloads[0].values[0]' },
  { kind: 'report', path: '/reports', body: () => ({ programID, eventID, clientName: 'c', reportName: 'BAD', resources: [] }), field: 'reportName', token: () => ven.token },
  { kind: 'ven', path: '/vens', body: () => ({ venName: 'vBAD' }), field: 'venName' },
  { kind: 'resource', path: `/vens/VEN/resources`, body: () => ({ resourceName: 'r', attributes: [{ type: 'BAD', values: [1] }] }), field: 'attributes[0].type' },
  { kind: 'subscription', path: '/subscriptions', body: () => ({ clientName: 'c', programID, objectOperations: [{ objects: ['EVENT'], operations: ['POST'], callbackUrl: 'http://127.0.0.1:9/cb', bearerToken: 'tBAD' }] }), field: 'objectOperations[0].bearerToken' },
];

describe('VTN text PostgreSQL cannot store', () => {
  for (const [label, escape] of [['U+0000', '\\u0000'], ['a lone surrogate', '\\ud800']] as const) {
    it(`refuses ${label} in every kind with a 400 naming the field, storing nothing`, async () => {
      for (const c of cases()) {
        const path = c.path.replace('VEN', venID);
        const before = await expectStatus(t.api.get(`${VTN}${path}`, c.token?.() ?? bl.token), 200);
        const res = await send('POST', path, c.body(), escape, c.token?.());
        expect(res.status, `${c.kind}: ${res.text}`).toBe(400);
        expect(res.body.type).toBe('urn:flex:error:validation_failed');
        expect(res.body.errors, c.kind).toContainEqual({ path: c.field, message: expect.stringMatching(/U\+0000|surrogate/) });
        const after = await expectStatus(t.api.get(`${VTN}${path}`, c.token?.() ?? bl.token), 200);
        expect(after).toEqual(before);
      }
    });
  }

  it('refuses such text on update too, and the object stays readable and deletable', async () => {
    const created = await expectStatus(t.api.post(`${VTN}/programs`, { programName: 'updatable' }, bl.token), 201);
    const res = await send('PUT', `/programs/${created.id}`, { programName: 'updatable', retailerName: 'BAD' }, '\\u0000');
    expect(res.status, res.text).toBe(400);
    expect(await expectStatus(t.api.get(`${VTN}/programs/${created.id}`, bl.token), 200)).toEqual(created);
    expect(await expectStatus(t.api.delete(`${VTN}/programs/${created.id}`, bl.token), 200)).toEqual(created);
  });

  it('repairs programs stored with U+0000 before the fix: readable, updatable and deletable again', async () => {
    // What the bug left behind: the json column holds the escape verbatim (one escaped
    // backslash followed by "u0000" is ordinary text and must stay as it is).
    const now = new Date().toISOString();
    const doc = `{"id":"legacy","createdDateTime":"${now}","modificationDateTime":"${now}","objectType":"PROGRAM","programName":"legacy","programLongName":"a\\u0000b","retailerName":"c\\\\u0000d","timeZoneOffset":"PT0S"}`;
    await t.app.pool.query(
      `INSERT INTO vtn_programs (organization_id, id, program_name, created_at, modified_at, doc) VALUES ($1, 'legacy', 'legacy', $2, $2, $3::json)`,
      [bl.organizationId, now, doc],
    );
    expect((await t.api.get(`${VTN}/programs/legacy`, bl.token)).status).not.toBe(200);
    // The repair migration, as applied at start (it is idempotent: run it again here).
    await t.app.pool.query(fs.readFileSync(path.join(projectRoot(), 'src/vtn/migrations/003_repair_unreadable_text.sql'), 'utf8'));
    const got = await t.api.get(`${VTN}/programs/legacy`, bl.token);
    expect(got.status, got.text).toBe(200);
    expect(got.body.programLongName).toBe('a\ufffdb');
    expect(got.body.retailerName).toBe('c\\u0000d');
    expect((await t.api.get(`${VTN}/programs`, bl.token)).status).toBe(200);
    const updated = await t.api.put(`${VTN}/programs/legacy`, { programName: 'legacy', programLongName: 'clean' }, bl.token);
    expect(updated.status, updated.text).toBe(200);
    const deleted = await t.api.delete(`${VTN}/programs/legacy`, bl.token);
    expect(deleted.status, deleted.text).toBe(200);
  });
});
