// Numbered SQL migrations, one folder per domain (`src/<domain>/migrations/NNN_name.sql`),
// applied in domain order at start, all pending ones in one transaction under an advisory lock:
// two instances starting together serialize here and the second finds nothing to do.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { Pool } from './database.ts';

export interface MigrationSource {
  domain: string;
  /** Folder relative to the project root. */
  dir: string;
}

interface Migration {
  domain: string;
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

const FILE = /^(\d{3,})_([a-z0-9_]+)\.sql$/;
/** Arbitrary but fixed: the advisory lock key that serializes migrations. */
const MIGRATION_LOCK = 727_274_001;

/** The repository root (where package.json is), from src/ or from dist/src/. */
export function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('Cannot find the project root (package.json)');
    dir = parent;
  }
  return dir;
}

export function loadMigrations(sources: readonly MigrationSource[]): Migration[] {
  const root = projectRoot();
  const out: Migration[] = [];
  for (const { domain, dir } of sources) {
    const folder = path.join(root, dir);
    if (!fs.existsSync(folder)) continue;
    const seen = new Set<number>();
    for (const file of fs.readdirSync(folder).sort()) {
      const match = FILE.exec(file);
      if (!match) {
        if (file.endsWith('.sql')) throw new Error(`Migration ${dir}/${file} is not named NNN_name.sql`);
        continue;
      }
      const version = Number(match[1]);
      if (seen.has(version)) throw new Error(`Two migrations numbered ${version} in ${dir}`);
      seen.add(version);
      const sql = fs.readFileSync(path.join(folder, file), 'utf8');
      out.push({ domain, version, name: match[2]!, sql, checksum: createHash('sha256').update(sql).digest('hex') });
    }
  }
  return out;
}

export async function migrate(pool: Pool, sources: readonly MigrationSource[], log: Logger): Promise<number> {
  const migrations = loadMigrations(sources);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      domain text NOT NULL, version int NOT NULL, name text NOT NULL, checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (domain, version))`);
    const { rows } = await client.query<{ domain: string; version: number; checksum: string }>('SELECT domain, version, checksum FROM schema_migrations');
    const applied = new Map(rows.map((r) => [`${r.domain}/${r.version}`, r.checksum]));
    let count = 0;
    for (const m of migrations) {
      const key = `${m.domain}/${m.version}`;
      const checksum = applied.get(key);
      if (checksum !== undefined) {
        if (checksum !== m.checksum) throw new Error(`Migration ${m.domain}/${m.version}_${m.name} changed after it was applied; add a new migration instead of editing it`);
        continue;
      }
      try {
        await client.query(m.sql);
      } catch (err) {
        throw new Error(`Migration ${m.domain}/${m.version}_${m.name} failed: ${(err as Error).message}`);
      }
      await client.query('INSERT INTO schema_migrations (domain, version, name, checksum) VALUES ($1, $2, $3, $4)', [m.domain, m.version, m.name, m.checksum]);
      log.info({ migration: `${m.domain}/${m.version}_${m.name}` }, 'applied migration');
      count += 1;
    }
    await client.query('COMMIT');
    return count;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
