// Starts the real app (uWebSockets.js on port 0) against a fresh database cloned from the
// migrated template, and gives tests a small HTTP client.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { inject } from 'vitest';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';

export interface Response<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

export interface RequestOptions {
  token?: string;
  json?: unknown;
  form?: Record<string, string>;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export class Api {
  constructor(readonly baseUrl: string) {}

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Response<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | Buffer | undefined = options.body;
    if (options.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, text, body: parsed as T };
  }

  get<T = any>(path: string, token?: string) {
    return this.request<T>('GET', path, { token });
  }
  post<T = any>(path: string, json: unknown, token?: string) {
    return this.request<T>('POST', path, { json, token });
  }
  put<T = any>(path: string, json: unknown, token?: string) {
    return this.request<T>('PUT', path, json === undefined ? { token } : { json, token });
  }
  delete<T = any>(path: string, token?: string) {
    return this.request<T>('DELETE', path, { token });
  }
}

/** A fresh database cloned from the migrated template; returns its connection string. */
export async function createTestDatabase(): Promise<string> {
  const adminUrl = inject('pgAdminUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: `${adminUrl}/postgres` });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`);
  } finally {
    await client.end();
  }
  return `${adminUrl}/${name}`;
}

export interface TestApp {
  app: App;
  api: Api;
  url: string;
  adminToken: string;
  databaseUrl: string;
  close(): Promise<void>;
}

export async function startTestApp(env: Record<string, string> = {}, databaseUrl?: string): Promise<TestApp> {
  const dbUrl = databaseUrl ?? (await createTestDatabase());
  const adminToken = `flex_pat_test_${randomBytes(24).toString('base64url')}`;
  const config = loadConfig({ PORT: '0', DATABASE_URL: dbUrl, ADMIN_TOKEN: adminToken, DB_POOL_MAX: '5', LOG_LEVEL: 'silent', DATA_DIR: '/tmp/flex-test-unused', MQTT_PORT: '0', ...env });
  const app = await createApp(config, { log: pino({ level: env.LOG_LEVEL ?? 'silent' }) });
  const api = new Api(app.baseUrl);
  return { app, api, url: app.baseUrl, adminToken, databaseUrl: dbUrl, close: () => app.close() };
}
