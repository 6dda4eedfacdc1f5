// Regression: OpenADR clients send `null` for every optional member they were not given
// (`"randomizeStart": null`, `"intervalPeriod": null`, a 3.1 event's `"duration": null`), and the
// VTN answered 400 "must be string"/"must be object" on both surfaces, so the ElaadNL client
// could not create a program or an event. Such nulls now read as absent (docs/vtn.md, "Null").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SURFACES, V31 } from '../support/openAdrClients.ts';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startVtnApp, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
beforeAll(async () => {
  ({ t, bl } = await startVtnApp({}));
});
afterAll(() => t?.close());

describe.each(SURFACES)('nulls for optional members on $name', (s) => {
  it('creates and updates programs and events sent with nulls, storing the members as absent', async () => {
    const program = await expectStatus(
      t.api.post(`${s.base}/programs`, { programName: `nulls-${s.name}`, programLongName: null, retailerName: null, intervalPeriod: null, payloadDescriptors: null, targets: null, ...(s.name === '3.1.0' ? { attributes: null } : {}) }, bl.token),
      201,
    );
    expect(program).not.toHaveProperty('intervalPeriod');
    const period = { start: '2024-01-01T00:00:00Z', duration: 'PT5M', randomizeStart: null };
    const event = {
      programID: program.id,
      eventName: null,
      priority: null,
      targets: null,
      payloadDescriptors: null,
      reportDescriptors: null,
      intervalPeriod: period,
      intervals: [{ id: 0, intervalPeriod: null, payloads: [{ type: 'SIMPLE', values: [2, 3] }] }],
      ...(s.name === '3.1.0' ? { duration: null } : {}),
    };
    const created = await expectStatus(t.api.post(`${s.base}/events`, event, bl.token), 201);
    expect(created.intervalPeriod).toEqual({ start: '2024-01-01T00:00:00Z', duration: 'PT5M' });
    expect(created.intervals[0]).not.toHaveProperty('intervalPeriod');
    expect(created).not.toHaveProperty('duration');
    const updated = await expectStatus(t.api.put(`${s.base}/events/${created.id}`, { ...event, eventName: 'renamed', intervalPeriod: null }, bl.token), 200);
    expect(updated.eventName).toBe('renamed');
    expect(updated).not.toHaveProperty('intervalPeriod');
  });
});

it('refuses null for a member the object cannot be without', async () => {
  const res = await t.api.post(`${V31}/programs`, { programName: null }, bl.token);
  expect(res.status).toBe(400);
  expect(res.body.errors).toEqual([{ path: 'programName', message: 'is required' }]);
});
