// POST /api/readings, after the request is admitted: the body goes to a worker thread that
// parses, validates, groups and encodes it; the meters and registers it names are resolved and
// access-checked in one query; then the time-series store writes the whole batch atomically.
// Nothing is stored unless everything is valid.
import { HttpError, badRequest, type FieldError } from '../http/errors.ts';
import type { Principal } from '../http/types.ts';
import type { Queryable } from '../store/database.ts';
import type { TimeSeriesStore } from '../store/timeseries/types.ts';
import { transferableCopy, type WorkerPool } from '../workerPool.ts';
import type { ParseResult, ParseTask } from '../../workers/readings/task.ts';
import type { ParsedSeries } from '../../workers/readings/parseReadings.ts';
import { ChunkStreamer, type StreamOutcome } from './streamingIngest.ts';
import { MessageChannel } from 'node:worker_threads';

const MAX_LISTED = 20;

interface SeriesRow {
  i: number;
  meter: number | null;
  register: number | null;
  virtual: boolean | null;
  elsewhere: boolean;
  access: boolean;
}

/** A (meter, register) pair named by externalIds, as POST /api/readings and the CSV import name them. */
export interface SeriesName {
  meterId: string;
  registerId: string;
}

/** What a named series resolves to: its register id, or why readings cannot be stored for it
 * (`on` says whether the meter or the register field is at fault). */
export type SeriesLookup = { registerId: number } | { on: 'meter' | 'register'; message: string };

/** Resolves series names in one query, with the same rules for the API and the CSV import:
 * unknown meter, no access (when an organization is given), unknown register, register on another
 * meter, virtual register. */
export async function lookupSeries(db: Queryable, series: readonly SeriesName[], organizationId: number | null): Promise<SeriesLookup[]> {
  const { rows } = await db.query<SeriesRow>(
    `SELECT q.i::int AS i, m.id AS meter, r.id AS register, r.is_virtual AS virtual,
       EXISTS (SELECT 1 FROM registers o WHERE o.external_id = q.register_ext) AS elsewhere,
       (m.id IS NOT NULL AND ($3::int IS NULL OR EXISTS (SELECT 1 FROM meter_organizations mo WHERE mo.meter_id = m.id AND mo.organization_id = $3))) AS access
     FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS q(meter_ext, register_ext, i)
     LEFT JOIN meters m ON m.external_id = q.meter_ext
     LEFT JOIN registers r ON r.meter_id = m.id AND r.external_id = q.register_ext
     ORDER BY q.i`,
    [series.map((s) => s.meterId), series.map((s) => s.registerId), organizationId],
  );
  return rows.map((row, k): SeriesLookup => {
    const s = series[k]!;
    if (row.meter === null) return { on: 'meter', message: `unknown meter ${JSON.stringify(s.meterId)}` };
    if (!row.access) return { on: 'meter', message: `organization ${organizationId} has no access to meter ${JSON.stringify(s.meterId)}` };
    if (row.register === null) {
      return {
        on: 'register',
        message: row.elsewhere ? `register ${JSON.stringify(s.registerId)} is not on meter ${JSON.stringify(s.meterId)}` : `unknown register ${JSON.stringify(s.registerId)}`,
      };
    }
    if (row.virtual) return { on: 'register', message: `register ${JSON.stringify(s.registerId)} is virtual: its readings are computed, not posted` };
    return { registerId: row.register };
  });
}

/** Register ids of the series, or a 400 listing unknown meters/registers, virtual registers,
 * registers on another meter and meters the caller's organization has no access to. */
export async function resolveSeries(db: Queryable, series: readonly ParsedSeries[], principal: Principal): Promise<number[]> {
  const organizationId = principal.globalAdmin ? null : principal.organizationId;
  const lookups = await lookupSeries(db, series, organizationId);
  const errors: FieldError[] = [];
  const ids: number[] = [];
  const reportedMeters = new Set<string>();
  lookups.forEach((lookup, k) => {
    const s = series[k]!;
    if ('registerId' in lookup) {
      ids.push(lookup.registerId);
      return;
    }
    const problem: FieldError = { path: lookup.on === 'meter' ? s.meterPath : s.registerPath, message: lookup.message };
    // One message per meter problem, however many of its registers are named.
    const key = problem.path === s.meterPath ? `m:${s.meterPath}` : `r:${s.registerPath}`;
    if (!reportedMeters.has(key) && errors.length < MAX_LISTED) errors.push(problem);
    reportedMeters.add(key);
    ids.push(0);
  });
  if (errors.length > 0) throw badRequest('Invalid readings: nothing was stored', errors);
  return ids;
}

/** Bodies from this size on are streamed (parse and COPY overlap); smaller ones are not worth it. */
export const STREAM_MIN_BYTES = 4 * 1024 * 1024;
/** Rows per streamed chunk: small enough for the COPY to start early, large enough that the
 * per-chunk queries (register lookup, overlap check) stay negligible. */
export const STREAM_CHUNK_ROWS = 50_000;

export async function ingestReadings(db: Queryable, store: TimeSeriesStore, workers: WorkerPool, principal: Principal, body: Buffer): Promise<number> {
  const updatedAtMs = Date.now();
  const bytes = transferableCopy(body);
  const release = bytes.length >= STREAM_MIN_BYTES && store.beginStream && store.overlaps ? store.reserveStream?.() : undefined;
  const streaming = release !== undefined;
  const channel = streaming ? new MessageChannel() : undefined;
  const streamer = channel ? new ChunkStreamer(db, store, principal, resolveSeries) : undefined;
  if (channel && streamer) streamer.listen(channel.port1);
  const task: ParseTask = { body: bytes, encodePgCopy: store.acceptsPgCopy && !streaming, updatedAtMs, stream: channel?.port2, chunkRows: STREAM_CHUNK_ROWS };
  let parsed: ParseResult | undefined;
  let outcome: StreamOutcome = 'fallback';
  try {
    parsed = await workers.run<ParseResult>('readings/task', task, [bytes.buffer, ...(channel ? [channel.port2 as unknown as ArrayBuffer] : [])]);
  } finally {
    // Also when the worker failed: an open stream is rolled back and its connection returned.
    if (streamer) outcome = await streamer.settle(parsed?.chunks ?? 0, parsed?.ok ?? false);
    release?.();
  }
  if (!parsed.ok) {
    if (parsed.syntax) throw new HttpError('malformed_json', parsed.errors[0]!.message);
    throw badRequest('Invalid readings: nothing was stored', parsed.errors);
  }
  if (outcome === 'committed') return parsed.timestamps.length;
  const registerIds = await resolveSeries(db, parsed.series, principal);
  await store.write({
    registerIds,
    offsets: parsed.offsets,
    timestamps: parsed.timestamps,
    values: parsed.values,
    resolutions: parsed.resolutions,
    months: parsed.months,
    pgCopy: parsed.copy ? Buffer.from(parsed.copy.buffer, parsed.copy.byteOffset, parsed.copy.byteLength) : undefined,
    updatedAtMs,
  });
  return parsed.timestamps.length;
}
