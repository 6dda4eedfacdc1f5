// The platform as a process: bad configuration, graceful SIGTERM with a request in flight, and a
// restart on the embedded PostgreSQL that keeps the data.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFlexProcess as start, type FlexProcess } from '../support/flexProcess.ts';
import { createTestDatabase } from '../support/testApp.ts';

const ADMIN = `flex_pat_lifecycle_${'x'.repeat(32)}`;

// Every process a test starts is killed afterwards, whatever the test's outcome.
const started: FlexProcess[] = [];
async function startFlexProcess(env: Record<string, string>, timeoutMs?: number): Promise<FlexProcess> {
  const flex = await start(env, timeoutMs);
  started.push(flex);
  return flex;
}
afterEach(async () => {
  for (const flex of started.splice(0)) {
    if (flex.child.exitCode === null && flex.child.signalCode === null) {
      flex.child.kill('SIGTERM');
      const timer = setTimeout(() => flex.child.kill('SIGKILL'), 20_000);
      await flex.exited;
      clearTimeout(timer);
    }
  }
});

describe('start-up', () => {
  it('stops with a clear message on bad configuration', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, PORT: 'eighty', RATE_LIMIT_STORE: 'redis', ADMIN_TOKEN: 'x'.repeat(48) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('PORT must be an integer');
    expect(stderr).toContain('RATE_LIMIT_STORE must be one of memory, postgres');
    expect(stderr).toContain('ADMIN_TOKEN must be a personal access token: flex_pat_');
  });
});

describe('SIGTERM', () => {
  it('finishes a request in flight, then exits 0', async () => {
    const flex = await startFlexProcess({ DATABASE_URL: await createTestDatabase(), ADMIN_TOKEN: ADMIN });
    const body = JSON.stringify({ name: 'Created during shutdown', features: [] });
    const socket = net.connect(flex.port, '127.0.0.1');
    let response = '';
    socket.on('data', (d) => (response += d.toString()));
    await new Promise((r) => socket.once('connect', r));
    // The headers and half the body: the server is now waiting for the rest of this request.
    socket.write(`POST /api/admin/organizations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    await new Promise((r) => setTimeout(r, 300));
    flex.child.kill('SIGTERM');
    await flex.waitForOutput(/shutting down/);
    socket.write(body.slice(10));
    const code = await flex.exited;
    expect(response).toMatch(/^HTTP\/1\.1 201 Created/);
    expect(response).toContain('"name":"Created during shutdown"');
    expect(code).toBe(0);
  });
});

describe('restart on the embedded PostgreSQL', () => {
  it('keeps the data and the generated admin token', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-restart-'));
    fs.chmodSync(dataDir, 0o755);
    try {
      const first = await startFlexProcess({ DATA_DIR: dataDir }, 120_000);
      expect(first.output()).toContain('generated admin token (shown once');
      const token = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
      expect(fs.statSync(path.join(dataDir, 'admin-token')).mode & 0o777).toBe(0o600);
      const created = await fetch(`${first.baseUrl}/api/admin/organizations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Survives restarts', features: ['Grid'] }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: number };
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);

      const second = await startFlexProcess({ DATA_DIR: dataDir }, 120_000);
      expect(second.output()).not.toContain('generated admin token');
      const again = await fetch(`${second.baseUrl}/api/admin/organizations/${id}`, { headers: { authorization: `Bearer ${token}` } });
      expect(again.status).toBe(200);
      expect(((await again.json()) as { name: string }).name).toBe('Survives restarts');
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
