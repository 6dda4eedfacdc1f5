// Regression: a VEN client could create a VEN under any unused name (another VEN's that had not
// registered yet, or a deleted VEN's) and then read the events targeted at `VEN_NAME: <that name>`.
// A name is a VEN_NAME target only when business logic created, renamed or confirmed the VEN under
// it (src/vtn/visibility.ts); a VEN client's own create grants nothing and its rename ends the grant.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blVen, SURFACES } from '../support/openAdrClients.ts';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startVtnApp, VEN_SCOPES, vtnClient, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
let victim: VtnClient;
let attacker: VtnClient;
beforeAll(async () => {
  ({ t, bl, ven: victim } = await startVtnApp({}));
  attacker = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
});
afterAll(() => t?.close());

describe.each(SURFACES)('VEN names on $name', (s) => {
  const ids = async (token: string) => (await expectStatus(t.api.get(`${s.base}/events`, token), 200)).map((e: any) => e.eventName);
  const venRequest = (venName: string) => (s.name === '3.1.0' ? { objectType: 'VEN_VEN_REQUEST', venName } : { venName });

  it('gives no client the events of a name it registered, took over after a deletion or renamed to', async () => {
    const program = await expectStatus(t.api.post(`${s.base}/programs`, { programName: `names-${s.name}` }, bl.token), 201);
    const forName = (name: string) => expectStatus(t.api.post(`${s.base}/events`, { programID: program.id, eventName: name, targets: s.targets(`VEN_NAME:${name}`), intervals: [] }, bl.token), 201);
    const future = `future-${s.name}`;
    const gone = `gone-${s.name}`;
    const renamedTo = `renamed-${s.name}`;
    await forName(future);
    await forName(gone);
    await forName(renamedTo);

    // A name provisioned out of band, before its VEN registered.
    const squat = await expectStatus(t.api.post(`${s.base}/vens`, venRequest(future), attacker.token), 201);
    expect(await ids(attacker.token)).toEqual([]);
    // A deleted VEN's name.
    const old = await blVen(t.api, s, bl, victim, gone);
    expect(await ids(victim.token)).toEqual([gone]);
    await expectStatus(t.api.delete(`${s.base}/vens/${old.id}`, bl.token), 200);
    await expectStatus(t.api.post(`${s.base}/vens`, venRequest(gone), attacker.token), 201);
    expect(await ids(attacker.token)).toEqual([]);
    // A rename.
    await expectStatus(t.api.put(`${s.base}/vens/${squat.id}`, venRequest(renamedTo), attacker.token), 200);
    expect(await ids(attacker.token)).toEqual([]);
    // Business logic confirming the name grants it.
    const confirm = s.name === '3.1.0' ? { objectType: 'BL_VEN_REQUEST', venName: renamedTo, clientID: attacker.clientId } : { venName: renamedTo };
    await expectStatus(t.api.put(`${s.base}/vens/${squat.id}`, confirm, bl.token), 200);
    expect(await ids(attacker.token)).toEqual([renamedTo]);
    for (const v of await expectStatus(t.api.get(`${s.base}/vens`, bl.token), 200)) await expectStatus(t.api.delete(`${s.base}/vens/${v.id}`, bl.token), 200);
  });
});
