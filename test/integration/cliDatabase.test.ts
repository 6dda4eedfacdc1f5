// How the command-line tools reach the database without DATABASE_URL: the embedded PostgreSQL of
// DATA_DIR, started for the command when the app is down (and stopped afterwards), or the running
// server of the app when it is up.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningEmbeddedServer } from '../../src/cli/cliDatabase.ts';
import { startEmbeddedPostgres } from '../../src/store/embeddedPostgres.ts';
import { TEST_PG_SETTINGS } from '../support/globalSetup.ts';
import { runCli } from '../support/cliProcess.ts';

let dir: string;
let dataDir: string;
let csv: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-cli-db-'));
  fs.chmodSync(dir, 0o755); // PostgreSQL runs as "postgres" when tests run as root
  dataDir = path.join(dir, 'data');
  csv = path.join(dir, 'one.csv');
  fs.writeFileSync(csv, 'meterId,registerId,timestamp,value,resolution\nno-such-meter,r,2024-01-01T00:00:00Z,1,900\n');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// DATABASE_URL empty = unset for loadConfig, whatever the environment of the test run holds.
const env = () => ({ DATA_DIR: dataDir, DATABASE_URL: '' });

describe('CLI database', () => {
  it('starts the embedded PostgreSQL of a fresh DATA_DIR for the command, migrates it, and stops it afterwards', async () => {
    const res = await runCli('importCsv', [csv], env(), 120_000);
    // The row was looked up (so the schema exists) and refused.
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toContain(`into the embedded PostgreSQL of ${dataDir} (started for this command)`);
    expect(fs.readFileSync(path.join(dir, 'one.rejects.csv'), 'utf8')).toContain('unknown meter ""no-such-meter""');
    expect(fs.existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    expect(runningEmbeddedServer(dataDir)).toBeUndefined();
  }, 120_000);

  it('connects to the server of a running app and leaves it running', async () => {
    // The app's part: the embedded server of DATA_DIR, up.
    const server = await startEmbeddedPostgres({ dataDir, port: 0, log: pino({ level: 'silent' }), settings: TEST_PG_SETTINGS });
    try {
      const url = runningEmbeddedServer(dataDir);
      expect(url).toBe(server.connectionString);
      const res = await runCli('importCsv', [csv], env(), 120_000);
      expect(res.code, res.stderr).toBe(3);
      expect(res.stderr).toContain(`into the running embedded PostgreSQL of ${dataDir}`);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM schema_migrations");
      await client.end();
      expect(rows[0]!.n).toBeGreaterThan(0);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
