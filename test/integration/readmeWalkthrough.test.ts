// The README's five-minute walkthrough works as written: its shell blocks, taken from the README
// and run in order by bash in one shell, against the real server on a fresh database, from a
// folder whose `.data/admin-token` holds the administrator's token as the first `npm start`
// writes it. Only FLEX (the server's address, which the first block defaults to
// localhost:8080) differs.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const CURL = ['/usr/bin/curl', '/bin/curl', '/usr/local/bin/curl'].find((p) => fs.existsSync(p));
const NO_CURL = CURL ? undefined : 'no curl on this machine (apt-get install curl)';

/** The ```sh blocks of the README's walkthrough section, in order. */
export function walkthroughBlocks(readme: string): string[] {
  const start = readme.indexOf('## A five-minute walkthrough');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

let dir: string;
let t: TestApp;

beforeAll(async () => {
  if (NO_CURL) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-walkthrough-'));
  t = await startTestApp({ DATA_DIR: path.join(dir, '.data') });
  fs.mkdirSync(path.join(dir, '.data'));
  fs.writeFileSync(path.join(dir, '.data', 'admin-token'), `${t.adminToken}\n`, { mode: 0o600 });
});

afterAll(async () => {
  await t?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** bash without blocking this process's event loop (the server runs in it). */
function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: dir, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe.skipIf(NO_CURL !== undefined)('the README walkthrough', () => {
  it('runs as written: organization, meter, register, client, token, readings, hourly averages, console link', async () => {
    const blocks = walkthroughBlocks(fs.readFileSync('README.md', 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const run = await bash(['set -euo pipefail', ...blocks].join('\n'), { ...process.env, FLEX: t.url, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    const [answer] = JSON.parse(lines[0]!);
    expect(answer.readings.map((r: { timestamp: string; value: number; resolution: number }) => [r.timestamp, r.value, r.resolution])).toEqual([
      ['2024-03-04T08:00:00.000Z', 1.25, 3600],
      ['2024-03-04T09:00:00.000Z', 1.1, 3600],
    ]);
    expect(lines[1]).toMatch(new RegExp(`^${t.url}/console#/readings\\?org=\\d+&r=${answer.registerId}&from=2024-03-04&to=2024-03-04&res=avg$`));
    expect(lines[2]).toMatch(/^client id \S+, secret \S+$/);
  });
});
