// Regression: the import named meters and registers by externalId while the
// export took only numeric register ids (`--register M-2/r1` → exit 2), so one had to look ids up
// through the admin API. The export now takes METER/REGISTER (externalIds, or numeric ids) too,
// and the import takes numeric ids where no externalId matches.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, summaryValue } from '../support/cliProcess.ts';
import { createOrganization } from '../support/fixtures.ts';
import { createMeter, createRegister } from '../support/meterFixtures.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;
let dir: string;

beforeAll(async () => {
  t = await startTestApp();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-export-ids-'));
});
afterAll(async () => {
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('register references of the command-line tools', () => {
  it('export by METER/REGISTER externalIds gives the rows of the numeric id', async () => {
    const org = await createOrganization(t.api, t.adminToken);
    const meter = await createMeter(t.api, t.adminToken, [org], `M-2-${process.pid}`);
    const register = await createRegister(t.api, t.adminToken, meter.id, { externalId: 'r1' });
    const env = { DATABASE_URL: t.databaseUrl };
    const csv = path.join(dir, 'in.csv');
    // The second row names the meter and register by numeric id.
    fs.writeFileSync(csv, `meterId,registerId,timestamp,value,resolution\n${meter.externalId},r1,2024-01-01T00:00:00Z,1.5,900\n${meter.id},${register.id},2024-01-01T00:15:00Z,2.5,900\n`);
    const imported = await runCli('importCsv', [csv], env);
    expect(imported.code, imported.stderr).toBe(0);
    expect(summaryValue(imported.stderr, 'rows stored')).toBe(2);
    const range = ['--start', '2024-01-01T00:00:00Z', '--end', '2024-01-02T00:00:00Z'];
    const byName = await runCli('exportCsv', ['--register', `${meter.externalId}/r1`, ...range], env);
    expect(byName.code, byName.stderr).toBe(0);
    const byId = await runCli('exportCsv', ['--register', String(register.id), ...range], env);
    expect(byName.stdout).toBe(byId.stdout);
    expect(byName.stdout.trimEnd().split('\n')).toHaveLength(3);
    const unknown = await runCli('exportCsv', ['--register', `${meter.externalId}/nope`, ...range], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown register "nope"');
  }, 120_000);
});
