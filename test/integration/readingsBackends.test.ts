// The readings API end to end on every time-series backend: PostgreSQL always; QuestDB when
// QUESTDB_HTTP_URL and QUESTDB_PG_URL point at a server (reported as skipped otherwise). Every
// app gets a QuestDB table of its own (QUESTDB_TABLE), dropped at the end, so runs and other
// users of the server do not meet. No polling: a 204 means the readings are readable
// (read-your-writes), on QuestDB too.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrgClient } from '../support/fixtures.ts';
import { startFlexProcess, type FlexProcess } from '../support/flexProcess.ts';
import { batch, createMeter, createMeteredClient, createRegister, readingsUrl, series, type Ref, type Value } from '../support/meterFixtures.ts';
import { tcpRelay } from '../support/tcpRelay.ts';
import { Api, startTestApp, type TestApp } from '../support/testApp.ts';

const questdbHttp = process.env.QUESTDB_HTTP_URL;
const questdbPg = process.env.QUESTDB_PG_URL;
const hasQuestDb = Boolean(questdbHttp && questdbPg);
const tables: string[] = [];
const processes: FlexProcess[] = [];

afterAll(async () => {
  for (const p of processes) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  if (!hasQuestDb || tables.length === 0) return;
  const client = new pg.Client({ connectionString: questdbPg });
  await client.connect();
  for (const table of tables) for (const name of [table, `${table}_versions`]) await client.query(`DROP TABLE IF EXISTS ${name}`).catch(() => undefined);
  await client.end();
});

/** Environment of an app on `backend`, with a QuestDB table of its own. */
function backendEnv(backend: 'postgres' | 'questdb', httpUrl = questdbHttp): Record<string, string> {
  if (backend === 'postgres') return {};
  const table = `test_${process.pid}_${randomBytes(4).toString('hex')}`;
  tables.push(table);
  return { TIMESERIES_BACKEND: 'questdb', QUESTDB_HTTP_URL: httpUrl!, QUESTDB_PG_URL: questdbPg!, QUESTDB_TABLE: table };
}

async function questDbCount(table: string): Promise<number> {
  const client = new pg.Client({ connectionString: questdbPg });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT count() AS n FROM ${table}`);
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}

/** A body of registers × perRegister 15-minute readings, built by hand (faster than JSON.stringify). */
function bigBody(meter: string, registers: string[], perRegister: number, start: number, value = (i: number) => (i % 1000) / 10): string {
  const parts = registers.map((r) => {
    const values: string[] = [];
    for (let i = 0; i < perRegister; i += 1) values.push(`{"timestamp":"${new Date(start + i * 900_000).toISOString()}","value":${value(i)},"resolution":900}`);
    return `{"id":"${r}","values":[${values.join(',')}]}`;
  });
  return `{"meters":[{"id":"${meter}","registers":[${parts.join(',')}]}]}`;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function readingsSuite(backend: 'postgres' | 'questdb') {
  describe(`readings on ${backend}`, () => {
    let t: TestApp;
    let env: Record<string, string>;
    let token: string;
    let org: number;
    let meter: Ref;
    let energy: Ref;
    let power: Ref;
    let values: Value[];

    beforeAll(async () => {
      env = backendEnv(backend);
      t = await startTestApp({ ...env, READINGS_MAX_POINTS: '2000', RATE_LIMIT_READINGS_PER_SECOND: '1000', RATE_LIMIT_READINGS_PER_MINUTE: '100000' });
      ({ token, organizationId: org, meter, energy, power } = await createMeteredClient(t.api, t.adminToken, ['Meter.Organization.ReadWrite', 'Meter.Organization.Read'], 'Europe/Amsterdam'));
      // 15-minute readings from 2023-03-25T12:00Z for 60 hours; Amsterdam moves to summer time on
      // 2023-03-26 at 01:00Z.
      values = series('2023-03-25T12:00:00Z', 240, 900, (i) => 1 + (i % 7) + (i % 3) / 4);
    }, 60_000);
    afterAll(() => t?.close());

    const get = async (url: string) => {
      const res = await t.api.get(url, token);
      expect(res.status, res.text).toBe(200);
      return res.body as { registerId: number; readings: { timestamp: string; periodTo: string; value: number; resolution: number; updatedAt: string }[] }[];
    };
    const within = (from: string, to: string) => values.filter((v) => Date.parse(v.timestamp) >= Date.parse(from) && Date.parse(v.timestamp) < Date.parse(to)).map((v) => v.value);

    it('stores a batch and answers it right after the 204, as sent', async () => {
      const res = await t.api.post('/api/readings', batch(meter.externalId, { [energy.externalId]: values, [power.externalId]: values }), token);
      expect(res.status, res.text).toBe(204);
      const [e, p] = await get(readingsUrl(org, [energy.id, power.id], '2023-03-25T00:00:00Z', '2023-03-28T00:00:00Z'));
      expect(e!.readings.map((r) => [r.timestamp, r.value, r.resolution])).toEqual(values.map((v) => [new Date(v.timestamp).toISOString(), v.value, 900]));
      expect(p!.readings).toHaveLength(240);
      expect(e!.readings[0]!.periodTo).toBe('2023-03-25T12:15:00.000Z');
    });

    it('stores nothing of a batch with one bad value or one unknown register', async () => {
      const good = series('2023-04-01T00:00:00Z', 8, 900, (i) => i);
      const bad = [...good.slice(0, 4), { ...good[4]!, value: 'x' as unknown as number }, ...good.slice(5)];
      const refusedValue = await t.api.post('/api/readings', batch(meter.externalId, { [energy.externalId]: good, [power.externalId]: bad }), token);
      expect(refusedValue.status).toBe(400);
      const refusedRegister = await t.api.post('/api/readings', batch(meter.externalId, { [energy.externalId]: good, 'no-such-register': good }), token);
      expect(refusedRegister.status).toBeGreaterThanOrEqual(400);
      expect(refusedRegister.status).toBeLessThan(500);
      const answer = await get(readingsUrl(org, [energy.id, power.id], '2023-04-01T00:00:00Z', '2023-04-02T00:00:00Z'));
      expect(answer.flatMap((s) => s.readings)).toEqual([]);
    });

    it('replaces corrected values and moves their updatedAt', async () => {
      const url = readingsUrl(org, [energy.id], '2023-03-25T12:00:00Z', '2023-03-25T13:00:00Z');
      const before = (await get(url))[0]!.readings;
      await new Promise((r) => setTimeout(r, 5));
      const corrected = values.slice(1, 3).map((v) => ({ ...v, value: v.value + 100 }));
      const res = await t.api.post('/api/readings', batch(meter.externalId, { [energy.externalId]: corrected }), token);
      expect(res.status).toBe(204);
      const after = (await get(url))[0]!.readings;
      expect(after.map((r) => r.value)).toEqual([values[0]!.value, values[1]!.value + 100, values[2]!.value + 100, values[3]!.value]);
      expect(Date.parse(after[1]!.updatedAt)).toBeGreaterThan(Date.parse(before[1]!.updatedAt));
      expect(after[0]!.updatedAt).toBe(before[0]!.updatedAt);
      // Back as it was, for the sums below.
      expect((await t.api.post('/api/readings', batch(meter.externalId, { [energy.externalId]: values.slice(1, 3) }), token)).status).toBe(204);
    });

    it('sums energy into hours and averages power into hours', async () => {
      const [e, p] = await get(readingsUrl(org, [energy.id, power.id], '2023-03-25T12:00:00Z', '2023-03-25T15:00:00Z', 3600));
      const hours = ['2023-03-25T12:00:00Z', '2023-03-25T13:00:00Z', '2023-03-25T14:00:00Z', '2023-03-25T15:00:00Z'];
      const expected = hours.slice(0, 3).map((h, k) => within(h, hours[k + 1]!));
      expect(e!.readings.map((r) => r.value)).toEqual(expected.map(sum));
      expect(p!.readings.map((r) => r.value)).toEqual(expected.map((xs) => sum(xs) / xs.length));
      expect(e!.readings.every((r) => r.resolution === 3600)).toBe(true);
    });

    it('answers hourly averages', async () => {
      const res = await t.api.get(readingsUrl(org, [energy.id], '2023-03-25T12:00:00Z', '2023-03-25T14:00:00Z').replace('/api/readings?', '/api/readings/average/hourly?'), token);
      expect(res.status, res.text).toBe(200);
      const readings = res.body[0].readings as { timestamp: string; value: number }[];
      expect(readings.map((r) => r.timestamp)).toEqual(['2023-03-25T12:00:00.000Z', '2023-03-25T13:00:00.000Z']);
      expect(readings[0]!.value).toBeCloseTo(sum(within('2023-03-25T12:00:00Z', '2023-03-25T13:00:00Z')) / 4, 9);
    });

    it('sums local days, the 23-hour DST day included', async () => {
      const [e] = await get(readingsUrl(org, [energy.id], '2023-03-25T12:00:00Z', '2023-03-28T00:00:00Z', 86400));
      const days = [
        ['2023-03-24T23:00:00.000Z', '2023-03-25T23:00:00.000Z'],
        ['2023-03-25T23:00:00.000Z', '2023-03-26T22:00:00.000Z'],
        ['2023-03-26T22:00:00.000Z', '2023-03-27T22:00:00.000Z'],
        ['2023-03-27T22:00:00.000Z', '2023-03-28T22:00:00.000Z'],
      ];
      expect(e!.readings.map((r) => [r.timestamp, r.periodTo])).toEqual(days);
      expect(e!.readings.map((r) => r.value)).toEqual(days.map(([from, to]) => sum(within(from!, to!))));
    });

    it('computes a virtual register from stored readings', async () => {
      const v = await createRegister(t.api, t.adminToken, meter.id, {
        isVirtual: true,
        measurementType: 1,
        virtualDefinition: { calculationType: 1, expression: 'r0 - 0.5 * r1', sourceRegisters: [energy.id, power.id] },
      });
      const [answer] = await get(readingsUrl(org, [v.id], '2023-03-25T12:00:00Z', '2023-03-25T13:00:00Z'));
      expect(answer!.readings.map((r) => r.value)).toEqual(values.slice(0, 4).map((x) => x.value - 0.5 * x.value));
    });

    it('computes a previous-day baseline and a running total from stored readings', async () => {
      const baseline = await createRegister(t.api, t.adminToken, meter.id, { isVirtual: true, virtualDefinition: { calculationType: 3, baselineAlgorithmType: 2, sourceRegisters: [energy.id] } });
      const [b] = await get(readingsUrl(org, [baseline.id], '2023-03-26T12:00:00Z', '2023-03-26T13:00:00Z'));
      expect(b!.readings.map((r) => r.value)).toEqual(values.slice(0, 4).map((x) => x.value));
      const total = await createRegister(t.api, t.adminToken, meter.id, {
        isVirtual: true,
        virtualDefinition: { calculationType: 1, expression: 'r0', sourceRegisters: [energy.id], sumPreviousValues: true, timeOfDay: '13:00:00', timeZone: 'UTC' },
      });
      const [r] = await get(readingsUrl(org, [total.id], '2023-03-25T12:30:00Z', '2023-03-25T13:30:00Z'));
      const v = values.map((x) => x.value);
      expect(r!.readings.map((x) => x.value)).toEqual([v[0]! + v[1]! + v[2]!, v[0]! + v[1]! + v[2]! + v[3]!, v[4]!, v[4]! + v[5]!]);
    });

    it('refuses an answer of more points than allowed', async () => {
      const many = series('2023-05-01T00:00:00Z', 2001, 900, (i) => i);
      expect((await t.api.post('/api/readings', batch(meter.externalId, { [power.externalId]: many }), token)).status).toBe(204);
      const tooMany = await t.api.get(readingsUrl(org, [power.id], '2023-05-01T00:00:00Z', '2023-06-01T00:00:00Z'), token);
      expect(tooMany.status).toBe(400);
    });

    it('deletes a register’s readings without losing writes of others made meanwhile', async () => {
      const doomed = await createRegister(t.api, t.adminToken, meter.id);
      const kept = await createRegister(t.api, t.adminToken, meter.id);
      expect((await t.api.post('/api/readings', batch(meter.externalId, { [doomed.externalId]: values }), token)).status).toBe(204);
      // Writes of `kept`, one hour each, while the register is deleted.
      let hour = 0;
      let deleting = true;
      const writer = (async () => {
        while (deleting || hour < 3) {
          const res = await t.api.post('/api/readings', batch(meter.externalId, { [kept.externalId]: series(new Date(Date.UTC(2023, 5, 1, hour)).toISOString(), 4, 900, (i) => hour * 4 + i) }), token);
          expect(res.status).toBe(204);
          hour += 1;
        }
      })();
      const removed = await t.api.delete(`/api/admin/registers/${doomed.id}`, t.adminToken);
      deleting = false;
      await writer;
      expect(removed.status).toBe(204);
      expect(await t.app.timeSeries.hasReadings(doomed.id)).toBe(false);
      const [k] = await get(readingsUrl(org, [kept.id], '2023-06-01T00:00:00Z', '2023-06-02T00:00:00Z'));
      expect(k!.readings.map((r) => r.value)).toEqual(Array.from({ length: hour * 4 }, (_, i) => i));
    });
  });
}

readingsSuite('postgres');
describe.skipIf(!hasQuestDb)('QuestDB (set QUESTDB_HTTP_URL and QUESTDB_PG_URL to run; no QuestDB server here)', () => {
  readingsSuite('questdb');

  it('runs the orphan replay and the purge with the platform’s periodic jobs', async () => {
    const t = await startTestApp({ ...backendEnv('questdb'), QUESTDB_PURGE_INTERVAL_MS: '1000' });
    try {
      // Both run once at start, then every minute (replay) and every QUESTDB_PURGE_INTERVAL_MS.
      const ran = (text: string, job: string) => new RegExp(`flex_job_runs_total\\{job="${job}",outcome="ok"\\} [1-9]`).test(text);
      let text = '';
      for (let i = 0; i < 100 && !(ran(text, 'questdb-replay') && ran(text, 'questdb-purge')); i += 1) {
        if (i > 0) await new Promise((r) => setTimeout(r, 100));
        text = (await t.api.get('/metrics', t.adminToken)).text;
      }
      expect(ran(text, 'questdb-replay'), text).toBe(true);
      expect(ran(text, 'questdb-purge'), text).toBe(true);
    } finally {
      await t.close();
    }
  }, 60_000);

  it('completes a batch whose connections QuestDB drops mid-request (restart), exactly once', async () => {
    const cable = await tcpRelay(new URL(questdbHttp!), 80);
    const env = backendEnv('questdb', cable.url);
    const t = await startTestApp({ ...env, RATE_LIMIT_READINGS_PER_SECOND: '100' });
    try {
      const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.ReadWrite'] });
      const m = await createMeter(t.api, t.adminToken, [client.organizationId]);
      const registers = await Promise.all(Array.from({ length: 10 }, () => createRegister(t.api, t.adminToken, m.id)));
      const body = bigBody(m.externalId, registers.map((r) => r.externalId), 30_000, Date.UTC(2024, 0, 1));
      const watcher = new pg.Client({ connectionString: questdbPg });
      await watcher.connect();
      const txn = async () => Number((await watcher.query(`SELECT sequencerTxn FROM wal_tables() WHERE name = '${env.QUESTDB_TABLE}'`)).rows[0]?.sequencerTxn ?? 0);
      const before = await txn();
      let done = false;
      const posting = t.api.request('POST', '/api/readings', { token: client.token, body, headers: { 'content-type': 'application/json' } }).finally(() => (done = true));
      // Cut once the first of the 3 chunks is committed, while the others are on their way.
      while (!done && (await txn()) === before);
      cable.cut(1500);
      await watcher.end();
      const res = await posting;
      expect(res.status, res.text).toBe(204);
      expect(await questDbCount(env.QUESTDB_TABLE!)).toBe(300_000);
    } finally {
      await t.close();
      cable.close();
    }
  }, 180_000);

  it('leaves all or none of a batch after a SIGKILL mid-request and a restart', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-kill-q-'));
    fs.chmodSync(dataDir, 0o755);
    const admin = `flex_pat_kill_${'q'.repeat(32)}`;
    const env = backendEnv('questdb');
    const table = env.QUESTDB_TABLE!;
    try {
      const first = await startFlexProcess({ ...env, DATA_DIR: dataDir, ADMIN_TOKEN: admin, RATE_LIMIT_READINGS_PER_SECOND: '100' }, 120_000);
      processes.push(first);
      const api = new Api(first.baseUrl);
      const client = await createOrgClient(api, admin, { permissions: ['Meter.Organization.ReadWrite'] });
      const m = await createMeter(api, admin, [client.organizationId]);
      const registers = await Promise.all(Array.from({ length: 20 }, () => createRegister(api, admin, m.id)));
      const body = bigBody(m.externalId, registers.map((r) => r.externalId), 20_000, Date.UTC(2024, 0, 1));
      const watcher = new pg.Client({ connectionString: questdbPg });
      await watcher.connect();
      const txn = async () => Number((await watcher.query(`SELECT sequencerTxn FROM wal_tables() WHERE name = '${table}'`)).rows[0]?.sequencerTxn ?? 0);
      const before = await txn();
      const posting = api.request('POST', '/api/readings', { token: client.token, body, headers: { 'content-type': 'application/json' } }).catch(() => undefined);
      // Kill as soon as QuestDB has committed the first chunk of the batch (4 chunks of 100,000).
      let committedAtKill = -1;
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline && first.child.exitCode === null) {
        const now = await txn();
        if (now > before) {
          first.child.kill('SIGKILL');
          committedAtKill = now - before;
          break;
        }
      }
      await posting;
      await first.exited;
      expect(committedAtKill).toBeGreaterThan(0);
      const atKill = await questDbCount(table);
      await watcher.end();

      // The next start sends the journaled batch again before it listens.
      const second = await startFlexProcess({ ...env, DATA_DIR: dataDir, ADMIN_TOKEN: admin }, 180_000);
      processes.push(second);
      const stored = await questDbCount(table);
      expect(stored, `${atKill} readings were in QuestDB at the kill (${committedAtKill} chunks)`).toBe(400_000);
      const api2 = new Api(second.baseUrl);
      const res = await api2.get(readingsUrl(client.organizationId, [registers[0]!.id], '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z', 86400 * 31), admin);
      expect(res.status).toBe(200);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 400_000);
});
