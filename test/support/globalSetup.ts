// One embedded PostgreSQL cluster per test run. Migrations are applied once to a template
// database; each test file clones it (CREATE DATABASE … TEMPLATE), which takes milliseconds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import type { TestProject } from 'vitest/node';
import { MIGRATIONS } from '../../src/store/migrationSources.ts';
import { createPool } from '../../src/store/database.ts';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/store/embeddedPostgres.ts';
import { migrate } from '../../src/store/migrate.ts';
import { ensureConsoleBuilt } from './consoleBuild.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    templateDatabase: string;
  }
}

export const TEST_PG_SETTINGS = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', shared_buffers: '128MB' };

let running: RunningPostgres | undefined;
let dataDir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  ensureConsoleBuilt();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-test-pg-'));
  fs.chmodSync(dataDir, 0o755);
  const log = pino({ level: 'warn' });
  running = await startEmbeddedPostgres({ dataDir, port: 0, log, database: 'postgres', settings: TEST_PG_SETTINGS });
  const adminUrl = running.connectionString.replace(/\/postgres$/, '');
  const template = 'flex_template';
  const admin = new pg.Client({ connectionString: `${adminUrl}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.end();
  const pool = createPool(`${adminUrl}/${template}`, 2, log);
  await migrate(pool, MIGRATIONS, log);
  await pool.end();
  project.provide('pgAdminUrl', adminUrl);
  project.provide('templateDatabase', template);
}

export async function teardown(): Promise<void> {
  await running?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
}
