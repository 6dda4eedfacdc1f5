// `npm run -s export -- --register ID [--register ID ...] --start ISO --end ISO [--resolution SECONDS] [--output FILE]`
// Writes readings as CSV (registerId,timestamp,periodTo,updatedAt,value,resolution) to stdout or
// FILE, page by page (docs/import-export.md). Register ids are the numeric ids GET /api/readings
// takes. Virtual registers are refused: they are computed on read over the requested period
// (a running total depends on where the period starts), which a paged export cannot reproduce.
// Exit codes: 0 done, 1 failed (database, output), 2 bad usage or unknown/virtual register,
// 130 interrupted.
import { once } from 'node:events';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { parseUtcTimestamp } from '../http/validation.ts';
import { registersForRead, type RegisterForRead } from '../meter/meterStore.ts';
import { resolutionError } from '../meter/readingsQuery.ts';
import { cliLogger, openCliDatabase, startCli, type CliDatabase } from './cliDatabase.ts';
import { exportPages } from './exportReadings.ts';

const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;
const MAX_RESOLUTION = 31 * 86400; // as GET /api/readings

const USAGE = `usage: npm run -s export -- --register ID [--register ID ...] --start ISO --end ISO [--resolution SECONDS] [--output FILE]
  --register ID        numeric register id, as in GET /api/readings (repeat, or separate with commas)
  --start, --end       ISO 8601 UTC (…Z): start inclusive, end exclusive
  --resolution S       0 (default) = readings as stored; S > 0 = S-second buckets (86400 = local days),
                       energy and volume summed, other quantities averaged
  --output FILE        write to FILE instead of stdout
(npm's -s keeps npm's own banner out of stdout)`;

interface Options {
  registerIds: number[];
  start: number;
  end: number;
  resolution: number;
  output: string | undefined;
}

function readOptions(argv: string[]): Options | string {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        register: { type: 'string', multiple: true },
        start: { type: 'string' },
        end: { type: 'string' },
        resolution: { type: 'string' },
        output: { type: 'string', short: 'o' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help) return '';
    if (positionals.length > 0) return `unexpected argument ${JSON.stringify(positionals[0])}`;
    const ids = (values.register ?? []).flatMap((r) => r.split(',')).map((r) => r.trim());
    if (ids.length === 0) return '--register is required';
    const bad = ids.find((id) => !/^\d+$/.test(id) || Number(id) < 1 || Number(id) > 2 ** 31 - 1);
    if (bad !== undefined) return `--register must be a positive integer register id, got ${JSON.stringify(bad)}`;
    if (!values.start || !values.end) return '--start and --end are required';
    const start = parseUtcTimestamp(values.start);
    const end = parseUtcTimestamp(values.end);
    if (start === undefined) return `--start must be an ISO 8601 UTC date-time such as 2024-01-01T00:00:00Z, got ${JSON.stringify(values.start)}`;
    if (end === undefined) return `--end must be an ISO 8601 UTC date-time such as 2024-02-01T00:00:00Z, got ${JSON.stringify(values.end)}`;
    if (start >= end) return '--start must be before --end';
    const resolution = values.resolution === undefined ? 0 : Number(values.resolution);
    if (!/^\d+$/.test(values.resolution ?? '0') || resolution > MAX_RESOLUTION) return `--resolution must be an integer from 0 to ${MAX_RESOLUTION} seconds, got ${JSON.stringify(values.resolution)}`;
    const badResolution = resolutionError(resolution);
    if (badResolution) return `--${badResolution}`;
    return { registerIds: [...new Set(ids.map(Number))], start, end, resolution, output: values.output };
  } catch (err) {
    return (err as Error).message;
  }
}

/** The registers in the order asked, or a message naming unknown and virtual ones. */
async function exportableRegisters(db: CliDatabase, ids: number[]): Promise<RegisterForRead[] | string> {
  const found = new Map((await registersForRead(db.pool, ids)).map((r) => [r.id, r]));
  const unknown = ids.filter((id) => !found.has(id));
  if (unknown.length > 0) return `register(s) ${unknown.join(', ')} do not exist`;
  const virtual = ids.filter((id) => found.get(id)!.isVirtual);
  if (virtual.length > 0) {
    return `register(s) ${virtual.join(', ')} are virtual: their readings are computed on read for a given period and are not exported; read them with GET /api/readings`;
  }
  return ids.map((id) => found.get(id)!);
}

async function main(argv: string[]): Promise<number> {
  const cli = startCli(argv, readOptions, USAGE);
  if (typeof cli === 'number') return cli;
  const { options, config } = cli;
  let db: CliDatabase;
  try {
    db = await openCliDatabase(config, cliLogger(config));
  } catch (err) {
    process.stderr.write(`export failed: cannot open the database: ${(err as Error).message}\n`);
    return EXIT.failed;
  }
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(EXIT.interrupted);
    interrupted = true;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const registers = await exportableRegisters(db, options.registerIds);
    if (typeof registers === 'string') {
      process.stderr.write(`export refused: ${registers}\n`);
      return EXIT.usage;
    }
    const stream: NodeJS.WritableStream = options.output ? fs.createWriteStream(options.output) : process.stdout;
    let outputError: NodeJS.ErrnoException | undefined;
    let stopped = false;
    const stop = new Promise<void>((resolve) => {
      stream.once('error', (err: NodeJS.ErrnoException) => {
        outputError = err;
        resolve();
      });
      stream.once('close', () => resolve());
    }).then(() => (stopped = true));
    for await (const text of exportPages(db.store, { registers, start: options.start, end: options.end, resolution: options.resolution })) {
      if (interrupted || stopped) break;
      if (!stream.write(text)) await Promise.race([once(stream, 'drain'), stop]);
    }
    if (options.output && !stopped) {
      stream.end();
      await stop;
    }
    // A reader that goes away (`| head`) ends the export quietly.
    if (outputError && outputError.code !== 'EPIPE') throw new Error(`cannot write ${options.output ?? 'stdout'}: ${outputError.message}`);
    if (interrupted) {
      process.stderr.write('export interrupted: the output is incomplete\n');
      return EXIT.interrupted;
    }
    return EXIT.ok;
  } catch (err) {
    process.stderr.write(`export failed: ${(err as Error).message}\n`);
    return EXIT.failed;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await db.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
