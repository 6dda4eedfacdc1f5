// Large batches: the server keeps answering other requests while a 1M-reading POST is parsed,
// validated and written, and a SIGKILL in the middle of a large POST leaves all or none of it.
// How fast /health answers meanwhile is a figure of `npm run bench:ingest`, not an assertion here
// (no timing assertions in tests: a shared CI machine makes them flaky).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createOrgClient } from '../support/fixtures.ts';
import { createMeter, createRegister, readingsUrl } from '../support/meterFixtures.ts';
import { startFlexProcess, type FlexProcess } from '../support/flexProcess.ts';
import { Api, startTestApp } from '../support/testApp.ts';

/** A body of registers × perRegister 15-minute readings, as one JSON string built by hand. */
function bigBody(meter: string, registers: string[], perRegister: number, start = Date.UTC(2024, 0, 1)): string {
  const parts: string[] = [];
  for (const r of registers) {
    const values: string[] = [];
    for (let i = 0; i < perRegister; i += 1) values.push(`{"timestamp":"${new Date(start + i * 900_000).toISOString()}","value":${(i % 1000) / 10},"resolution":900}`);
    parts.push(`{"id":"${r}","values":[${values.join(',')}]}`);
  }
  return `{"meters":[{"id":"${meter}","registers":[${parts.join(',')}]}]}`;
}

const processes: FlexProcess[] = [];
afterAll(() => {
  for (const p of processes) if (p.child.exitCode === null) p.child.kill('SIGKILL');
});

describe('a 1M-reading POST', () => {
  it('is stored while GET /health keeps answering, again and again, before the 204', async () => {
    const t = await startTestApp({ LOG_LEVEL: 'error' });
    try {
      const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
      const meter = await createMeter(t.api, t.adminToken, [client.organizationId]);
      const registers = await Promise.all(Array.from({ length: 100 }, () => createRegister(t.api, t.adminToken, meter.id)));
      const body = bigBody(meter.externalId, registers.map((r) => r.externalId), 10_000);
      let done = false;
      const posting = t.api.request('POST', '/api/readings', { token: client.token, body, headers: { 'content-type': 'application/json' } }).finally(() => {
        done = true;
      });
      // Health checks one after another while the POST runs: a main thread held by the batch
      // would answer at most one of them before the 204.
      let answeredDuringPost = 0;
      while (!done) {
        const health = await fetch(`${t.url}/health`);
        await health.arrayBuffer();
        expect(health.status).toBe(200);
        if (!done) answeredDuringPost += 1;
        await new Promise((r) => setTimeout(r, 25));
      }
      const res = await posting;
      expect(res.status).toBe(204);
      expect(answeredDuringPost).toBeGreaterThan(3);
      const { rows } = await t.app.pool.query('SELECT coalesce(sum(n), 0)::int AS n FROM reading_blocks WHERE register_id = ANY($1::int[])', [registers.map((r) => r.id)]);
      expect(rows[0].n).toBe(1_000_000);
    } finally {
      await t.close();
    }
  }, 180_000);
});

describe('SIGKILL in the middle of a large POST', () => {
  it('leaves all or none of the batch after a restart', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-kill-'));
    fs.chmodSync(dataDir, 0o755);
    const admin = `flex_pat_kill_${'k'.repeat(32)}`;
    try {
      const first = await startFlexProcess({ DATA_DIR: dataDir, ADMIN_TOKEN: admin, RATE_LIMIT_READINGS_PER_SECOND: '100' }, 120_000);
      processes.push(first);
      const api = new Api(first.baseUrl);
      const client = await createOrgClient(api, admin, { permissions: ['Meter.Organization.ReadWrite'] });
      const meter = await createMeter(api, admin, [client.organizationId]);
      const registers = await Promise.all(Array.from({ length: 20 }, () => createRegister(api, admin, meter.id)));
      const body = bigBody(meter.externalId, registers.map((r) => r.externalId), 20_000);

      // Watch the embedded server for the COPY of this batch and kill the app while it runs.
      const pgPort = Number(fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3]);
      const password = fs.readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim();
      const watcher = new pg.Client({ connectionString: `postgres://flex:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/flex` });
      await watcher.connect();
      const posting = api.request('POST', '/api/readings', { token: client.token, body, headers: { 'content-type': 'application/json' } }).catch(() => undefined);
      let killedDuringCopy = false;
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline && first.child.exitCode === null) {
        const { rows } = await watcher.query("SELECT 1 FROM pg_stat_activity WHERE query LIKE 'COPY reading_blocks%' AND state = 'active'");
        if (rows.length > 0) {
          first.child.kill('SIGKILL');
          killedDuringCopy = true;
          break;
        }
      }
      await watcher.end();
      await posting;
      await first.exited;
      expect(killedDuringCopy).toBe(true);

      // The orphaned PostgreSQL is stopped and started again by the next app.
      const second = await startFlexProcess({ DATA_DIR: dataDir, ADMIN_TOKEN: admin }, 120_000);
      processes.push(second);
      const api2 = new Api(second.baseUrl);
      const res = await api2.get(readingsUrl(client.organizationId, registers.map((r) => r.id), '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z', 86400 * 31), admin);
      expect(res.status).toBe(200);
      const stored = res.body.reduce((n: number, r: { readings: unknown[] }) => n + r.readings.length, 0);
      // Monthly buckets hold either every reading of the batch or none of them.
      const counted = await new pg.Client({ connectionString: `postgres://flex:${encodeURIComponent(password)}@127.0.0.1:${Number(fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3])}/flex` });
      await counted.connect();
      const { rows } = await counted.query('SELECT coalesce(sum(n), 0)::int AS n FROM reading_blocks');
      await counted.end();
      expect([0, 400_000]).toContain(rows[0].n);
      expect(stored === 0).toBe(rows[0].n === 0);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
