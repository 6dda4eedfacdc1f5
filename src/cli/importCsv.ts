#!/usr/bin/env node
// `flex-import FILE.csv[.gz] [--reject-file PATH] [--batch-rows N] [--progress-interval SECONDS] [--url URL --token TOKEN]`
// Loads readings from a CSV file (docs/import-export.md) into the database (DATABASE_URL or the
// embedded PostgreSQL of DATA_DIR) or, with --url, through a running server's POST /api/readings.
// Progress and the summary on stderr (stdout stays empty), rejected rows in the reject file.
// Exit codes: 0 done (some rows may be rejected), 1 the import could not run to the end, 2 bad
// usage or configuration, 3 every row rejected, 130 interrupted.
import { cliLogger, openCliDatabase, startCli, type CliDatabase } from './cliDatabase.ts';
import { parseToolArgs, positiveNumber, sharedOptions, type SharedOptions } from './cliOptions.ts';
import { openCsvInput, type CsvInput } from './csvInput.ts';
import { ImportError, runImport, type ImportStats } from './importer.ts';
import { Progress, formatBytes } from './progress.ts';
import { RejectFile } from './rejectFile.ts';
import { RemoteApi } from './remote.ts';
import { runRemoteImport } from './remoteImport.ts';
import { summary } from './summary.ts';

const EXIT = { ok: 0, failed: 1, usage: 2, allRejected: 3, interrupted: 130 } as const;

const USAGE = `usage: flex-import FILE.csv[.gz] [--reject-file PATH] [--batch-rows N] [--progress-interval SECONDS] [--url URL --token TOKEN]
  (from the source tree: npm run import -- …)
  CSV header: meterId,registerId,timestamp,value,resolution (meter and register externalIds; with
  database access a numeric meter or register id is taken too when no externalId matches)
  --reject-file PATH         where rejected rows go (default: FILE.rejects.csv next to FILE)
  --batch-rows N             rows per batch written to the store or POSTed (default 100000)
  --progress-interval S      seconds between progress lines when stderr is not a terminal (default 5)
  --url URL, --token TOKEN   remote mode: POST /api/readings batches to this server with this bearer
                             token (or FLEX_URL, FLEX_TOKEN), paced under its rate limit`;

const DEFAULT_BATCH_ROWS = 100_000;
const MAX_BATCH_ROWS = 5_000_000;

/** `data.csv` and `data.csv.gz` → `data.rejects.csv`. */
function defaultRejectPath(file: string): string {
  return `${file.replace(/\.gz$/i, '').replace(/\.csv$/i, '')}.rejects.csv`;
}

interface Options extends SharedOptions {
  file: string;
  rejectPath: string;
  batchRows: number;
}

function readOptions(argv: string[]): Options | string {
  try {
    const { values, positionals } = parseToolArgs(argv, { 'reject-file': { type: 'string' }, 'batch-rows': { type: 'string' } });
    if (values.help) return '';
    if (positionals.length !== 1) return positionals.length === 0 ? 'name the CSV file to import' : `one file at a time, got ${positionals.length}`;
    const file = positionals[0]!;
    const shared = sharedOptions(values);
    if (typeof shared === 'string') return shared;
    return {
      ...shared,
      file,
      rejectPath: values['reject-file'] ?? defaultRejectPath(file),
      batchRows: positiveNumber(values['batch-rows'], DEFAULT_BATCH_ROWS, '--batch-rows', MAX_BATCH_ROWS, true),
    };
  } catch (err) {
    return (err as Error).message;
  }
}

function importSummary(o: Options, stats: ImportStats, rejects: RejectFile | undefined, seconds: number, outcome: string): string {
  return summary(
    `import of ${o.file} ${outcome}`,
    [
      ['rows read', stats.rows],
      ['rows stored', stats.stored],
      ['duplicates replaced within a batch', stats.duplicates],
      ['rows rejected', `${stats.rejected}${stats.rejected > 0 && rejects ? ` (see ${rejects.path})` : ''}`],
    ],
    stats.rows,
    seconds,
  );
}

async function main(argv: string[]): Promise<number> {
  const cli = startCli(argv, readOptions, USAGE);
  if (typeof cli === 'number') return cli;
  const { options, config } = cli;
  let input: CsvInput | undefined;
  let rejects: RejectFile | undefined;
  let db: CliDatabase | undefined;
  const fail = async (message: string) => {
    process.stderr.write(`import failed: ${message}\n`);
    input?.close();
    await rejects?.close();
    return EXIT.failed;
  };
  try {
    input = await openCsvInput(options.file);
  } catch (err) {
    return fail(`cannot read ${options.file}: ${(err as Error).message}`);
  }
  try {
    rejects = await RejectFile.open(options.rejectPath);
  } catch (err) {
    return fail(`cannot write the reject file ${options.rejectPath}: ${(err as Error).message}`);
  }
  const controller = new AbortController();
  const api = options.remote ? new RemoteApi(options.remote, controller.signal) : undefined;
  if (!api) {
    try {
      db = await openCliDatabase(config, cliLogger(config));
    } catch (err) {
      return fail(`cannot open the database: ${(err as Error).message}`);
    }
  }
  process.stderr.write(`importing ${options.file} (${formatBytes(input.totalBytes)}${input.gzip ? ', gzip' : ''}) into ${api ? `${api.where} (POST /api/readings)` : db!.where}\n`);

  const onSignal = () => {
    if (controller.signal.aborted) process.exit(EXIT.interrupted);
    process.stderr.write('\nstopping after the batch in flight (again to quit at once)…\n');
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const stats: ImportStats = { rows: 0, stored: 0, duplicates: 0, rejected: 0, committedThroughLine: 0 };
  const progress = new Progress(process.stderr, process.stderr.isTTY === true, options.progressIntervalMs);
  const started = performance.now();
  let error: unknown;
  try {
    if (api) await runRemoteImport({ input, api, rejects, batchRows: options.batchRows, progress, signal: controller.signal }, stats);
    else await runImport({ input, db: db!.pool, store: db!.store, rejects, batchRows: options.batchRows, progress, signal: controller.signal }, stats);
  } catch (err) {
    error = err;
  } finally {
    progress.done();
    await rejects.close();
    await db?.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const seconds = (performance.now() - started) / 1000;
  if (error) {
    const interrupted = controller.signal.aborted;
    const reason = error instanceof ImportError ? error.message : `${(error as Error).message ?? String(error)}`;
    process.stderr.write(importSummary(options, stats, rejects, seconds, interrupted ? 'interrupted' : 'failed'));
    process.stderr.write(
      `import ${interrupted ? 'interrupted' : `failed: ${reason}`}\n` +
        `every row up to line ${stats.committedThroughLine} is stored or in the reject file; importing the whole file again is safe (stored rows are replaced by the same values)\n`,
    );
    return interrupted ? EXIT.interrupted : EXIT.failed;
  }
  process.stderr.write(importSummary(options, stats, rejects, seconds, 'finished'));
  if (stats.rows > 0 && stats.stored + stats.duplicates === 0) {
    process.stderr.write(`every row was rejected: nothing was stored (reasons in ${rejects.path})\n`);
    return EXIT.allRejected;
  }
  return EXIT.ok;
}

process.exitCode = await main(process.argv.slice(2));
