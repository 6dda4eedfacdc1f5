// The page of links at / pointed a browser at /metrics, which asks for METRICS_TOKEN and so
// answered 401 to everyone who followed it. Every link on the page now opens without credentials;
// the metrics are described (how to scrape them), not linked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

describe('the landing page', () => {
  it('links only pages that open without credentials, and says how to scrape the metrics', async () => {
    const page = await (await fetch(`${t.url}/`)).text();
    const links = [...page.matchAll(/href="(\/[^"]*)"/g)].map((m) => m[1]!);
    expect(links).toEqual(expect.arrayContaining(['/console', '/docs', '/api/openapi.json', '/health']));
    for (const link of links) expect([link, (await fetch(`${t.url}${link}`)).status]).toEqual([link, 200]);
    expect(page).toContain('METRICS_TOKEN');
  });
});
