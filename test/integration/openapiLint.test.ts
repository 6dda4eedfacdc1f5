// The served OpenAPI document passes Redocly's lint rules (the `recommended` ruleset that
// `npx @redocly/cli lint` applies by default) with no errors, and keeps its promises:
// an oauth2 client-credentials scheme with its tokenUrl and a bearer scheme,
// `security: []` on public routes, described tags grouped by area, servers, the code tables
// referenced, a 4xx on every operation, and an example for every request body that the
// server itself would accept.
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createValidators, compile } from '../../src/http/validation.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let doc: any;

beforeAll(async () => {
  t = await startTestApp();
  const res = await t.api.get('/api/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(() => t?.close());

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));

describe('the OpenAPI document', () => {
  it('has no errors under the Redocly recommended rules, and only the license warning', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: `${t.url}/api/openapi.json`, config });
    const summary = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`);
    expect(summary.filter((s) => s.startsWith('error')), summary.join('\n')).toEqual([]);
    // The project states no license, so the document cannot; every other warning is a defect.
    expect(problems.map((p) => p.ruleId), summary.join('\n')).toEqual(['info-license']);
  });

  it('declares OAuth 2.0 client credentials with the token URL, and bearer for personal access tokens', () => {
    const schemes = doc.components.securitySchemes;
    expect(schemes.oauth2).toMatchObject({ type: 'oauth2', flows: { clientCredentials: { tokenUrl: '/oauth/token' } }, 'x-flex-audience': 'flex-api' });
    expect(Object.keys(schemes.oauth2.flows.clientCredentials.scopes)).toEqual(expect.arrayContaining(['Meter.Organization.Read', 'read_all']));
    expect(schemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.servers).toEqual([{ url: '/', description: 'This server' }]);
  });

  it('marks public routes public and names what the others need', () => {
    const byKey = new Map(operations().map((o) => [`${o.method} ${o.path}`, o.op]));
    for (const key of ['post /oauth/token', 'get /health', 'get /api/openapi.json', 'get /console', 'get /docs']) expect(byKey.get(key)?.security, key).toEqual([]);
    // /metrics checks its own bearer (METRICS_TOKEN or a global administrator's token).
    expect(byKey.get('get /metrics')?.security).toEqual([{ bearer: [] }]);
    expect(byKey.get('get /api/readings').security).toEqual([{ oauth2: ['Meter.Organization.Read'] }, { oauth2: ['Meter.Organization.ReadWrite'] }, { bearer: [] }]);
    expect(byKey.get('get /api/admin/organizations').security).toEqual([{ bearer: [] }]);
    expect(byKey.get('get /api/openadr/v1/events').security).toEqual([{ oauth2: ['read_all'] }, { oauth2: ['read_targets'] }, { bearer: [] }]);
  });

  it('describes every tag, groups the tags by area, and gives every operation a tag and a 4xx', () => {
    const declared = new Set(doc.tags.map((tag: any) => tag.name));
    for (const tag of doc.tags) expect(tag.description, tag.name).toBeTruthy();
    const grouped = doc['x-tagGroups'].flatMap((g: any) => g.tags);
    expect(new Set(grouped)).toEqual(declared);
    expect(doc['x-tagGroups'].map((g: any) => g.name)).toEqual(expect.arrayContaining(['Meter data', 'OpenADR VTN', 'Administration']));
    for (const { path, method, op } of operations()) {
      expect(op.tags.length, `${method} ${path}`).toBeGreaterThan(0);
      for (const tag of op.tags) expect(declared.has(tag), `${method} ${path}: ${tag}`).toBe(true);
      expect(Object.keys(op.responses).some((s) => s.startsWith('4')), `${method} ${path} has a 4xx`).toBe(true);
    }
  });

  it('refers to the code tables where codes are used', () => {
    const text = JSON.stringify(doc.paths) + JSON.stringify(doc.components.schemas);
    for (const table of ['MeterType', 'RegisterType', 'MeasurementType', 'MeasurementPrefix', 'CalculationType', 'BaselineAlgorithmType', 'ResourceType', 'RegulationType', 'ProductType', 'TimeResolution', 'ClearingStatus', 'DeliveryValidationStatus']) {
      expect(doc.components.schemas[table], table).toBeDefined();
      expect(text, table).toContain(`"$ref":"#/components/schemas/${table}"`);
    }
  });

  it('has an example for every request body, and the server accepts each example', () => {
    const validators = createValidators();
    for (const route of t.app.router.routes) {
      const def = route.def;
      if (!def.body) continue;
      const what = `${def.method} ${def.path}`;
      expect(def.bodyExample, `${what} has a bodyExample`).toBeDefined();
      const validate = route.validateBody ?? compile(validators.body, def.body, what);
      const example = structuredClone(def.bodyExample);
      expect(validate(example), `${what}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    for (const { path, method, op } of operations()) {
      if (!op.requestBody) continue;
      const media = Object.values(op.requestBody.content as Record<string, any>)[0];
      expect(media.example, `${method} ${path}`).toBeDefined();
    }
  });
});
