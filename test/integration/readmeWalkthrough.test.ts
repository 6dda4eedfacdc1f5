// The README's five-minute walkthrough works as written: its shell blocks, taken from the README
// and run in order by bash in one shell, against a real Flex process started as `npm start`
// starts it (the administrator's token in `.data/admin-token` of the folder the blocks run in).
// Only FLEX (the server's address, which the first block defaults to localhost:8080) differs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFlexProcess, type FlexProcess } from '../support/flexProcess.ts';
import { createTestDatabase } from '../support/testApp.ts';

const CURL = ['/usr/bin/curl', '/bin/curl', '/usr/local/bin/curl'].find((p) => fs.existsSync(p));
const NO_CURL = CURL ? undefined : 'no curl on this machine (apt-get install curl)';

/** The ```sh blocks of the README's walkthrough section, in order. */
export function walkthroughBlocks(readme: string): string[] {
  const start = readme.indexOf('## A five-minute walkthrough');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

let dir: string;
let flex: FlexProcess;

beforeAll(async () => {
  if (NO_CURL) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-walkthrough-'));
  fs.chmodSync(dir, 0o755);
  flex = await startFlexProcess({ DATABASE_URL: await createTestDatabase(), DATA_DIR: path.join(dir, '.data') });
}, 120_000);

afterAll(async () => {
  flex?.child.kill('SIGTERM');
  await flex?.exited;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(NO_CURL !== undefined)('the README walkthrough', () => {
  it('runs as written: organization, meter, register, client, token, readings, hourly averages, console link', () => {
    const blocks = walkthroughBlocks(fs.readFileSync('README.md', 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const run = spawnSync('bash', ['-c', ['set -euo pipefail', ...blocks].join('\n')], {
      cwd: dir,
      env: { ...process.env, FLEX: flex.baseUrl, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    const [answer] = JSON.parse(lines[0]!);
    expect(answer.readings.map((r: { timestamp: string; value: number; resolution: number }) => [r.timestamp, r.value, r.resolution])).toEqual([
      ['2024-03-04T08:00:00.000Z', 1.25, 3600],
      ['2024-03-04T09:00:00.000Z', 1.1, 3600],
    ]);
    expect(lines[1]).toMatch(new RegExp(`^${flex.baseUrl}/console#/readings\\?org=\\d+&r=${answer.registerId}&from=2024-03-04&to=2024-03-04&res=avg$`));
    expect(lines[2]).toMatch(/^client id \S+, secret \S+$/);
  });
});
