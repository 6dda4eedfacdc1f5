// A database as an older installation left it: every domain migrated, but one domain only up to
// a given version. Upgrade tests write rows of that era into it with SQL, then start the app,
// which applies the remaining migrations.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { inject } from 'vitest';
import { createPool } from '../../src/store/database.ts';
import { migrate, projectRoot } from '../../src/store/migrate.ts';
import { MIGRATIONS } from '../../src/store/migrationSources.ts';

/** A new empty database migrated with `domain` only up to `lastVersion`; returns its URL. */
export async function createDatabaseMigratedTo(domain: string, lastVersion: number): Promise<string> {
  const admin = new pg.Client({ connectionString: `${inject('pgAdminUrl')}/postgres` });
  await admin.connect();
  const name = `u_${randomBytes(6).toString('hex')}`;
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = `${inject('pgAdminUrl')}/${name}`;
  const source = MIGRATIONS.find((m) => m.domain === domain);
  if (!source) throw new Error(`No migrations of domain ${domain}`);
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), `${domain}-${lastVersion}-`));
  const pool = createPool(url, 2, pino({ level: 'silent' }));
  try {
    const dir = path.join(projectRoot(), source.dir);
    for (const file of fs.readdirSync(dir)) if (/^\d{3}_.*\.sql$/.test(file) && Number(file.slice(0, 3)) <= lastVersion) fs.copyFileSync(path.join(dir, file), path.join(folder, file));
    await migrate(pool, MIGRATIONS.map((m) => (m.domain === domain ? { ...m, dir: path.relative(projectRoot(), folder) } : m)), pino({ level: 'silent' }));
  } finally {
    await pool.end();
    fs.rmSync(folder, { recursive: true, force: true });
  }
  return url;
}
