// How the command-line tools reach the database, in this order:
//   1. DATABASE_URL when set;
//   2. the embedded PostgreSQL of DATA_DIR when it is running (the app is up): its port is line 4
//      of DATA_DIR/postgres/postmaster.pid, its password DATA_DIR/postgres.password, user and
//      database `flex`;
//   3. otherwise the embedded PostgreSQL is started for the duration of the command (a fresh
//      DATA_DIR gets a new cluster) and stopped afterwards.
// Migrations run first (idempotent, under the app's advisory lock), so a fresh database works.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { createLogger } from '../log.ts';
import { createPool, type Pool } from '../store/database.ts';
import { isAlive, startEmbeddedPostgres, type RunningPostgres } from '../store/embeddedPostgres.ts';
import { migrate } from '../store/migrate.ts';
import { MIGRATIONS } from '../store/migrationSources.ts';
import { createTimeSeriesStore, timeSeriesConfig } from '../store/timeseries/index.ts';
import type { TimeSeriesStore } from '../store/timeseries/types.ts';
import { WorkerPool } from '../workerPool.ts';

/** Connections a CLI needs: one for the write in flight, one for lookups, spare for the store. */
const CLI_POOL_MAX = 4;

export interface CliDatabase {
  pool: Pool;
  store: TimeSeriesStore;
  /** Where the data goes, for messages (no password). */
  where: string;
  close(): Promise<void>;
}

/** A CLI logs to stderr (stdout is the export's data), only errors unless LOG_LEVEL is set: the
 * embedded server's start and stop FATAL notices ("starting up", autovacuum terminated) are noise here. */
/** The start every CLI shares: parse the arguments (a string is a usage error, '' = --help) and
 * load the configuration; a number is the exit code to end with. */
export function startCli<O>(argv: string[], readOptions: (argv: string[]) => O | string, usage: string): { options: O; config: Config } | number {
  const options = readOptions(argv);
  if (typeof options === 'string') {
    process.stderr.write(options ? `${options}\n${usage}\n` : `${usage}\n`);
    return options ? 2 : 0;
  }
  try {
    return { options, config: loadConfig() };
  } catch (err) {
    process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`);
    return 2;
  }
}

export function cliLogger(config: Config, env: NodeJS.ProcessEnv = process.env): Logger {
  return createLogger(env.LOG_LEVEL ? config.logLevel : 'error', process.stderr);
}


/** The connection string of the embedded server of DATA_DIR when one is running. */
export function runningEmbeddedServer(dataDir: string): string | undefined {
  const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
  const passwordFile = path.join(dataDir, 'postgres.password');
  let lines: string[];
  try {
    lines = fs.readFileSync(pidFile, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !Number.isInteger(port) || port <= 0) return undefined;
  const password = fs.readFileSync(passwordFile, 'utf8').trim();
  return `postgres://flex:${encodeURIComponent(password)}@127.0.0.1:${port}/flex`;
}

export async function openCliDatabase(config: Config, log: Logger): Promise<CliDatabase> {
  const dataDir = path.resolve(config.dataDir);
  let url = config.databaseUrl;
  let where = 'DATABASE_URL';
  let embedded: RunningPostgres | undefined;
  if (!url) {
    url = runningEmbeddedServer(dataDir);
    where = `the running embedded PostgreSQL of ${dataDir}`;
  }
  if (!url) {
    embedded = await startEmbeddedPostgres({ dataDir, port: config.embeddedPostgresPort, log });
    url = embedded.connectionString;
    where = `the embedded PostgreSQL of ${dataDir} (started for this command)`;
  }
  const pool = createPool(url, CLI_POOL_MAX, log);
  const cleanup = async () => {
    await pool.end().catch(() => undefined);
    await embedded?.stop();
  };
  try {
    await migrate(pool, MIGRATIONS, log);
    // The store's worker pool starts no thread until a write needs one (rows from the CSV
    // import are encoded in this thread; exports need none).
    const workers = new WorkerPool(1, 0);
    const store = await createTimeSeriesStore(timeSeriesConfig(config), { pool, workers, log }).catch(async (err: unknown) => {
      await workers.close();
      throw err;
    });
    return {
      pool,
      store,
      where,
      close: async () => {
        await store.close().catch(() => undefined);
        await workers.close().catch(() => undefined);
        await cleanup();
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
