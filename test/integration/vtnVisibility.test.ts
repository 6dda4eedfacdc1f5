// The reach of a VEN client as the MQTT broker reads it at delivery (src/vtn/visibility.ts):
// loaded through the read cache, served synchronously while valid, and stale as soon as a VEN
// or one of its resources changes (on this or another instance: the change feed says so).
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ReadCache } from '../../src/vtn/readCache.ts';
import { cachedReach, loadReach } from '../../src/vtn/visibility.ts';
import { blResource, blVen, SURFACES } from '../support/openAdrClients.ts';
import type { TestApp } from '../support/testApp.ts';
import { expectStatus, startVtnApp, waitFor, type VtnClient } from '../support/vtn.ts';

let t: TestApp;
let bl: VtnClient;
let ven: VtnClient;
let cache: ReadCache;
beforeAll(async () => {
  ({ t, bl, ven } = await startVtnApp({}));
  // A second reader of the same database, like another instance's broker.
  cache = new ReadCache(t.app.pool, pino({ level: 'silent' }), { ttlMs: 60_000 });
  await cache.start();
});
afterAll(async () => {
  await cache?.stop();
  await t?.close();
});

it('serves a VEN client’s reach from the cache until its VENs or resources change', async () => {
  const s = SURFACES[1]!;
  const org = ven.organizationId;
  const v = await blVen(t.api, s, bl, ven, 'reach-ven', ['GROUP:a']);
  await waitFor('the cache to listen', async () => (await loadReach(t.app.pool, cache, org, ven.clientId), cachedReach(cache, org, ven.clientId)));
  const first = cachedReach(cache, org, ven.clientId)!;
  expect([...first.vens.keys()]).toEqual([v.id]);
  expect([...first.keys].sort()).toEqual(['GROUP\u001fa', 'VEN_NAME\u001freach-ven']);
  expect(cachedReach(cache, org, 'someone-else')).toBeUndefined();

  await blResource(t.api, s, bl, v.id, 'battery', ['GROUP:b']);
  await waitFor('the change to reach the cache', () => cachedReach(cache, org, ven.clientId) === undefined);
  const second = await loadReach(t.app.pool, cache, org, ven.clientId);
  expect([...second.vens.get(v.id)!].sort()).toEqual(['GROUP\u001fa', 'GROUP\u001fb', 'VEN_NAME\u001freach-ven']);

  await expectStatus(t.api.put(`${s.base}/vens/${v.id}`, { objectType: 'VEN_VEN_REQUEST', venName: 'renamed-by-itself' }, ven.token), 200);
  const third = await waitFor('the rename', async () => {
    const reach = await loadReach(t.app.pool, cache, org, ven.clientId);
    return reach.keys.has('VEN_NAME\u001freach-ven') ? undefined : reach;
  });
  expect([...third.keys].sort()).toEqual(['GROUP\u001fa', 'GROUP\u001fb']);
});
