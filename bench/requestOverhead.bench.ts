// Per-request overhead of the pipeline pieces, without a socket (tinybench):
// token verification (first sight vs cached), the access check, Ajv validation,
// fast-json-stringify vs JSON.stringify, and the whole router pipeline for two routes.
//   npm run bench:overhead
import os from 'node:os';
import { Bench } from 'tinybench';
import fastJson from 'fast-json-stringify';
import { checkCredentials, checkRequestOrganization } from '../src/http/authorize.ts';
import { createValidators, compile } from '../src/http/validation.ts';
import { organizationClientInput, vtnCredentialSchema } from '../src/auth/schemas.ts';
import { arrayOf } from '../src/http/schemas.ts';
import type { RequestHead } from '../src/http/router.ts';
import type { AuthRequirement } from '../src/http/types.ts';
import { TokenSigner } from '../src/auth/tokens.ts';
import { bootApp, call, clientToken } from './support/bootApp.ts';
import { writeResults } from './support/load.ts';

const bench = await bootApp();
const { app } = bench;
const base = app.baseUrl;
const { organizationId, token } = await clientToken(base, bench.adminToken, ['OpenADR'], ['Organization.Organization.ReadWrite']);
for (let i = 0; i < 3; i += 1) await call(base, 'POST', '/api/openadr/vtn/credential', token, { organizationId, name: `ven-${i}`, scopes: ['read_all'] });
const credentials = await call(base, 'GET', `/api/openadr/vtn/credential?organizationId=${organizationId}`, token);

const key = await app.pool.query("SELECT secret FROM signing_keys WHERE id = 'default'").then((r) => new Uint8Array(r.rows[0].secret));

const router = app.router;
const me = router.routes.find((r) => r.def.path === '/api/me')!;
const list = router.routes.find((r) => r.def.path === '/api/openadr/vtn/credential' && r.def.method === 'GET')!;
const head = (path: string, rawQuery = ''): RequestHead => ({
  method: 'GET',
  path,
  rawQuery,
  headers: { authorization: `Bearer ${token}`, host: 'x', accept: '*/*' },
  rawParams: [],
  remoteAddress: '127.0.0.1',
  requestId: 'bench',
});
const signer = new TokenSigner(key, 'default', 'flex', 86400);

const authenticate = (router as unknown as { deps: { authenticate: (h: string) => Promise<never> } }).deps.authenticate;
const who = await authenticate(`Bearer ${token}`);
const validators = createValidators();
const validateInput = compile(validators.body, organizationClientInput, 'bench');
const serialize = fastJson(arrayOf(vtnCredentialSchema) as never);
const body = { clientName: 'meter gateway', rolesIds: [1, 2, 3] };
const need: AuthRequirement = { permission: 'Organization.Organization.ReadWrite', feature: 'OpenADR', organization: { in: 'query', name: 'organizationId' } };
const fakeReq = { query: { organizationId }, params: {}, body: undefined } as never;

const b = new Bench({ time: 1500, warmupTime: 300 });
b.add('JWT verification, jose HS256 (token first seen)', async () => {
  await signer.verify(token, ['flex-api']);
})
  .add('authenticate (cached token)', async () => {
    await authenticate(`Bearer ${token}`);
  })
  .add('access check (permission + feature + organization)', () => {
    checkCredentials(who, need);
    checkRequestOrganization(who, need, fakeReq);
  })
  .add('Ajv validate client input', () => {
    validateInput(structuredClone(body));
  })
  .add('fast-json-stringify credential list', () => {
    serialize(credentials);
  })
  .add('JSON.stringify credential list', () => {
    JSON.stringify(credentials);
  })
  .add('router pipeline GET /api/me (no socket)', async () => {
    await router.dispatch(me, head('/api/me'));
  })
  .add('router pipeline GET vtn credential list (1 query)', async () => {
    await router.dispatch(list, head('/api/openadr/vtn/credential', `organizationId=${organizationId}`));
  });

await b.run();
const rows = b.tasks.map((t) => {
  const r = t.result as unknown as { latency: { mean: number; p99: number }; throughput: { mean: number } };
  return { task: t.name, 'mean µs': +(r.latency.mean * 1000).toFixed(2), 'p99 µs': +(r.latency.p99 * 1000).toFixed(2), 'ops/s': Math.round(r.throughput.mean) };
});
console.table(rows);
const file = writeResults('request-overhead', { date: new Date().toISOString(), machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version }, rows });
console.log(`written ${file}`);
await bench.close();
process.exit(0);
