// Domain metrics on /metrics (src/domainMetrics.ts), driven through the real API: readings
// ingested and refused by reason, batch sizes, ingest and query latency by backend and
// resolution, the periodic jobs, and the database gauges. And the Grafana dashboard in
// docs/grafana/ queries only metrics that exist here.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient } from '../support/fixtures.ts';
import { batch, createMeter, createRegister, readingsUrl, series } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let token: string;
let org: number;
let meter: { id: number; externalId: string };
let register: { id: number; externalId: string };

beforeAll(async () => {
  t = await startTestApp({ CLEARING_INTERVAL_MS: '100', VALIDATION_INTERVAL_MS: '100' });
  const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
  token = client.token;
  org = client.organizationId;
  meter = await createMeter(t.api, t.adminToken, [org]);
  register = await createRegister(t.api, t.adminToken, meter.id);
});
afterAll(() => t?.close());

async function scrape(): Promise<string> {
  const res = await t.api.get('/metrics', t.adminToken);
  expect(res.status).toBe(200);
  return res.text;
}

function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (want.every((l) => line.includes(l))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return NaN;
}

describe('domain metrics', () => {
  it('count readings ingested and batches refused by reason, with sizes and latency', async () => {
    const before = await scrape();
    const ingested = sample(before, 'flex_readings_ingested_total', { backend: 'postgres' });
    expect(ingested).toBe(0);
    expect((await t.api.post('/api/readings', batch(meter.externalId, { [register.externalId]: series('2024-01-01T00:00:00Z', 96, 900, () => 1) }), token)).status).toBe(204);
    expect((await t.api.request('POST', '/api/readings', { token, body: '{"meters": [', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await t.api.post('/api/readings', batch(meter.externalId, { nope: series('2024-01-01T00:00:00Z', 1, 900, () => 1) }), token)).status).toBe(400);
    expect((await t.api.post('/api/readings', batch(meter.externalId, { [register.externalId]: [{ timestamp: '2024-01-01T00:00:00Z', value: 1, resolution: 0 }] }), token)).status).toBe(400);
    expect((await t.api.request('POST', '/api/readings', { token, body: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(400);
    expect((await t.api.get(readingsUrl(org, [register.id], '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z', 3600), token)).status).toBe(200);
    expect((await t.api.get(readingsUrl(org, [register.id], '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z'), token)).status).toBe(200);

    const after = await scrape();
    expect(sample(after, 'flex_readings_ingested_total', { backend: 'postgres' })).toBe(96);
    for (const reason of ['malformed', 'unknown_series', 'invalid_values', 'content_type']) {
      expect(sample(after, 'flex_readings_batches_refused_total', { reason }), reason).toBe(1);
    }
    expect(sample(after, 'flex_readings_batch_size_count', { backend: 'postgres' })).toBe(1);
    expect(sample(after, 'flex_readings_batch_size_sum', { backend: 'postgres' })).toBe(96);
    expect(sample(after, 'flex_readings_ingest_duration_seconds_count', { backend: 'postgres' })).toBe(1);
    expect(sample(after, 'flex_readings_query_duration_seconds_count', { backend: 'postgres', resolution: '3600' })).toBe(1);
    expect(sample(after, 'flex_readings_query_duration_seconds_count', { backend: 'postgres', resolution: 'stored' })).toBe(1);
    expect(sample(after, 'flex_readings_query_bytes_total', { backend: 'postgres', resolution: 'stored' })).toBeGreaterThan(96 * 100);
  });

  it('report the periodic jobs and the database gauges', async () => {
    await new Promise((r) => setTimeout(r, 400));
    const text = await scrape();
    expect(sample(text, 'flex_job_runs_total', { job: 'clearing', outcome: 'ok' })).toBeGreaterThan(0);
    expect(sample(text, 'flex_job_runs_total', { job: 'delivery-validation', outcome: 'ok' })).toBeGreaterThan(0);
    expect(sample(text, 'flex_job_duration_seconds_count', { job: 'clearing' })).toBeGreaterThan(0);
    // Every job's failure series exists from its start, at zero, for alerts.
    for (const job of ['clearing', 'delivery-validation']) expect(sample(text, 'flex_job_runs_total', { job, outcome: 'failed' }), job).toBe(0);
    for (const state of ['pending', 'delivered', 'dead']) expect(sample(text, 'flex_vtn_notifications', { state })).toBe(0);
    expect(sample(text, 'flex_vtn_notification_oldest_pending_age_seconds')).toBe(0);
    expect(sample(text, 'flex_delivery_validation_backlog')).toBe(0);
  });

  it('the Grafana dashboard queries only metrics that exist', async () => {
    const dashboard = JSON.parse(fs.readFileSync('docs/grafana/flex-dashboard.json', 'utf8'));
    const exprs: string[] = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => (p.targets ?? []).map((target) => target.expr));
    expect(exprs.length).toBeGreaterThan(10);
    const text = await scrape();
    const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const queried = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:flex|http|db_pool|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1]!)));
    expect([...queried].some((m) => m.startsWith('flex_vtn'))).toBe(true);
    for (const name of queried) {
      const base = name.replace(/_(bucket|sum|count)$/, '');
      const exists = types.has(name) || (types.get(base) === 'histogram' && base !== name);
      expect(exists, `${name} is queried by the dashboard but not on /metrics`).toBe(true);
    }
    // Every domain metric is on the dashboard.
    for (const name of types.keys()) if (name.startsWith('flex_')) expect([...queried].some((q) => q.startsWith(name)), name).toBe(true);
  });
});
