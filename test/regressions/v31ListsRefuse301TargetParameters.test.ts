// Regression: OpenADR 3.1.0 clients written against 3.0.1 send `targetType`/`targetValues` and
// got 400 "not a known property" from the 3.1.0 lists. They are now understood there as on v1,
// together with 3.1's `targets`: an object having any of the targets asked for matches, on REST
// as in webhook and MQTT matching, and an object's own name counts as its PROGRAM_NAME,
// EVENT_NAME, VEN_NAME or RESOURCE_NAME target (docs/openadr-3.1.md, "Interoperability").
import { afterAll, beforeAll, expect, it } from 'vitest';
import { V31 } from '../support/openAdrClients.ts';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startVtnApp, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
beforeAll(async () => {
  ({ t, bl } = await startVtnApp({}));
});
afterAll(() => t?.close());

it('understands targetType and targetValues on 3.1.0 lists; several targets match any of them', async () => {
  const p = (programName: string, targets: string[]) => expectStatus(t.api.post(`${V31}/programs`, { programName, targets }, bl.token), 201);
  await p('north', ['GROUP:north']);
  await p('south', ['GROUP:south']);
  await p('both', ['GROUP:north', 'GROUP:south']);
  const names = async (q: string) => (await expectStatus(t.api.get(`${V31}/programs?${q}`, bl.token), 200)).map((x: any) => x.programName);
  expect(await names('targetType=GROUP&targetValues=north')).toEqual(['north', 'both']);
  expect(await names('targetType=GROUP&targetValues=north&targetValues=south')).toEqual(['north', 'south', 'both']);
  expect(await names('targets=GROUP:north&targets=GROUP:south')).toEqual(['north', 'south', 'both']);
  expect((await t.api.get(`${V31}/events?targetType=GROUP&targetValues=north`, bl.token)).status).toBe(200);
  expect((await t.api.get(`${V31}/programs?targetType=GROUP`, bl.token)).status).toBe(400);
  // Clients find a program or a VEN by name this way (python-oa3's find_program_by_name and
  // find_ven_by_name): the object's own name counts as its PROGRAM_NAME / VEN_NAME target.
  expect(await names('targetType=PROGRAM_NAME&targetValues=south')).toEqual(['south']);
  const ven = await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'BL_VEN_REQUEST', venName: 'ven-7', clientID: 'c' }, bl.token), 201);
  expect((await expectStatus(t.api.get(`${V31}/vens?targetType=VEN_NAME&targetValues=ven-7`, bl.token), 200)).map((v: any) => v.id)).toEqual([ven.id]);
});
