// The bulk import and export tools (`npm run import`, `npm run export`) as child processes
// against a real database, with meters and registers made through the real admin API and
// readings checked through GET /api/readings and against values computed here.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCsvInput } from '../../src/cli/csvInput.ts';
import { exportPages } from '../../src/cli/exportReadings.ts';
import { ImportError, runImport } from '../../src/cli/importer.ts';
import { RejectFile } from '../../src/cli/rejectFile.ts';
import { registersForRead } from '../../src/meter/meterStore.ts';
import { runCli, summaryValue } from '../support/cliProcess.ts';
import { createOrganization } from '../support/fixtures.ts';
import { createMeter, createRegister, readingsUrl } from '../support/meterFixtures.ts';
import { createTestDatabase, startTestApp, type TestApp } from '../support/testApp.ts';

type Ref = { id: number; externalId: string };
type Reading = { timestamp: string; periodTo: string; updatedAt: string; value: number; resolution: number };

let t: TestApp;
let env: Record<string, string>;
let dir: string;
let org: number;
let meter: Ref;
let energy: Ref;
let power: Ref;
let oslo: Ref;
let quoted: Ref;
let virtualRegister: Ref;
let otherMeter: Ref;
let otherRegister: Ref;

beforeAll(async () => {
  const databaseUrl = await createTestDatabase();
  t = await startTestApp({}, databaseUrl);
  env = { DATABASE_URL: databaseUrl };
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-import-test-'));
  org = await createOrganization(t.api, t.adminToken);
  meter = await createMeter(t.api, t.adminToken, [org]);
  energy = await createRegister(t.api, t.adminToken, meter.id, { measurementType: 1 });
  power = await createRegister(t.api, t.adminToken, meter.id, { measurementType: 3 });
  oslo = await createRegister(t.api, t.adminToken, meter.id, { measurementType: 1, timeZone: 'Europe/Oslo' });
  quoted = await createRegister(t.api, t.adminToken, meter.id, { externalId: `reg, "quoted" ${process.pid}` });
  virtualRegister = await createRegister(t.api, t.adminToken, meter.id, { isVirtual: true, virtualDefinition: { calculationType: 2, constant: 1 } });
  otherMeter = await createMeter(t.api, t.adminToken, [org]);
  otherRegister = await createRegister(t.api, t.adminToken, otherMeter.id);
});
afterAll(async () => {
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const HEADER = 'meterId,registerId,timestamp,value,resolution';
const q = (s: string) => `"${s.replaceAll('"', '""')}"`;

function writeFile(name: string, content: string | Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

const importFile = (file: string, ...args: string[]) => runCli('importCsv', [file, ...args], env);

async function read(register: Ref, start: string, end: string, resolution?: number): Promise<Reading[]> {
  const res = await t.api.get(readingsUrl(org, [register.id], start, end, resolution), t.adminToken);
  expect(res.status).toBe(200);
  return res.body[0].readings;
}

/** CSV rows (without header) as objects. */
function parseExport(csv: string): { registerId: number; timestamp: string; periodTo: string; updatedAt: string; value: number; resolution: number }[] {
  const [header, ...lines] = csv.trimEnd().split('\n');
  expect(header).toBe('registerId,timestamp,periodTo,updatedAt,value,resolution');
  return lines.map((line) => {
    const [registerId, timestamp, periodTo, updatedAt, value, resolution] = line.split(',');
    return { registerId: Number(registerId), timestamp: timestamp!, periodTo: periodTo!, updatedAt: updatedAt!, value: Number(value), resolution: Number(resolution) };
  });
}

describe('npm run import', () => {
  it('stores a CSV (CRLF, BOM, empty lines, quoted ids) readable through GET /api/readings with the exact values', async () => {
    const values = [0.1, 1234.5678, -3.25, 1e-7, 6.02e23, 0, 42];
    const lines = values.map((v, i) => `${meter.externalId},${energy.externalId},${new Date(Date.UTC(2024, 0, 1, 0, 15 * i)).toISOString().replace('.000', '')},${v},900`);
    lines.splice(3, 0, '');
    lines.push(`${q(meter.externalId)},${q(quoted.externalId)},2024-01-01T00:00:00.250Z,"7.5",60`);
    const file = writeFile('plain.csv', `\uFEFF${HEADER}\r\n${lines.join('\r\n')}\r\n\r\n`);
    const res = await importFile(file);
    expect(res.code, res.stderr).toBe(0);
    expect(summaryValue(res.stderr, 'rows read')).toBe(8);
    expect(summaryValue(res.stderr, 'rows stored')).toBe(8);
    expect(summaryValue(res.stderr, 'rows rejected')).toBe(0);
    expect(fs.existsSync(path.join(dir, 'plain.rejects.csv'))).toBe(false);
    const stored = await read(energy, '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z');
    expect(stored.map((r) => r.value)).toEqual(values);
    expect(stored[1]).toMatchObject({ timestamp: '2024-01-01T00:15:00.000Z', periodTo: '2024-01-01T00:30:00.000Z', resolution: 900 });
    expect(await read(quoted, '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z')).toMatchObject([{ timestamp: '2024-01-01T00:00:00.250Z', value: 7.5, resolution: 60 }]);
  });

  it('reads gzip files, named .gz or recognised by their magic bytes', async () => {
    const rows = (day: number) =>
      Array.from({ length: 96 }, (_, i) => `${meter.externalId},${power.externalId},${new Date(Date.UTC(2024, 1, day, 0, 15 * i)).toISOString()},${(i * 0.5).toFixed(1)},900`);
    const named = writeFile('power.csv.gz', gzipSync(`${HEADER}\n${rows(1).join('\n')}\n`));
    const magic = writeFile('power-gzipped.csv', gzipSync(`${HEADER}\n${rows(2).join('\n')}`));
    for (const file of [named, magic]) {
      const res = await importFile(file);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toContain('gzip');
      expect(summaryValue(res.stderr, 'rows stored')).toBe(96);
    }
    for (const day of ['2024-02-01', '2024-02-02']) {
      const stored = await read(power, `${day}T00:00:00Z`, `${day}T23:59:59Z`);
      expect(stored.map((r) => r.value)).toEqual(Array.from({ length: 96 }, (_, i) => i * 0.5));
    }
  });

  it('writes bad rows to the reject file with line numbers and reasons and stores the good rows around them', async () => {
    const row = (registerId: string, ts: string, value = '1', resolution = '900', meterId = meter.externalId) => `${meterId},${registerId},${ts},${value},${resolution}`;
    const lines = [
      HEADER, // 1
      row(energy.externalId, '2024-03-01T00:00:00Z', '10'), // 2 good
      row(energy.externalId, '2024-03-01 00:15'), // 3 bad timestamp
      row(energy.externalId, '2024-03-01T00:15:00+01:00'), // 4 offset
      row(energy.externalId, '2024-02-30T00:00:00Z'), // 5 no such day
      row(energy.externalId, '2024-03-01T00:30:00Z', 'NaN'), // 6 non-finite
      row(energy.externalId, '2024-03-01T00:30:00Z', '1e999'), // 7 non-finite
      row(energy.externalId, '2024-03-01T00:30:00Z', 'abc'), // 8 not a number
      row(energy.externalId, '2024-03-01T00:45:00Z', '1', '0'), // 9 resolution 0
      row(energy.externalId, '2024-03-01T00:45:00Z', '1', '1.5'), // 10 resolution not an integer
      row(energy.externalId, '2024-03-01T00:15:00Z', '11'), // 11 good
      row(energy.externalId, '2024-03-01T01:00:00Z', '1', '900', 'no-such-meter'), // 12 unknown meter
      row('no-such-register', '2024-03-01T01:00:00Z'), // 13 unknown register
      row(otherRegister.externalId, '2024-03-01T01:00:00Z'), // 14 register of another meter
      row(virtualRegister.externalId, '2024-03-01T01:00:00Z'), // 15 virtual
      `${meter.externalId},${energy.externalId},2024-03-01T01:00:00Z`, // 16 too few fields
      row(energy.externalId, '2024-03-01T00:30:00Z', '12'), // 17 good
      row('no-such-register', '2024-03-01T01:15:00Z'), // 18 unknown register again (cached)
    ];
    const file = writeFile('mixed.csv', `${lines.join('\n')}\n`);
    const res = await importFile(file, '--batch-rows', '5');
    expect(res.code, res.stderr).toBe(0);
    expect(summaryValue(res.stderr, 'rows read')).toBe(17);
    expect(summaryValue(res.stderr, 'rows stored')).toBe(3);
    expect(summaryValue(res.stderr, 'rows rejected')).toBe(14);
    const rejectFile = path.join(dir, 'mixed.rejects.csv');
    expect(res.stderr).toContain(rejectFile);
    const rejects = fs.readFileSync(rejectFile, 'utf8').trimEnd().split('\n');
    expect(rejects[0]).toBe('line,reason,record');
    const byLine = new Map(rejects.slice(1).map((l) => [Number(l.slice(0, l.indexOf(','))), l]));
    expect([...byLine.keys()]).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 18]);
    const expected: Record<number, string> = {
      3: 'timestamp must be an ISO 8601 UTC date-time',
      4: 'timestamp must be in UTC (end with Z), not carry an offset',
      5: 'timestamp is not a valid date and time',
      6: 'value must be a finite number',
      7: 'value must be a finite number',
      8: 'value must be a number',
      9: 'resolution must be a positive integer number of seconds',
      10: 'resolution must be a positive integer number of seconds',
      12: 'unknown meter ""no-such-meter""',
      13: 'unknown register ""no-such-register""',
      14: `register ""${otherRegister.externalId}"" is not on meter ""${meter.externalId}""`,
      15: `register ""${virtualRegister.externalId}"" is virtual`,
      16: 'expected 5 fields, got 3',
      18: 'unknown register ""no-such-register""',
    };
    for (const [line, reason] of Object.entries(expected)) {
      const text = byLine.get(Number(line))!;
      expect(text, `line ${line}`).toContain(reason);
      // The original record is the last field, CSV-quoted.
      expect(text.endsWith(q(lines[Number(line) - 1]!)), `line ${line}: ${text}`).toBe(true);
    }
    const stored = await read(energy, '2024-03-01T00:00:00Z', '2024-03-02T00:00:00Z');
    expect(stored.map((r) => [r.timestamp, r.value])).toEqual([
      ['2024-03-01T00:00:00.000Z', 10],
      ['2024-03-01T00:15:00.000Z', 11],
      ['2024-03-01T00:30:00.000Z', 12],
    ]);
  });

  it('exits 3 when every row is rejected, 1 when the file cannot be read or is not a readings CSV', async () => {
    const allBad = await importFile(writeFile('all-bad.csv', `${HEADER}\nnope,nope,2024-01-01T00:00:00Z,1,900\n`));
    expect(allBad.code).toBe(3);
    expect(allBad.stderr).toContain('every row was rejected');

    const missing = await importFile(path.join(dir, 'does-not-exist.csv'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read');

    const header = await importFile(writeFile('bad-header.csv', `meter,register,timestamp,value,resolution\n${meter.externalId},${energy.externalId},2024-01-01T00:00:00Z,1,900\n`));
    expect(header.code).toBe(1);
    expect(header.stderr).toContain('line 1: the first line must be the header meterId,registerId,timestamp,value,resolution');
    expect(header.stderr).toContain('unknown column "meter"');

    // The same loop in-process for the other ways a file cannot be read (no process start needed).
    const failure = async (name: string, content: string | Buffer) => {
      const input = await openCsvInput(writeFile(name, content));
      const rejects = await RejectFile.open(path.join(dir, `${name}.rejects.csv`));
      const stats = { rows: 0, stored: 0, duplicates: 0, rejected: 0, committedThroughLine: 0 };
      try {
        await runImport({ input, db: t.app.pool, store: t.app.timeSeries, rejects, batchRows: 100 }, stats);
        return 'no error';
      } catch (err) {
        return err instanceof ImportError ? `ImportError: ${err.message}` : (err as Error).message;
      } finally {
        await rejects.close();
      }
    };
    expect(await failure('empty.csv', '')).toMatch(/^ImportError: .*empty\.csv is empty: the header line meterId,registerId,timestamp,value,resolution is missing$/);
    expect(await failure('truncated.csv.gz', gzipSync(`${HEADER}\n${'M,R,2024-01-01T00:00:00Z,1,900\n'.repeat(100)}`).subarray(0, 40))).toContain('unexpected end of file');
    expect(await failure('not-gzip.csv.gz', `${HEADER}\n`)).toContain('incorrect header check');
    expect(await failure('unclosed.csv', `${HEADER}\n"${'x'.repeat(2 << 20)}`)).toMatch(/^ImportError: line 2: a record is longer than 1048576 bytes/);
    expect(await failure('header-only.csv', `${HEADER}\n`)).toBe('no error');

    const usage = await runCli('importCsv', [], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: flex-import');
  });

  it('keeps the last of duplicate rows, within a batch and across batches, and replaces values on re-import', async () => {
    const ts = (m: number) => new Date(Date.UTC(2024, 3, 1, 0, m)).toISOString();
    const rows = [
      [ts(0), 1],
      [ts(15), 2],
      [ts(0), 3], // same batch as the first: wins
      [ts(30), 4],
      [ts(15), 5], // next batch (3 rows each): wins over the stored 2
    ].map(([time, v]) => `${meter.externalId},${energy.externalId},${time},${v},900`);
    const res = await importFile(writeFile('dups.csv', `${HEADER}\n${rows.join('\n')}\n`), '--batch-rows', '3');
    expect(res.code, res.stderr).toBe(0);
    expect(summaryValue(res.stderr, 'rows stored')).toBe(4);
    expect(summaryValue(res.stderr, 'duplicates replaced within a batch')).toBe(1);
    const first = await read(energy, ts(0), ts(60));
    expect(first.map((r) => r.value)).toEqual([3, 5, 4]);

    // A correction: the same rows with new values replace the stored ones and move updatedAt.
    const corrected = [`${meter.externalId},${energy.externalId},${ts(0)},30,900`, `${meter.externalId},${energy.externalId},${ts(45)},60,900`];
    const again = await importFile(writeFile('dups-fix.csv', `${HEADER}\n${corrected.join('\n')}\n`));
    expect(again.code, again.stderr).toBe(0);
    const second = await read(energy, ts(0), ts(60));
    expect(second.map((r) => r.value)).toEqual([30, 5, 4, 60]);
    expect(Date.parse(second[0]!.updatedAt)).toBeGreaterThan(Date.parse(first[0]!.updatedAt));
    expect(second[1]!.updatedAt).toBe(first[1]!.updatedAt);
  });

  it('prints plain progress lines when not on a terminal, then the summary', async () => {
    // About 3 MB: several input chunks, so progress is reported along the way.
    const start = Date.UTC(2023, 0, 1);
    const lines: string[] = [];
    for (let i = 0; i < 40_000; i += 1) lines.push(`${meter.externalId},${power.externalId},${new Date(start + i * 60_000).toISOString()},${i % 1000},60`);
    const file = writeFile('progress.csv', `${HEADER}\n${lines.join('\n')}\n`);
    const res = await importFile(file, '--progress-interval', '0.001', '--batch-rows', '10000');
    expect(res.code, res.stderr).toBe(0);
    const progress = res.stderr.split('\n').filter((l) => l.startsWith('progress: '));
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toMatch(/^progress: \d+\.\d% \([\d.]+ [KMG]iB of [\d.]+ [KMG]iB\), [\d,]+ rows, [\d,]+ rows\/s, ETA \d+:\d\d$/);
    expect(res.stderr).not.toContain('\r');
    // The summary ends stderr; stdout carries nothing.
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/\nimport of .*progress\.csv finished\n {2}rows read: 40000\n {2}rows stored: 40000\n {2}duplicates replaced within a batch: 0\n {2}rows rejected: 0\n {2}duration: [\d.]+ s\n {2}rows\/s: \d+\n {2}CPU: [\d.]+ s\n {2}peak RSS: [\d.]+ MiB\n$/);
  });
});

describe('interrupting an import', () => {
  it('stops after the batch in flight on SIGINT (exit 130) and says up to which line rows are stored', async () => {
    const register = await createRegister(t.api, t.adminToken, meter.id, { measurementType: 3 });
    const start = Date.UTC(2021, 0, 1);
    const rows = 500_000;
    let text = `${HEADER}\n`;
    for (let i = 0; i < rows; i += 1) text += `${meter.externalId},${register.externalId},${new Date(start + i * 60_000).toISOString()},${i},60\n`;
    const file = writeFile('interrupted.csv', text);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/importCsv.ts', file, '--batch-rows', '10000', '--progress-interval', '0.001'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const progressed = new Promise<void>((resolve) =>
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        // A few batches in: some are committed, most of the file is still to come.
        if (/progress: .* (\d{2,3},\d{3}|\d,\d{3},\d{3}) rows/.test(stderr)) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await Promise.race([progressed, exited]);
    child.kill('SIGINT');
    expect(await exited, stderr).toBe(130);
    const line = Number(/every row up to line (\d+) is stored/.exec(stderr)?.[1]);
    expect(line, stderr).toBeGreaterThan(1);
    expect(line).toBeLessThan(rows + 1);
    expect(stderr).toContain('interrupted.csv interrupted');
    expect(summaryValue(stderr, 'rows stored')).toBe(line - 1);
    // Exactly the rows of lines 2..line are stored.
    const res = await t.api.get(readingsUrl(org, [register.id], new Date(start).toISOString(), new Date(start + rows * 60_000).toISOString()), t.adminToken);
    expect(res.status).toBe(200);
    const stored = res.body[0].readings as Reading[];
    expect(stored).toHaveLength(line - 1);
    expect(stored.at(-1)!.value).toBe(line - 2);
  }, 60_000);
});

describe('npm run export', () => {
  // Two days of 15-minute energy and power readings, and Oslo-zone energy over a DST change.
  const START = Date.UTC(2024, 4, 1);
  const N = 192;
  const energyValue = (i: number) => Math.round((Math.sin(i) + 2) * 1000) / 1000;
  const powerValue = (i: number) => (i % 7) * 1.25;
  const osloStart = Date.UTC(2024, 2, 29); // DST starts in Oslo on 2024-03-31
  const osloValue = (i: number) => i + 0.5;

  beforeAll(async () => {
    const lines: string[] = [];
    for (let i = 0; i < N; i += 1) {
      const ts = new Date(START + i * 900_000).toISOString();
      lines.push(`${meter.externalId},${energy.externalId},${ts},${energyValue(i)},900`, `${meter.externalId},${power.externalId},${ts},${powerValue(i)},900`);
    }
    for (let i = 0; i < 4 * 24; i += 1) lines.push(`${meter.externalId},${oslo.externalId},${new Date(osloStart + i * 3_600_000).toISOString()},${osloValue(i)},3600`);
    const res = await importFile(writeFile('export-source.csv', `${HEADER}\n${lines.join('\n')}\n`));
    expect(res.code, res.stderr).toBe(0);
  });

  const exportCsv = (...args: string[]) => runCli('exportCsv', args, env);

  it('writes readings as stored (resolution 0), register by register, as GET /api/readings returns them', async () => {
    const start = new Date(START).toISOString();
    const end = new Date(START + N * 900_000).toISOString();
    const res = await exportCsv('--register', String(energy.id), '--register', String(power.id), '--start', start, '--end', end);
    expect(res.code, res.stderr).toBe(0);
    const rows = parseExport(res.stdout);
    expect(rows).toHaveLength(2 * N);
    expect(rows.slice(0, N).map((r) => r.value)).toEqual(Array.from({ length: N }, (_, i) => energyValue(i)));
    expect(rows.slice(N).map((r) => r.value)).toEqual(Array.from({ length: N }, (_, i) => powerValue(i)));
    expect(rows[N]).toMatchObject({ registerId: power.id, timestamp: start, periodTo: new Date(START + 900_000).toISOString(), resolution: 900 });
    const api = await read(energy, start, end);
    expect(rows.slice(0, N).map(({ registerId: _r, ...rest }) => rest)).toEqual(api);
  });

  it('writes aggregated buckets: energy summed, power averaged, local days for 86400', async () => {
    const start = new Date(START).toISOString();
    const end = new Date(START + N * 900_000).toISOString();
    const res = await exportCsv('--register', `${energy.id},${power.id}`, '--start', start, '--end', end, '--resolution', '3600');
    expect(res.code, res.stderr).toBe(0);
    const rows = parseExport(res.stdout);
    const hours = N / 4;
    expect(rows).toHaveLength(2 * hours);
    for (let h = 0; h < hours; h += 1) {
      const quarter = [0, 1, 2, 3].map((k) => 4 * h + k);
      const sum = quarter.reduce((s, i) => s + energyValue(i), 0);
      const avg = quarter.reduce((s, i) => s + powerValue(i), 0) / 4;
      expect(rows[h]).toMatchObject({ registerId: energy.id, timestamp: new Date(START + h * 3_600_000).toISOString(), periodTo: new Date(START + (h + 1) * 3_600_000).toISOString(), resolution: 3600 });
      expect(rows[h]!.value).toBeCloseTo(sum, 9);
      expect(rows[hours + h]!.value).toBeCloseTo(avg, 9);
    }
    // Exactly what GET /api/readings?resolution=3600 says.
    const api = await read(power, start, end, 3600);
    expect(rows.slice(hours).map(({ registerId: _r, ...rest }) => rest)).toEqual(api);

    const days = await exportCsv('--register', String(oslo.id), '--start', '2024-03-28T23:00:00Z', '--end', '2024-04-01T22:00:00Z', '--resolution', '86400', '--output', path.join(dir, 'days.csv'));
    expect(days.code, days.stderr).toBe(0);
    expect(days.stdout).toBe('');
    const dayRows = parseExport(fs.readFileSync(path.join(dir, 'days.csv'), 'utf8'));
    // Local days of Europe/Oslo: 29th and 30th are 24 h (UTC+1), the 31st is 23 h (DST), the rest UTC+2.
    const bounds = [Date.UTC(2024, 2, 28, 23), Date.UTC(2024, 2, 29, 23), Date.UTC(2024, 2, 30, 23), Date.UTC(2024, 2, 31, 22), Date.UTC(2024, 3, 1, 22)];
    const expected = bounds.slice(0, -1).map((from, k) => {
      let sum = 0;
      for (let i = 0; i < 96; i += 1) {
        const t = osloStart + i * 3_600_000;
        if (t >= from && t < bounds[k + 1]!) sum += osloValue(i);
      }
      return { timestamp: new Date(from).toISOString(), periodTo: new Date(bounds[k + 1]!).toISOString(), value: sum, resolution: 86400 };
    });
    expect(dayRows.map(({ registerId: _r, updatedAt: _u, ...rest }) => rest)).toEqual(expected);
  });

  it('gives the same rows whatever the page size (in-process, pages of one reading)', async () => {
    const registers = await registersForRead(t.app.pool, [energy.id, power.id]);
    const query = { registers, start: Date.UTC(2024, 3, 28), end: Date.UTC(2024, 4, 5) };
    for (const resolution of [0, 3600, 86400]) {
      const whole: string[] = [];
      const paged: string[] = [];
      for await (const text of exportPages(t.app.timeSeries, { ...query, resolution })) whole.push(text);
      for await (const text of exportPages(t.app.timeSeries, { ...query, resolution }, 1)) paged.push(text);
      expect(paged.length, `resolution ${resolution}`).toBeGreaterThan(whole.length);
      expect(paged.join(''), `resolution ${resolution}`).toBe(whole.join(''));
    }
  });

  it('exports a two-year period (several pages) with the data in it', async () => {
    for (const resolution of ['0', '900']) {
      const res = await exportCsv('--register', String(energy.id), '--start', '2023-06-01T00:00:00Z', '--end', '2025-06-01T00:00:00Z', '--resolution', resolution);
      expect(res.code, res.stderr).toBe(0);
      const rows = parseExport(res.stdout).filter((r) => r.timestamp >= new Date(START).toISOString() && r.timestamp < new Date(START + N * 900_000).toISOString());
      expect(rows.map((r) => r.value)).toEqual(Array.from({ length: N }, (_, i) => energyValue(i)));
    }
  });

  it('ends quietly (exit 0) when the reader of stdout goes away', async () => {
    const register = await createRegister(t.api, t.adminToken, meter.id, { measurementType: 3, defaultResolution: 60 });
    const start = Date.UTC(2020, 0, 1);
    const lines = Array.from({ length: 50_000 }, (_, i) => `${meter.externalId},${register.externalId},${new Date(start + i * 60_000).toISOString()},${i},60`);
    expect((await importFile(writeFile('for-head.csv', `${HEADER}\n${lines.join('\n')}\n`))).code).toBe(0);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/exportCsv.ts', '--register', String(register.id), '--start', '2020-01-01T00:00:00Z', '--end', '2020-03-01T00:00:00Z'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // Like `| head -1`: read the first chunk, then close the pipe.
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(0);
    expect(stderr).toBe('');
  });

  it('refuses virtual and unknown registers and bad arguments', async () => {
    const virtual = await exportCsv('--register', String(virtualRegister.id), '--start', '2024-01-01T00:00:00Z', '--end', '2024-01-02T00:00:00Z');
    expect(virtual.code).toBe(2);
    expect(virtual.stderr).toContain(`register(s) ${virtualRegister.id} are virtual`);
    const unknown = await exportCsv('--register', '999999', '--start', '2024-01-01T00:00:00Z', '--end', '2024-01-02T00:00:00Z');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('register(s) 999999 do not exist');
    const backwards = await exportCsv('--register', String(energy.id), '--start', '2024-01-02T00:00:00Z', '--end', '2024-01-01T00:00:00Z');
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toContain('--start must be before --end');
    const offset = await exportCsv('--register', String(energy.id), '--start', '2024-01-01T00:00:00+01:00', '--end', '2024-01-02T00:00:00Z');
    expect(offset.code).toBe(2);
  });
});

describe('import memory', () => {
  it('stays flat: peak RSS does not grow with the file size', async () => {
    // Long ids (about 180 characters) make rows of about 400 bytes: the large file is 120 MB more
    // than the small one, so an importer holding the file, or anything per byte, would show it,
    // while the database work (per row) stays small enough for a fast test.
    const longMeter = await createMeter(t.api, t.adminToken, [org], `${'m'.repeat(170)}-${process.pid}`);
    const longRegisters = [
      await createRegister(t.api, t.adminToken, longMeter.id, { externalId: `${'a'.repeat(170)}-${process.pid}` }),
      await createRegister(t.api, t.adminToken, longMeter.id, { externalId: `${'b'.repeat(170)}-${process.pid}` }),
    ];
    const generate = (name: string, rows: number) => {
      const file = path.join(dir, name);
      const out = fs.openSync(file, 'w');
      const start = Date.UTC(2022, 0, 1);
      let text = `${HEADER}\n`;
      for (let i = 0; i < rows; i += 1) {
        text += `${longMeter.externalId},${longRegisters[i % 2]!.externalId},${new Date(start + Math.floor(i / 2) * 900_000).toISOString()},${(i % 977) / 8},900\n`;
        if (text.length > 1 << 20) {
          fs.writeSync(out, text);
          text = '';
        }
      }
      fs.writeSync(out, text);
      fs.closeSync(out);
      return file;
    };
    const peak = async (rows: number) => {
      const file = generate(`mem-${rows}.csv`, rows);
      const res = await importFile(file, '--batch-rows', '20000');
      expect(res.code, res.stderr).toBe(0);
      expect(summaryValue(res.stderr, 'rows stored')).toBe(rows);
      fs.rmSync(file);
      return summaryValue(res.stderr, 'peak RSS');
    };
    const small = await peak(100_000);
    const large = await peak(400_000);
    // Measured: the large import peaks 10 to 20 MiB above the small one (V8 and malloc reach their
    // plateau, and stay there for larger files: see bench/importMemory.ts).
    expect(large, `peak RSS ${small} MiB for 100k rows, ${large} MiB for 400k rows`).toBeLessThan(small + 40);
  }, 90_000);
});
