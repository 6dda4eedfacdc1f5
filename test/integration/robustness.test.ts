// Property-based fuzzing of every route of the served OpenAPI document (GET /api/openapi.json):
// requests generated from each route's own schemas, mutated with hostile values (nulls, U+0000
// and lone surrogates in strings, huge values, deep nesting, bad dates and durations), raw
// bodies, wrong content types and bad path parameters, sent with no token, a broken one, the
// administrator's, an organization client's and VTN business-logic and VEN clients' tokens (so
// that handlers run past authorization). For every request: never a 5xx, no database internals in
// a problem document, and a refused request (4xx) changes nothing (a checksum of every table,
// compared before and after). Afterwards the server still answers, and every stored object stays
// readable and deletable.
//
// Bounded for CI: FUZZ_RUNS_PER_ROUTE requests per route (default 12) and a time limit per route.
// On failure fast-check prints the seed and path; replay with FUZZ_SEED=<seed> (and the same
// FUZZ_RUNS_PER_ROUTE). Requests go to 127.0.0.1 only; webhooks to private addresses are refused.
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient, createOrganization } from '../support/fixtures.ts';
import { createMeter, createRegister } from '../support/meterFixtures.ts';
import { DATABASE_WORDS } from '../support/problems.ts';
import { CONTENT_TYPES, encodeComponent, HOSTILE_PARAMS, HOSTILE_VALUES, mutated, RAW_BODIES, valueFor, type IdPools, type OpenApi } from '../support/requestArbitraries.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, VTN, vtnClient } from '../support/vtn.ts';

const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS_PER_ROUTE ?? 12);
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const ALL_PERMISSIONS = [
  'Order.Organization.ReadWrite',
  'Meter.Organization.ReadWrite',
  'Resource.Organization.ReadWrite',
  'Planning.Organization.ReadWrite',
  'Organization.Organization.ReadWrite',
];

let t: TestApp;
let db: pg.Client;
let doc: OpenApi;
let tokens: Record<string, string | undefined>;
const pools: IdPools = { ints: [], protectedInts: new Set(), strings: [] };

/** One checksum per table (partitions through their parent), in one round trip. */
let checksumSql = '';
let checksumMs = 0;
async function databaseState(): Promise<Map<string, string>> {
  const started = performance.now();
  const { rows } = await db.query<{ name: string; sum: string }>(checksumSql);
  checksumMs += performance.now() - started;
  return new Map(rows.map((r) => [r.name, r.sum]));
}

beforeAll(async () => {
  // No background writers, so that any change is the request's: no webhook dispatcher, no
  // clearing or validation runs during the test.
  t = await startTestApp({
    VTN_DISPATCHER: 'false',
    CLEARING_INTERVAL_MS: '3600000',
    VALIDATION_INTERVAL_MS: '3600000',
    RATE_LIMIT_TOKEN_PER_MINUTE: '100000',
    RATE_LIMIT_TOKEN_UNKNOWN_PER_MINUTE: '100000',
    RATE_LIMIT_READINGS_PER_SECOND: '100000',
    RATE_LIMIT_READINGS_PER_MINUTE: '100000',
  });
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> 'schema_migrations' ORDER BY 1`,
  );
  // Order-independent (no sort): the row count and the sum of 64-bit hashes of the rows' text.
  checksumSql = rows.map((r) => `SELECT '${r.name}' AS name, count(*) || ':' || coalesce(sum(hashtextextended(x.t::text, 0)), 0) AS sum FROM ${r.name} x(t)`).join(' UNION ALL ');

  // The fuzzer's own identities: an organization with every feature, a client with every
  // permission, VTN business-logic and VEN clients. Their ids are never written to by the fuzz.
  const client = await createOrgClient(t.api, t.adminToken, { features: ['Grid', 'DecisionSupport', 'ResourceManagement', 'Settlements', 'OpenADR'], permissions: ALL_PERMISSIONS });
  const bl = await vtnClient(t.api, t.adminToken, BL_SCOPES, client.organizationId);
  const ven = await vtnClient(t.api, t.adminToken, ['read_all', 'write_reports', 'write_subscriptions', 'write_vens'], client.organizationId);
  tokens = { none: undefined, broken: 'flex_pat_not-a-real-token-000000000000000000', jwt: 'eyJhbGciOiJIUzI1NiJ9.e30.x', admin: t.adminToken, client: client.token, bl: bl.token, ven: ven.token };
  for (const id of [client.organizationId, client.roleId, client.id]) pools.protectedInts.add(id);
  const credentials = await t.api.get(`/api/openadr/vtn/credential?organizationId=${client.organizationId}`, t.adminToken);
  for (const c of credentials.body) pools.protectedInts.add(c.id);
  pools.protectedInts.add(1); // the bootstrap administrator

  // Objects for requests to name: another organization with a meter and a register, VTN objects.
  const other = await createOrganization(t.api, t.adminToken, ['Grid', 'OpenADR']);
  const meter = await createMeter(t.api, t.adminToken, [client.organizationId, other]);
  await createRegister(t.api, t.adminToken, meter.id);
  const program = await expectStatus(t.api.post(`${VTN}/programs`, { programName: 'fuzz' }, bl.token), 201);
  const event = await expectStatus(t.api.post(`${VTN}/events`, { programID: program.id, intervals: [] }, bl.token), 201);
  const v = await expectStatus(t.api.post(`${VTN}/vens`, { venName: 'fuzz-ven', clientID: ven.clientId }, bl.token), 201);
  const resource = await expectStatus(t.api.post(`${VTN}/vens/${v.id}/resources`, { resourceName: 'fuzz-resource' }, bl.token), 201);
  pools.strings.push(program.id, event.id, v.id, resource.id);
  pools.ints.push(...Array.from({ length: 40 }, (_, i) => i + 1), 2147483647);

  doc = (await t.api.get('/api/openapi.json')).body as OpenApi;
}, 120_000);

afterAll(async () => {
  await db?.end();
  await t?.close();
});

interface Operation {
  method: string;
  path: string;
  op: Record<string, any>;
}

function operations(): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, op })));
}

interface Generated {
  path: string;
  query: string;
  token: string;
  body: string | undefined;
  contentType: string | undefined;
}

/** Requests to one operation of the OpenAPI document. */
function requestsFor({ method, path, op }: Operation): fc.Arbitrary<Generated> {
  const params = (op.parameters ?? []) as { name: string; in: 'path' | 'query'; required: boolean; schema: Record<string, any> }[];
  const writes = method !== 'GET';
  const ints = pools.ints.filter((i) => !writes || !pools.protectedInts.has(i));
  const local: IdPools = { ...pools, ints };
  const pathParam = (p: (typeof params)[number]) =>
    fc.oneof(
      { weight: 8, arbitrary: valueFor(p.schema, doc, local, p.name).map((v) => encodeComponent(String(v))) },
      { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_PARAMS) },
    );
  const queryParam = (p: (typeof params)[number]) =>
    fc.oneof(
      { weight: 10, arbitrary: valueFor(p.schema, doc, local, p.name).map((v) => (Array.isArray(v) ? v.map((x) => `${p.name}=${encodeComponent(String(x))}`).join('&') : `${p.name}=${encodeComponent(typeof v === 'string' ? v : JSON.stringify(v))}`)) },
      { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_PARAMS).map((v) => `${p.name}=${v}`) },
      { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_VALUES.filter((v) => typeof v === 'string' && v.length < 1000)).map((v) => `${p.name}=${encodeComponent(v as string)}`) },
    );
  const pathArb = fc.tuple(...params.filter((p) => p.in === 'path').map(pathParam)).map((values) => {
    let i = 0;
    return path.replace(/\{[^}]+\}/g, () => values[i++] as string);
  });
  const queryParams = params.filter((p) => p.in === 'query');
  const queryArb = fc
    .tuple(
      fc.tuple(...queryParams.map((p) => (p.required ? fc.option(queryParam(p), { freq: 8 }) : fc.option(queryParam(p), { freq: 2 })))),
      fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('unknownParam=1', 'limit=-1&limit=2', '%00=x', `q=${'z'.repeat(5000)}`) }),
    )
    .map(([values, extra]) => [...values, extra].filter((v): v is string => v !== null).join('&'));
  const content = op.requestBody?.content as Record<string, { schema: Record<string, any> }> | undefined;
  const mediaType = content ? Object.keys(content)[0]! : undefined;
  const schema = mediaType ? content![mediaType]!.schema : undefined;
  const encode = (value: unknown) => (mediaType === 'application/x-www-form-urlencoded' && value && typeof value === 'object' ? new URLSearchParams(Object.entries(value).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString() : JSON.stringify(value));
  const bodyArb: fc.Arbitrary<{ body: string | undefined; contentType: string | undefined }> = schema
    ? fc.oneof(
        { weight: 4, arbitrary: valueFor(schema, doc, local).map((v) => ({ body: encode(v), contentType: mediaType })) },
        { weight: 4, arbitrary: mutated(valueFor(schema, doc, local)).map((v) => ({ body: encode(v), contentType: mediaType })) },
        { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES).map((body) => ({ body, contentType: mediaType })) },
        { weight: 1, arbitrary: fc.tuple(valueFor(schema, doc, local), fc.constantFrom(...CONTENT_TYPES)).map(([v, contentType]) => ({ body: encode(v), contentType })) },
      )
    : fc.oneof({ weight: 5, arbitrary: fc.constant({ body: undefined, contentType: undefined }) }, { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES).map((body) => ({ body, contentType: 'application/json' })) });
  // Mostly a token that may call the route, so that handlers run; sometimes any other.
  const fitting = path.startsWith('/api/admin') ? ['admin'] : path.startsWith(VTN) ? ['bl', 'bl', 'ven'] : ['client', 'admin'];
  const tokenArb = op.security
    ? fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...fitting) }, { weight: 1, arbitrary: fc.constantFrom('admin', 'client', 'bl', 'ven', 'none', 'broken', 'jwt') })
    : fc.constantFrom('none', 'admin');
  return fc.record({ path: pathArb, query: queryArb, token: tokenArb, body: bodyArb }).map(({ body, ...rest }) => ({ ...rest, ...body }));
}

async function send(method: string, request: Generated): Promise<{ status: number; text: string; contentType: string }> {
  const headers: Record<string, string> = {};
  const token = tokens[request.token];
  if (token) headers.authorization = `Bearer ${token}`;
  if (request.contentType) headers['content-type'] = request.contentType;
  const url = `${t.url}${request.path}${request.query ? `?${request.query}` : ''}`;
  const res = await fetch(url, { method, headers, body: method === 'GET' || method === 'HEAD' ? undefined : request.body });
  return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') ?? '' };
}

describe('fuzzing every route of the OpenAPI document', () => {
  it(`never answers 5xx, never leaks database internals, and changes nothing when it refuses (seed ${SEED})`, async () => {
    let state = await databaseState();
    const ops = operations();
    expect(ops.length).toBeGreaterThan(50);
    let sent = 0;
    const statuses = new Map<number, number>();
    for (const [index, operation] of ops.entries()) {
      const seed = (SEED + index) % 2 ** 31;
      const details = fc.check(
        fc.asyncProperty(requestsFor(operation), async (request) => {
          sent += 1;
          const res = await send(operation.method, request);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const what = `${operation.method} ${request.path}?${request.query.slice(0, 200)} as ${request.token} (${request.contentType}): ${res.status} ${res.text.slice(0, 300)}`;
          if (res.status >= 500) throw new Error(`5xx: ${what}`);
          if (res.contentType.includes('problem+json') && DATABASE_WORDS.test(JSON.parse(res.text).detail ?? '')) throw new Error(`database internals: ${what}`);
          const after = await databaseState();
          if (res.status >= 400) {
            const changed = [...after].filter(([name, sum]) => state.get(name) !== sum).map(([name]) => name);
            if (changed.length > 0) {
              state = after;
              throw new Error(`refused with ${res.status} but changed ${changed.join(', ')}: ${what}`);
            }
          }
          state = after;
        }),
        { seed, numRuns: RUNS_PER_ROUTE, interruptAfterTimeLimit: 15_000, endOnFailure: true },
      );
      const report = await details;
      if (report.failed) {
        const error = report.errorInstance instanceof Error ? report.errorInstance.message : String(report.errorInstance);
        throw new Error(`${operation.method} ${operation.path}: ${error}\n${(fc.defaultReportMessage(report) ?? '').slice(0, 2000)}\nReplay: FUZZ_SEED=${SEED} FUZZ_RUNS_PER_ROUTE=${RUNS_PER_ROUTE} (route seed ${seed})`);
      }
    }
    expect(sent).toBeGreaterThanOrEqual(ops.length);
    console.log(`fuzz: ${sent} requests to ${ops.length} operations, seed ${SEED}; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}; ${Math.round(checksumMs)} ms in checksums`);
    expect((await fetch(`${t.url}/health`)).status).toBe(200);
  }, 300_000);

  it('leaves every stored object readable and deletable', async () => {
    const ops = operations();
    const get = (path: string, token: string) => fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const readable: string[] = [];
    // Collections with an item route: list them, read each item, then delete it.
    // The MQTT topic names are answers about a VEN, not collections of objects.
    const collections = ops.filter((o) => o.method === 'GET' && !o.path.includes('{') && !o.path.includes('/notifiers/') && ops.some((i) => i.method === 'GET' && new RegExp(`^${o.path}/\\{[^}/]+\\}$`).test(i.path)));
    expect(collections.length).toBeGreaterThan(5);
    // VTN objects in the order their references allow deleting them.
    const order = ['/reports', '/subscriptions', '/events', '/vens', '/programs'];
    collections.sort((a, b) => order.findIndex((s) => a.path.endsWith(s)) - order.findIndex((s) => b.path.endsWith(s)));
    // Both OpenADR surfaces serve the same VTN objects.
    const isVtn = (path: string) => path.startsWith(VTN) || path.startsWith('/api/openadr/3.1.0');
    for (const collection of collections) {
      const token = isVtn(collection.path) ? tokens.bl! : t.adminToken;
      const limit = isVtn(collection.path) ? 50 : 10_000;
      const list = await get(`${collection.path}?limit=${limit}`, token);
      if (list.status === 400) continue; // needs query parameters: not a plain collection
      expect(list.status, collection.path).toBe(200);
      const items = (await list.json()) as { id: number | string }[];
      const itemRoute = ops.find((i) => i.method === 'GET' && new RegExp(`^${collection.path}/\\{[^}/]+\\}$`).test(i.path))!;
      const deletable = ops.some((i) => i.method === 'DELETE' && i.path === itemRoute.path);
      for (const item of Array.isArray(items) ? items : []) {
        const path = itemRoute.path.replace(/\{[^}]+\}/, encodeURIComponent(String(item.id)));
        const one = await get(path, token);
        expect(one.status, `${path}: ${await one.clone().text()}`).toBe(200);
        readable.push(path);
        if (!deletable || pools.protectedInts.has(Number(item.id))) continue;
        // Only VENs write reports (3.0.1: DELETE /reports/{id} needs write_reports); the fuzzer's
        // reports are the VEN client's.
        const deleter = isVtn(collection.path) && collection.path.endsWith('/reports') ? tokens.ven! : token;
        const deleted = await fetch(`${t.url}${path}`, { method: 'DELETE', headers: { authorization: `Bearer ${deleter}` } });
        // 409: still used by other objects, which is an answer, not a failure to delete.
        expect([200, 204, 409], `DELETE ${path}: ${await deleted.text()}`).toContain(deleted.status);
        if (isVtn(collection.path)) expect(deleted.status, `DELETE ${path}`).toBe(200);
      }
    }
    expect(readable.length).toBeGreaterThan(10);
  }, 120_000);
});
