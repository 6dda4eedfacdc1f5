// Regression: a VEN client could not rename its own VEN (403), which OpenADR 3.1.0 allows: its
// VenVenRequest carries venName and restricts only targets for VEN clients. It may now rename it,
// on both surfaces; the new name is no VEN_NAME target until business logic confirms it
// (venNameSquatting.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SURFACES } from '../support/openAdrClients.ts';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startVtnApp, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
let ven: VtnClient;
beforeAll(async () => {
  ({ t, bl, ven } = await startVtnApp({}));
});
afterAll(() => t?.close());

describe.each(SURFACES)('VEN rename on $name', (s) => {
  it('lets a VEN client rename the VEN bound to it, keeping its targets', async () => {
    const bound = s.name === '3.1.0' ? { objectType: 'BL_VEN_REQUEST', clientID: ven.clientId, targets: ['GROUP:g'] } : { clientID: ven.clientId, targets: [{ type: 'GROUP', values: ['g'] }] };
    const created = await expectStatus(t.api.post(`${s.base}/vens`, { venName: `before-${s.name}`, ...bound }, bl.token), 201);
    // A VEN client's null targets read as absent: kept.
    const rename = s.name === '3.1.0' ? { objectType: 'VEN_VEN_REQUEST', venName: `after-${s.name}`, attributes: null } : { venName: `after-${s.name}`, targets: null };
    const renamed = await expectStatus(t.api.put(`${s.base}/vens/${created.id}`, rename, ven.token), 200);
    expect(renamed.venName).toBe(`after-${s.name}`);
    expect(renamed.targets).toEqual(created.targets);
  });
});
