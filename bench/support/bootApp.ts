// Boots the real platform for a benchmark: embedded PostgreSQL in a temporary DATA_DIR (or
// DATABASE_URL when set), real HTTP server on a free port, a bootstrap admin token.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';

export interface BenchApp {
  app: App;
  adminToken: string;
  close(): Promise<void>;
}

export async function bootApp(env: Record<string, string> = {}): Promise<BenchApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-bench-'));
  fs.chmodSync(dataDir, 0o755);
  const adminToken = `flex_pat_bench_${randomBytes(24).toString('base64url')}`;
  const config = loadConfig({ ...process.env, PORT: '0', MQTT_PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', ...env });
  const app = await createApp(config, { log: pino({ level: 'warn' }) });
  return {
    app,
    adminToken,
    async close() {
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Calls the API and fails loudly on an unexpected status. */
export async function call(baseUrl: string, method: string, url: string, token: string, body?: unknown): Promise<any> {
  const res = await fetch(baseUrl + url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** An organization with the given features and a client holding the given permissions; returns its access token. */
export async function clientToken(baseUrl: string, admin: string, features: string[], permissions: string[]): Promise<{ organizationId: number; token: string }> {
  const org = await call(baseUrl, 'POST', '/api/admin/organizations', admin, { name: `bench-${randomBytes(4).toString('hex')}`, features });
  const role = await call(baseUrl, 'POST', '/api/admin/roles', admin, { name: `bench-${randomBytes(4).toString('hex')}`, permissions });
  const client = await call(baseUrl, 'POST', `/api/organization/${org.id}/client`, admin, { clientName: 'bench', rolesIds: [role.id] });
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, audience: 'flex-api' }),
  });
  const token = ((await res.json()) as { access_token: string }).access_token;
  return { organizationId: org.id, token };
}
