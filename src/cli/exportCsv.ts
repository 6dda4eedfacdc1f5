#!/usr/bin/env node
// `flex-export --register REF [--register REF ...] --start ISO --end ISO [--resolution SECONDS] [--as-of ISO] [--output FILE] [--url URL --token TOKEN [--organization ID]]`
// Writes readings as CSV (registerId,timestamp,periodTo,updatedAt,value,resolution) to stdout or
// FILE, page by page (docs/import-export.md), from the database (DATABASE_URL or the embedded
// PostgreSQL of DATA_DIR) or, with --url, through a running server's GET /api/readings. A
// register is named by its numeric id or as METER/REGISTER (externalIds, or numeric ids, of the
// meter and of the register on it). With --as-of the readings are exported as recorded at that
// instant (one consistent snapshot however long the export takes). Progress and the summary go to stderr: stdout carries only
// the CSV. Virtual registers are refused: they are computed on read over the requested period
// (a running total depends on where the period starts), which a paged export cannot reproduce.
// Exit codes: 0 done, 1 failed (database, server, output), 2 bad usage or unknown/virtual
// register, 130 interrupted.
import { once } from 'node:events';
import fs from 'node:fs';
import type { Config } from '../config.ts';
import { parseUtcTimestamp } from '../http/validation.ts';
import { lookupSeries } from '../meter/ingest.ts';
import { registersForRead, type RegisterForRead } from '../meter/meterStore.ts';
import { resolutionError } from '../meter/readingsQuery.ts';
import { cliLogger, openCliDatabase, startCli, type CliDatabase } from './cliDatabase.ts';
import { parseToolArgs, sharedOptions, type SharedOptions } from './cliOptions.ts';
import { exportPages } from './exportReadings.ts';
import { Progress } from './progress.ts';
import { RemoteApi } from './remote.ts';
import { remotePages, resolveRemoteRegisters } from './remoteExport.ts';
import { summary } from './summary.ts';

const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;
const MAX_RESOLUTION = 31 * 86400; // as GET /api/readings

const USAGE = `usage: flex-export --register REF [--register REF ...] --start ISO --end ISO [--resolution SECONDS] [--as-of ISO] [--output FILE]
                   [--url URL --token TOKEN [--organization ID]]
  (from the source tree: npm run -s export -- …; -s keeps npm's banner out of stdout)
  --register REF       a numeric register id (as in GET /api/readings) or METER/REGISTER: the meter's
                       externalId (or id) and the register's externalId (or id) on it; repeat, or
                       separate with commas
  --start, --end       ISO 8601 UTC (…Z): start inclusive, end exclusive
  --resolution S       0 (default) = readings as stored; S > 0 = S-second buckets (86400 = local days),
                       energy and volume summed, other quantities averaged; S must divide a day
                       evenly or be a whole number of days
  --as-of ISO          the readings as recorded at this instant, ISO 8601 UTC (default: now, page by
                       page); not before the versions kept (READING_VERSIONS_RETENTION)
  --output FILE        write to FILE instead of stdout
  --progress-interval S  seconds between progress lines when stderr is not a terminal (default 5)
  --url URL, --token TOKEN  remote mode: read through GET /api/readings of this server with this bearer
                       token (or FLEX_URL, FLEX_TOKEN); METER/REGISTER needs a global administrator token
  --organization ID    remote mode: the organization whose access is used (default: the token's own)`;

type RegisterRef = { id: number } | { meter: string; register: string };
type NamedRef = { meter: string; register: string };

interface Options extends SharedOptions {
  registers: RegisterRef[];
  organizationId: number | undefined;
  start: number;
  end: number;
  resolution: number;
  asOf: number | undefined;
  output: string | undefined;
}

function readOptions(argv: string[]): Options | string {
  try {
    const { values, positionals } = parseToolArgs(argv, {
      register: { type: 'string', multiple: true },
      start: { type: 'string' },
      end: { type: 'string' },
      resolution: { type: 'string' },
      'as-of': { type: 'string' },
      output: { type: 'string', short: 'o' },
      organization: { type: 'string' },
    });
    if (values.help) return '';
    if (positionals.length > 0) return `unexpected argument ${JSON.stringify(positionals[0])}`;
    const refs = (values.register ?? []).flatMap((r) => r.split(',')).map((r) => r.trim());
    if (refs.length === 0) return '--register is required';
    const registers: RegisterRef[] = [];
    for (const ref of refs) {
      const slash = ref.indexOf('/');
      if (slash > 0 && slash < ref.length - 1) registers.push({ meter: ref.slice(0, slash), register: ref.slice(slash + 1) });
      else if (/^\d+$/.test(ref) && Number(ref) >= 1 && Number(ref) <= 2 ** 31 - 1) registers.push({ id: Number(ref) });
      else return `--register must be a numeric register id or METER/REGISTER (externalIds of the meter and its register), got ${JSON.stringify(ref)}`;
    }
    const shared = sharedOptions(values);
    if (typeof shared === 'string') return shared;
    const organization = values.organization;
    if (organization !== undefined && !shared.remote) return '--organization is for remote mode (--url)';
    if (organization !== undefined && !/^\d+$/.test(organization)) return `--organization must be a numeric organization id, got ${JSON.stringify(organization)}`;
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
    const asOfText = values['as-of'];
    const asOf = asOfText === undefined ? undefined : parseUtcTimestamp(asOfText);
    if (asOfText !== undefined && asOf === undefined) return `--as-of must be an ISO 8601 UTC date-time such as 2024-03-01T00:00:00Z, got ${JSON.stringify(asOfText)}`;
    return {
      ...shared,
      registers,
      organizationId: organization === undefined ? undefined : Number(organization),
      start,
      end,
      resolution,
      asOf,
      output: values.output,
    };
  } catch (err) {
    return (err as Error).message;
  }
}

/** Register ids of the references in the order asked, without repeats, or a refusal message. */
async function localRegisterIds(db: CliDatabase, refs: readonly RegisterRef[]): Promise<number[] | string> {
  const named = refs.filter((r): r is NamedRef => 'meter' in r);
  const lookups = named.length > 0 ? await lookupSeries(db.pool, named.map((p) => ({ meterId: p.meter, registerId: p.register })), null, true) : [];
  const problems: string[] = [];
  let k = 0;
  const ids = refs.map((ref) => {
    if ('id' in ref) return ref.id;
    const lookup = lookups[k++]!;
    if ('registerId' in lookup) return lookup.registerId;
    problems.push(`${ref.meter}/${ref.register}: ${lookup.message}`);
    return 0;
  });
  return problems.length > 0 ? problems.join('; ') : [...new Set(ids)];
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

interface Source {
  pages: AsyncGenerator<string>;
  registers: number;
  where: string;
  close(): Promise<void>;
}

/** The pages to write (database or server), or a refusal message (exit 2). */
async function openSource(o: Options, config: Config, signal: AbortSignal): Promise<Source | string> {
  if (o.remote) {
    const api = new RemoteApi(o.remote, signal);
    const named = await resolveRemoteRegisters(api, o.registers.filter((r): r is NamedRef => 'meter' in r));
    if (typeof named === 'string') return named;
    let k = 0;
    const ids = [...new Set(o.registers.map((r) => ('id' in r ? r.id : named[k++]!)))];
    const organizationId = o.organizationId ?? (await api.getJson<{ organizationId: number | null }>('/api/me')).organizationId;
    if (organizationId === null) return 'the token belongs to no organization: name one with --organization';
    const pages = remotePages(api, { organizationId, registerIds: ids, start: o.start, end: o.end, resolution: o.resolution, asOf: o.asOf });
    return { pages, registers: ids.length, where: `${api.where} (GET /api/readings)`, close: async () => undefined };
  }
  if (o.asOf !== undefined) {
    const limit = config.readingVersionsRetention.cutoff(Date.now());
    if (o.asOf < limit) return `--as-of is before the reading versions kept (READING_VERSIONS_RETENTION ${config.readingVersionsRetention.text}): the earliest is now ${new Date(limit).toISOString()}`;
  }
  const db = await openCliDatabase(config, cliLogger(config));
  try {
    const ids = await localRegisterIds(db, o.registers);
    const registers = typeof ids === 'string' ? ids : await exportableRegisters(db, ids);
    if (typeof registers === 'string') {
      await db.close();
      return registers;
    }
    const pages = exportPages(db.store, { registers, start: o.start, end: o.end, resolution: o.resolution, asOf: o.asOf });
    return { pages, registers: registers.length, where: db.where, close: () => db.close() };
  } catch (err) {
    await db.close();
    throw err;
  }
}

/** The share of the export a page ends at, from its last row: register k of n, and time. */
function positionOf(text: string, o: Options, order: Map<number, number>, total: number): number {
  const lastLine = text.slice(text.lastIndexOf('\n', text.length - 2) + 1);
  const [registerId, timestamp] = lastLine.split(',');
  const k = order.get(Number(registerId));
  const t = Date.parse(timestamp ?? '');
  if (k === undefined || !Number.isFinite(t)) return 0;
  return (k + Math.min(1, (t - o.start) / (o.end - o.start))) / total;
}

async function main(argv: string[]): Promise<number> {
  const cli = startCli(argv, readOptions, USAGE);
  if (typeof cli === 'number') return cli;
  const { options, config } = cli;
  const controller = new AbortController();
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(EXIT.interrupted);
    interrupted = true;
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const started = performance.now();
  let rows = 0;
  let bytes = 0;
  let source: Source | undefined;
  const report = (outcome: string) =>
    process.stderr.write(
      summary(`export ${outcome}`, [['registers', source?.registers ?? 0], ['rows written', rows], ['bytes written', bytes]], rows, (performance.now() - started) / 1000),
    );
  const stoppedByUser = () => {
    report('interrupted');
    process.stderr.write('export interrupted: the output is incomplete\n');
    return EXIT.interrupted;
  };
  try {
    const opened = await openSource(options, config, controller.signal);
    if (typeof opened === 'string') {
      process.stderr.write(`export refused: ${opened}\n`);
      return EXIT.usage;
    }
    source = opened;
    const progress = new Progress(process.stderr, process.stderr.isTTY === true, options.progressIntervalMs, 'period');
    const order = new Map<number, number>();
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
    let header = true;
    for await (const text of opened.pages) {
      if (interrupted || stopped) break;
      if (header) header = false;
      else {
        for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) rows += 1;
        const lastLine = text.slice(text.lastIndexOf('\n', text.length - 2) + 1);
        const registerId = Number(lastLine.slice(0, lastLine.indexOf(',')));
        if (!order.has(registerId)) order.set(registerId, order.size);
        progress.update({ rows, rejected: 0, bytesRead: positionOf(text, options, order, opened.registers), totalBytes: 1 });
      }
      bytes += Buffer.byteLength(text);
      if (!stream.write(text)) await Promise.race([once(stream, 'drain'), stop]);
    }
    progress.done();
    if (options.output && !stopped) {
      stream.end();
      await stop;
    }
    // A reader that goes away (`| head`) ends the export quietly.
    if (outputError?.code === 'EPIPE') return EXIT.ok;
    if (outputError) throw new Error(`cannot write ${options.output ?? 'stdout'}: ${outputError.message}`);
    if (interrupted) return stoppedByUser();
    report(`to ${options.output ?? 'stdout'} finished`);
    return EXIT.ok;
  } catch (err) {
    if (interrupted) return stoppedByUser();
    process.stderr.write(`export failed: ${(err as Error).message}\n`);
    return EXIT.failed;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await source?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
