// Search semantics: skip/limit paging with a stable order (120 events paged without repeats or
// gaps), AND-combined filters, targetType + targetValues, and the x-start/x-end overlap of the
// event and report spans (docs/vtn.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startVtnApp, VTN, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
let venClient: VtnClient;

beforeAll(async () => {
  ({ t, bl, ven: venClient } = await startVtnApp({}, ['read_all', 'write_reports', 'write_subscriptions', 'write_vens']));
});
afterAll(() => t?.close());

const post = (path: string, body: unknown, token = bl.token) => expectStatus(t.api.post(`${VTN}${path}`, body, token), 201);
const list = (path: string, token = bl.token) => expectStatus(t.api.get(`${VTN}${path}`, token), 200);
const ids = (items: { id: string }[]) => items.map((i) => i.id);
let n = 0;
const program = async (extra: Record<string, unknown> = {}) => post('/programs', { programName: `q-${++n}`, ...extra });

describe('paging', () => {
  it('pages through 120 events with skip/limit without repeats or gaps, by priority then creation', async () => {
    const p = await program();
    const created: { id: string; priority: number | null; index: number }[] = [];
    for (let i = 0; i < 120; i += 1) {
      // Mixed priorities, ties within a priority, and events without one.
      const priority = i % 5 === 0 ? null : i % 4;
      const e = await post('/events', { programID: p.id, priority, eventName: `e${i}` });
      created.push({ id: e.id, priority, index: i });
    }
    const expected = [...created]
      .sort((a, b) => (a.priority ?? Infinity) - (b.priority ?? Infinity) || a.index - b.index)
      .map((e) => e.id);

    const pages: string[][] = [];
    for (let skip = 0; skip < 150; skip += 50) pages.push(ids(await list(`/events?programID=${p.id}&skip=${skip}&limit=50`)));
    expect(pages.map((page) => page.length)).toEqual([50, 50, 20]);
    const all = pages.flat();
    expect(new Set(all).size).toBe(120);
    expect(all).toEqual(expected);

    // Any other page size walks the same order.
    const bySeven: string[] = [];
    for (let skip = 0; skip < 120; skip += 7) bySeven.push(...ids(await list(`/events?programID=${p.id}&skip=${skip}&limit=7`)));
    expect(bySeven).toEqual(expected);
    // The default limit is 50; beyond the end is an empty page.
    expect(await list(`/events?programID=${p.id}`)).toHaveLength(50);
    expect(await list(`/events?programID=${p.id}&skip=120`)).toEqual([]);
  });

  it('refuses skip and limit out of range', async () => {
    for (const query of ['limit=0', 'limit=51', 'limit=-1', 'limit=x', 'skip=-1', 'skip=1.5', 'skip=2147483648']) {
      for (const path of ['/events', '/programs', '/reports', '/subscriptions', '/vens']) {
        const res = await t.api.get(`${VTN}${path}?${query}`, bl.token);
        expect(res.status, `${path}?${query}`).toBe(400);
        expect(res.body.errors[0].path).toMatch(/^query\.(skip|limit)$/);
      }
    }
    expect((await t.api.get(`${VTN}/events?unknown=1`, bl.token)).status).toBe(400);
  });

  it('pages every kind in creation order', async () => {
    const made: string[] = [];
    for (let i = 0; i < 6; i += 1) made.push((await post('/vens', { venName: `paged-ven-${i}` })).id);
    const all = ids(await list('/vens?venName=paged-ven-0')).concat(...(await Promise.all([1, 2, 3, 4, 5].map(async (i) => ids(await list(`/vens?venName=paged-ven-${i}`))))));
    expect(all).toEqual(made);
    const everything = ids(await list('/vens'));
    const paged = [...ids(await list('/vens?limit=4')), ...ids(await list('/vens?skip=4&limit=4')), ...ids(await list('/vens?skip=8&limit=50'))];
    expect(paged).toEqual(everything);
  });
});

describe('filters', () => {
  it('keeps objects with a target of the type and any of the values', async () => {
    const p = await program();
    const a = await post('/events', { programID: p.id, targets: [{ type: 'GROUP', values: ['a'] }] });
    const ab = await post('/events', { programID: p.id, targets: [{ type: 'GROUP', values: ['b', 'x'] }, { type: 'ZONE', values: [5] }] });
    const none = await post('/events', { programID: p.id });
    const zone = await post('/events', { programID: p.id, targets: [{ type: 'ZONE', values: ['a'] }] });
    expect(ids(await list(`/events?programID=${p.id}`))).toEqual([a.id, ab.id, none.id, zone.id]);
    expect(ids(await list(`/events?programID=${p.id}&targetType=GROUP&targetValues=a`))).toEqual([a.id]);
    expect(ids(await list(`/events?programID=${p.id}&targetType=GROUP&targetValues=a&targetValues=b`))).toEqual([a.id, ab.id]);
    expect(ids(await list(`/events?programID=${p.id}&targetType=GROUP&targetValues=a,x`))).toEqual([a.id, ab.id]);
    // Numbers match their text; the type matters.
    expect(ids(await list(`/events?programID=${p.id}&targetType=ZONE&targetValues=5`))).toEqual([ab.id]);
    expect(ids(await list(`/events?programID=${p.id}&targetType=GROUP&targetValues=z`))).toEqual([]);
    for (const query of ['targetType=GROUP', 'targetValues=a', 'targetType=GROUP&targetValues=']) {
      const res = await t.api.get(`${VTN}/events?${query}`, bl.token);
      expect(res.status, query).toBe(400);
      expect(res.body.errors[0].path).toMatch(/^query\.target(Type|Values)$/);
    }
  });

  it('combines filters with AND', async () => {
    const p1 = await program();
    const p2 = await program();
    const inP1 = await post('/events', { programID: p1.id, targets: [{ type: 'GROUP', values: ['g'] }], intervalPeriod: { start: '2024-03-01T10:00:00Z', duration: 'PT1H' } });
    await post('/events', { programID: p2.id, targets: [{ type: 'GROUP', values: ['g'] }], intervalPeriod: { start: '2024-03-01T10:00:00Z', duration: 'PT1H' } });
    await post('/events', { programID: p1.id, targets: [{ type: 'GROUP', values: ['h'] }], intervalPeriod: { start: '2024-03-01T10:00:00Z', duration: 'PT1H' } });
    await post('/events', { programID: p1.id, targets: [{ type: 'GROUP', values: ['g'] }], intervalPeriod: { start: '2024-03-02T10:00:00Z', duration: 'PT1H' } });
    const window = 'x-start=2024-03-01T00:00:00Z&x-end=2024-03-02T00:00:00Z';
    expect(ids(await list(`/events?programID=${p1.id}&targetType=GROUP&targetValues=g&${window}`))).toEqual([inP1.id]);
  });

  it('filters programs, VENs, resources and subscriptions', async () => {
    const tp = await program({ targets: [{ type: 'REGION', values: ['north'] }] });
    await program({ targets: [{ type: 'REGION', values: ['south'] }] });
    expect(ids(await list('/programs?targetType=REGION&targetValues=north'))).toEqual([tp.id]);

    const v1 = await post('/vens', { venName: 'filter-ven-1', targets: [{ type: 'GROUP', values: ['f1'] }] });
    const v2 = await post('/vens', { venName: 'filter-ven-2', targets: [{ type: 'GROUP', values: ['f2'] }] });
    expect(ids(await list('/vens?venName=filter-ven-2'))).toEqual([v2.id]);
    expect(ids(await list('/vens?targetType=GROUP&targetValues=f1,f2'))).toEqual([v1.id, v2.id]);
    const r1 = await post(`/vens/${v1.id}/resources`, { resourceName: 'r1', targets: [{ type: 'GROUP', values: ['rg'] }] });
    const r2 = await post(`/vens/${v1.id}/resources`, { resourceName: 'r2' });
    expect(ids(await list(`/vens/${v1.id}/resources?resourceName=r2`))).toEqual([r2.id]);
    expect(ids(await list(`/vens/${v1.id}/resources?targetType=GROUP&targetValues=rg`))).toEqual([r1.id]);

    const op = (objects: string[]) => [{ objects, operations: ['POST'], callbackUrl: 'https://example.com/h' }];
    const s1 = await post('/subscriptions', { clientName: 'sub-a', programID: tp.id, objectOperations: op(['EVENT']), targets: [{ type: 'GROUP', values: ['s'] }] });
    const s2 = await post('/subscriptions', { clientName: 'sub-b', programID: tp.id, objectOperations: op(['REPORT', 'VEN']) });
    const other = await program();
    const s3 = await post('/subscriptions', { clientName: 'sub-a', programID: other.id, objectOperations: op(['EVENT']) });
    expect(ids(await list(`/subscriptions?programID=${tp.id}`))).toEqual([s1.id, s2.id]);
    expect(ids(await list('/subscriptions?clientName=sub-a'))).toEqual([s1.id, s3.id]);
    expect(ids(await list(`/subscriptions?clientName=sub-a&programID=${tp.id}`))).toEqual([s1.id]);
    expect(ids(await list('/subscriptions?objects=VEN'))).toEqual([s2.id]);
    expect(ids(await list('/subscriptions?objects=EVENT,REPORT&clientName=sub-b'))).toEqual([s2.id]);
    expect(ids(await list('/subscriptions?targetType=GROUP&targetValues=s'))).toEqual([s1.id]);
  });

  it('filters reports by program, event, client name and time window', async () => {
    const p = await program();
    const e1 = await post('/events', { programID: p.id });
    const e2 = await post('/events', { programID: p.id });
    const report = (eventID: string, clientName: string, start?: string) =>
      post('/reports', { programID: p.id, eventID, clientName, resources: start ? [{ resourceName: 'm', intervalPeriod: { start, duration: 'PT1H' }, intervals: [{ id: 0, payloads: [] }] }] : [] }, venClient.token);
    const r1 = await report(e1.id, 'ven-a', '2024-05-01T10:00:00Z');
    const r2 = await report(e2.id, 'ven-a', '2024-05-02T10:00:00Z');
    const r3 = await report(e2.id, 'ven-b');
    expect(ids(await list(`/reports?programID=${p.id}`, venClient.token))).toEqual([r1.id, r2.id, r3.id]);
    expect(ids(await list(`/reports?eventID=${e2.id}`, venClient.token))).toEqual([r2.id, r3.id]);
    expect(ids(await list(`/reports?eventID=${e2.id}&clientName=ven-a`, venClient.token))).toEqual([r2.id]);
    // r3 has no timing: it is in every window.
    expect(ids(await list(`/reports?programID=${p.id}&x-start=2024-05-01T10:30:00Z&x-end=2024-05-01T12:00:00Z`, venClient.token))).toEqual([r1.id, r3.id]);
    expect(ids(await list(`/reports?programID=${p.id}&x-start=2024-05-02T11:00:00Z`, venClient.token))).toEqual([r3.id]);
  });
});

describe('time window (x-start, x-end)', () => {
  it('keeps events whose span overlaps [x-start, x-end)', async () => {
    const p = await program();
    const ev = (body: Record<string, unknown>) => post('/events', { programID: p.id, ...body });
    // [10:00, 11:00)
    const hour = await ev({ intervalPeriod: { start: '2024-01-01T10:00:00Z', duration: 'PT1H' } });
    // Three back-to-back intervals from 12:00: [12:00, 15:00)
    const sequence = await ev({ intervalPeriod: { start: '2024-01-01T12:00:00Z', duration: 'PT1H' }, intervals: [0, 1, 2].map((id) => ({ id, payloads: [] })) });
    // Intervals with their own periods: [16:00, 16:30) and [20:00, 21:00) → hull [16:00, 21:00)
    const own = await ev({
      intervals: [
        { id: 0, intervalPeriod: { start: '2024-01-01T16:00:00Z', duration: 'PT30M' }, payloads: [] },
        { id: 1, intervalPeriod: { start: '2024-01-01T20:00:00Z', duration: 'PT1H' }, payloads: [] },
      ],
    });
    // No duration: open-ended from 2024-01-02.
    const open = await ev({ intervalPeriod: { start: '2024-01-02T00:00:00Z' } });
    // No timing at all: unbounded.
    const timeless = await ev({});
    // Calendar duration: [2024-01-31, 2024-02-29) (P1M from January 31st ends on the last day of February).
    const month = await ev({ intervalPeriod: { start: '2024-01-31T00:00:00Z', duration: 'P1M' } });

    const window = async (query: string) => ids(await list(`/events?programID=${p.id}&${query}`));
    expect(await window('x-start=2024-01-01T10:30:00Z&x-end=2024-01-01T10:45:00Z')).toEqual([hour.id, timeless.id]);
    // Half-open: an event ending at x-start, or starting at x-end, does not overlap.
    expect(await window('x-start=2024-01-01T11:00:00Z&x-end=2024-01-01T12:00:00Z')).toEqual([timeless.id]);
    expect(await window('x-start=2024-01-01T14:59:00Z&x-end=2024-01-01T15:00:00Z')).toEqual([sequence.id, timeless.id]);
    expect(await window('x-start=2024-01-01T17:00:00Z&x-end=2024-01-01T18:00:00Z')).toEqual([own.id, timeless.id]);
    expect(await window('x-start=2030-01-01T00:00:00Z')).toEqual([open.id, timeless.id]);
    expect(await window('x-end=2024-01-01T10:00:01Z')).toEqual([hour.id, timeless.id]);
    expect(await window('x-start=2024-02-28T12:00:00Z&x-end=2024-02-28T13:00:00Z')).toEqual([open.id, timeless.id, month.id]);
    expect(await window('x-start=2024-02-29T00:00:00Z&x-end=2024-02-29T01:00:00Z')).toEqual([open.id, timeless.id]);

    for (const query of ['x-start=2024-01-02T00:00:00Z&x-end=2024-01-01T00:00:00Z', 'x-start=2024-01-01T00:00:00Z&x-end=2024-01-01T00:00:00Z', 'x-start=yesterday', 'x-end=2024-01-01T00:00:00+01:00']) {
      const res = await t.api.get(`${VTN}/events?${query}`, bl.token);
      expect(res.status, query).toBe(400);
      expect(res.body.errors[0].path).toMatch(/^query\.x-(start|end)$/);
    }
  });

  it('moves an event in the window when its timing changes', async () => {
    const p = await program();
    const e = await post('/events', { programID: p.id, intervalPeriod: { start: '2024-07-01T00:00:00Z', duration: 'PT1H' } });
    const july = `/events?programID=${p.id}&x-start=2024-07-01T00:00:00Z&x-end=2024-07-02T00:00:00Z`;
    expect(ids(await list(july))).toEqual([e.id]);
    await expectStatus(t.api.put(`${VTN}/events/${e.id}`, { programID: p.id, intervalPeriod: { start: '2024-08-01T00:00:00Z', duration: 'PT1H' } }, bl.token), 200);
    expect(ids(await list(july))).toEqual([]);
  });
});
