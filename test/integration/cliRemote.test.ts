// The command-line tools in remote mode (--url, --token) against the real server: the import
// through POST /api/readings batches paced under a tight rate limit, with per-row rejects from the
// server's 400s; the export through GET /api/readings giving the very CSV of the database export;
// and the package's bins as built into dist/ (plain node, no tsx), summary on stderr only.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, summaryValue } from '../support/cliProcess.ts';
import { createMeteredClient, createRegister, readingsUrl, type Ref } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let dir: string;
let token: string;
let org: number;
let meter: Ref;
let energy: Ref;
let power: Ref;
let virtualRegister: Ref;
let dbEnv: Record<string, string>;

const ROOT = path.resolve(import.meta.dirname, '../..');
const HEADER = 'meterId,registerId,timestamp,value,resolution';

beforeAll(async () => {
  // One POST /api/readings per second: a paced import must never fail on 429.
  t = await startTestApp({ RATE_LIMIT_READINGS_PER_SECOND: '1', RATE_LIMIT_READINGS_PER_MINUTE: '1000' });
  dbEnv = { DATABASE_URL: t.databaseUrl };
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-cli-remote-'));
  ({ token, organizationId: org, meter, energy, power } = await createMeteredClient(t.api, t.adminToken, ['Meter.Organization.ReadWrite']));
  virtualRegister = await createRegister(t.api, t.adminToken, meter.id, { isVirtual: true, virtualDefinition: { calculationType: 2, constant: 1 } });
}, 60_000);
afterAll(async () => {
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const remote = (tok = token) => ['--url', t.url, '--token', tok];
const START = Date.UTC(2024, 4, 1);
const energyValue = (i: number) => (i % 11) / 4;

describe('flex-import --url', () => {
  it('sends paced batches, rejects the rows the server refuses and stores the rest', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => `${meter.externalId},${energy.externalId},${new Date(START + i * 900_000).toISOString()},${energyValue(i)},900`);
    lines.splice(10, 0, `${meter.externalId},no-such-register,2024-05-01T00:00:00Z,1,900`);
    lines.splice(20, 0, `${meter.externalId},${energy.externalId},2024-05-01T00:00:00Z,not-a-number,900`);
    lines.splice(30, 0, `${meter.externalId},${virtualRegister.externalId},2024-05-01T00:00:00Z,1,900`);
    const file = path.join(dir, 'remote.csv');
    fs.writeFileSync(file, `${HEADER}\n${lines.join('\n')}\n`);
    const res = await runCli('importCsv', [file, ...remote(), '--batch-rows', '16'], {}, 120_000);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(`into ${t.url} (POST /api/readings)`);
    expect(summaryValue(res.stderr, 'rows read')).toBe(63);
    expect(summaryValue(res.stderr, 'rows stored')).toBe(60);
    expect(summaryValue(res.stderr, 'rows rejected')).toBe(3);
    const rejects = fs.readFileSync(path.join(dir, 'remote.rejects.csv'), 'utf8').trimEnd().split('\n');
    expect(rejects[0]).toBe('line,reason,record');
    expect(rejects.slice(1).map((l) => Number(l.split(',')[0]))).toEqual([12, 22, 32]);
    expect(rejects[1]).toContain('unknown register');
    expect(rejects[3]).toContain('virtual');
    const stored = await t.api.get(readingsUrl(org, [energy.id], '2024-05-01T00:00:00Z', '2024-05-02T00:00:00Z'), token);
    expect(stored.body[0].readings.map((r: { value: number }) => r.value)).toEqual(Array.from({ length: 60 }, (_, i) => energyValue(i)));
  });

  it('refuses a bad token or URL with a clear message', async () => {
    const file = path.join(dir, 'one.csv');
    fs.writeFileSync(file, `${HEADER}\n${meter.externalId},${energy.externalId},2024-06-01T00:00:00Z,1,900\n`);
    const bad = await runCli('importCsv', [file, '--url', t.url, '--token', 'nope'], {});
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('401');
    const usage = await runCli('importCsv', [file, '--url', 'ftp://x'], {});
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--url must be');
  });
});

describe('flex-export --url', () => {
  it('writes the CSV of the database export, by numeric id and by METER/REGISTER', async () => {
    const args = ['--start', '2024-05-01T00:00:00Z', '--end', '2024-05-02T00:00:00Z'];
    for (const resolution of ['0', '3600', '86400']) {
      const local = await runCli('exportCsv', ['--register', String(energy.id), ...args, '--resolution', resolution], dbEnv);
      expect(local.code, local.stderr).toBe(0);
      expect(local.stdout.split('\n').length).toBeGreaterThan(2);
      const byId = await runCli('exportCsv', ['--register', String(energy.id), ...args, '--resolution', resolution, ...remote()], {});
      expect(byId.code, byId.stderr).toBe(0);
      expect(byId.stdout, `resolution ${resolution}`).toBe(local.stdout);
      if (resolution !== '0') continue;
      const byName = await runCli('exportCsv', ['--register', `${meter.externalId}/${energy.externalId}`, ...args, '--resolution', resolution, ...remote(t.adminToken), '--organization', String(org)], {});
      expect(byName.code, byName.stderr).toBe(0);
      expect(byName.stdout).toBe(local.stdout);
    }
  }, 240_000);

  it('exports the readings as recorded at --as-of, from the database and through the server alike', async () => {
    const at = Date.UTC(2022, 2, 1);
    const rows = (value: number) => ({ registerIds: [energy.id], offsets: Int32Array.of(0, 2), timestamps: Float64Array.of(at, at + 900_000), values: Float64Array.of(value, value + 1), resolutions: Int32Array.of(900, 900) });
    const [t1, t2] = [Date.now() - 60_000, Date.now() - 30_000];
    await t.app.timeSeries.write({ rows: rows(1), updatedAtMs: t1 });
    await t.app.timeSeries.write({ rows: rows(5), updatedAtMs: t2 });
    const args = ['--register', String(energy.id), '--start', '2022-03-01T00:00:00Z', '--end', '2022-03-02T00:00:00Z'];
    const values = (csv: string) => csv.trimEnd().split('\n').slice(1).map((l) => Number(l.split(',')[4]));
    for (const [asOf, expected] of [[t1, [1, 2]], [t2 - 1, [1, 2]], [t2, [5, 6]]] as const) {
      const local = await runCli('exportCsv', [...args, '--as-of', new Date(asOf).toISOString()], dbEnv);
      expect(local.code, local.stderr).toBe(0);
      expect(values(local.stdout)).toEqual(expected);
      const byServer = await runCli('exportCsv', [...args, '--as-of', new Date(asOf).toISOString(), ...remote()], {});
      expect(byServer.stdout).toBe(local.stdout);
    }
    const before = await runCli('exportCsv', [...args, '--as-of', new Date(t1 - 1).toISOString()], dbEnv);
    expect(values(before.stdout)).toEqual([]);
    const bad = await runCli('exportCsv', [...args, '--as-of', 'yesterday'], dbEnv);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--as-of must be an ISO 8601 UTC date-time');
    const tooOld = await runCli('exportCsv', [...args, '--as-of', '2020-01-01T00:00:00Z'], { ...dbEnv, READING_VERSIONS_RETENTION: 'P30D' });
    expect(tooOld.code).toBe(2);
    expect(tooOld.stderr).toContain('READING_VERSIONS_RETENTION P30D');
  }, 120_000);

  it('pages a long period in windows the server accepts', async () => {
    const res = await runCli('exportCsv', ['--register', String(energy.id), '--start', '2023-01-01T00:00:00Z', '--end', '2025-01-01T00:00:00Z', ...remote()], {}, 120_000);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trimEnd().split('\n')).toHaveLength(61);
    expect(summaryValue(res.stderr, 'rows written')).toBe(60);
  }, 120_000);

  it('says what an organization token cannot do', async () => {
    const res = await runCli('exportCsv', ['--register', `${meter.externalId}/${power.externalId}`, '--start', '2024-05-01T00:00:00Z', '--end', '2024-05-02T00:00:00Z', ...remote()], {});
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('needs a global administrator token');
  });
});

describe('package bins', () => {
  it('run from dist/ with plain node: flex-import and flex-export', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.bin).toEqual({ 'flex-import': 'dist/src/cli/importCsv.js', 'flex-export': 'dist/src/cli/exportCsv.js' });
    const build = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
    expect(build.status, build.stdout + build.stderr).toBe(0);
    for (const bin of Object.values(pkg.bin) as string[]) expect(fs.readFileSync(path.join(ROOT, bin), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    const file = path.join(dir, 'bin.csv');
    fs.writeFileSync(file, `${HEADER}\n${meter.id},${power.id},2024-07-01T00:00:00Z,42.5,900\n${meter.externalId},${power.externalId},2024-07-01T00:15:00Z,43.5,900\n`);
    const imported = await runCli('importCsv', [file], dbEnv, 60_000, true);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toBe('');
    expect(summaryValue(imported.stderr, 'rows stored')).toBe(2); // numeric ids and externalIds alike
    const exported = await runCli('exportCsv', ['--register', `${meter.externalId}/${power.externalId}`, '--start', '2024-07-01T00:00:00Z', '--end', '2024-07-02T00:00:00Z'], dbEnv, 60_000, true);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout.trimEnd().split('\n').map((l) => l.split(',')[4])).toEqual(['value', '42.5', '43.5']);
    expect(exported.stderr).toMatch(/export to stdout finished\n {2}registers: 1\n {2}rows written: 2\n {2}bytes written: \d+\n {2}duration: [\d.]+ s\n {2}rows\/s: \d+\n {2}CPU: [\d.]+ s\n {2}peak RSS: [\d.]+ MiB\n$/);
  }, 120_000);
});
