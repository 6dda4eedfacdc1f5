// The time-series store: where readings live, and the only code that reads or writes them.
// Two backends behind this small interface, chosen by configuration (TIMESERIES_BACKEND):
// PostgreSQL (default, needs nothing extra) and QuestDB (large installations). Domains talk only
// to this interface; what a backend does inside (COPY, ILP, …) stays inside.
//
// Writes: one path, `write()`. A POST /api/readings body goes in as bytes; the backend has the
// worker pool parse, validate and encode it in its own wire format, asks the caller's resolver
// for the register ids of the body's series (the meter domain resolves externalIds and checks
// access), and stores the whole batch or nothing. Rows already in columns (the CSV import,
// reference readings) go in the same way with their register ids.
//
// Reads that go straight to an HTTP response return each register's readings as a JSON array,
// built by readingJson.ts for both backends; reads that feed computations (virtual registers,
// baselines, delivery validation, export) return typed arrays.
import type { FieldError, ParsedSeries } from '../../shared/readings/parseReadings.ts';
import type { Queryable } from '../database.ts';

export type { FieldError, ParsedSeries };

/** Register ids of a body's series, in order. Throwing refuses the batch: nothing is stored and
 * the error reaches the caller of write() unchanged. */
export type RegisterResolver = (series: readonly ParsedSeries[]) => Promise<number[]>;

/** Rows of known registers: series s (register registerIds[s]) is rows offsets[s] .. offsets[s+1]-1,
 * sorted by time with unique timestamps (parseReadings.ts `group` builds this). */
export interface ReadingRows {
  registerIds: ArrayLike<number>;
  offsets: Int32Array;
  timestamps: Float64Array;
  values: Float64Array;
  /** Seconds each reading covers. */
  resolutions: Int32Array;
}

/** A POST /api/readings body (`{"meters":[…]}`) and the resolver of its (meter, register) series. */
export interface BodyInput {
  body: Uint8Array;
  resolve: RegisterResolver;
  /** Becomes `updatedAt` of every row written (default: now); a correction moves it. */
  updatedAtMs?: number;
}

/** Rows already validated, of known registers (the CSV import, reference readings). */
export interface RowsInput {
  rows: ReadingRows;
  updatedAtMs?: number;
}

export type ReadingsInput = BodyInput | RowsInput;

/** A body that is not valid JSON (`syntax`) or holds refused values: nothing was stored. */
export type WriteOutcome = { ok: true; readings: number } | { ok: false; syntax: boolean; errors: FieldError[] };

/** Numeric readings of one register, time-ordered. */
export interface Series {
  registerId: number;
  timestamps: Float64Array;
  values: Float64Array;
  /** Seconds each row covers: periodTo = timestamp + resolution (a local day: 82,800–90,000). */
  resolutions: Int32Array;
  updatedAt: Float64Array;
}

export interface RangeQuery {
  registerIds: readonly number[];
  /** UTC ms, inclusive. */
  start: number;
  /** UTC ms, exclusive. */
  end: number;
  /** UTC ms: the answer as recorded at that instant (undefined: now). */
  asOf?: number;
}

export interface BucketQuery {
  registers: readonly { id: number; aggregate: 'sum' | 'avg'; timeZone: string }[];
  start: number;
  end: number;
  /** Bucket length in seconds; 86400 buckets start at local midnight of the register's zone. */
  resolutionSeconds: number;
  /** UTC ms: the answer as recorded at that instant (undefined: now). */
  asOf?: number;
}

/** One value a reading has had: what was recorded at `recordedAt`, current until `supersededAt`. */
export interface ReadingVersion {
  timestamp: number;
  value: number;
  resolution: number;
  /** UTC ms */
  recordedAt: number;
  /** UTC ms; null for the current version */
  supersededAt: number | null;
}

/** Has any of these registers a reading in [start, end) (UTC ms) updated after `since` (UTC ms)? */
export interface ChangeQuery {
  registerIds: readonly number[];
  start: number;
  end: number;
  since: number;
}

export class TooManyPoints extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} points`);
  }
}

/** A computed value (a bucket's sum or average, a virtual register's) is beyond the largest double
 * (±1.8e308): JSON has no number for it, and the published Reading's `value` is a number. Both
 * backends answer the same (readingJson.ts throws it; GET /api/readings answers 422). */
export class ValueOutOfRange extends Error {
  constructor(
    readonly registerId: number,
    readonly timestamp: number,
  ) {
    super(`the value of register ${registerId} at ${new Date(timestamp).toISOString()} is beyond ±${Number.MAX_VALUE}`);
  }
}

/** The backend could not be reached (or kept failing) in time; a write that throws this was
 * not acknowledged, and is completed later if it was accepted (QuestDB: the pending-batch journal). */
export class TimeSeriesUnavailable extends Error {}

export interface TimeSeriesStore {
  readonly backend: 'postgres' | 'questdb';
  /** Stores the readings atomically: all rows or none. A stored (register, timestamp) whose value
   * or resolution changes is replaced, its updatedAt moves and its former version is kept
   * (versions(), asOf); one posted again unchanged keeps its version and updatedAt. Within one
   * input the last of equal timestamps wins; between concurrent inputs, the last committed. */
  write(input: ReadingsInput): Promise<WriteOutcome>;
  /** Readings as stored, per register with data, as JSON arrays of Reading (UTF-8). Throws TooManyPoints.
   * With `asOf`, every read answers as it would have at that instant: readings recorded later are
   * absent or show the value they had then, and `updatedAt` is the recordedAt of the version shown. */
  readJson(query: RangeQuery, maxPoints: number): Promise<Map<number, Buffer>>;
  /** Readings summed or averaged into buckets (only buckets with data), same JSON shape;
   * `resolution` of a bucket is the length asked for (86400 also on a 23-hour local day). */
  bucketsJson(query: BucketQuery): Promise<Map<number, Buffer>>;
  /** Numeric readings for computations, one Series per register asked, in that order. */
  readSeries(query: RangeQuery): Promise<Series[]>;
  /** Numeric bucketed readings (bucket starts; resolutions = real bucket lengths), one per register. */
  bucketSeries(query: BucketQuery): Promise<Series[]>;
  /** For each query, whether readings were corrected (or added) after its `since`: delivery
   * validation re-validates figures computed from readings that changed since. */
  changedSince(queries: readonly ChangeQuery[]): Promise<boolean[]>;
  /** Every version of each (register, timestamp) in [start, end) that has more than one, ordered by timestamp then recordedAt. Throws TooManyPoints past maxPoints versions. */
  versions(query: RangeQuery, maxPoints: number): Promise<Map<number, ReadingVersion[]>>;
  hasReadings(registerId: number): Promise<boolean>;
  deleteRegister(registerId: number): Promise<void>;
  /** Background work the backend needs, run by the platform's periodic jobs (QuestDB: replaying
   * orphaned batches, purging deleted registers' rows); each step returns the items it did. */
  readonly periodicWork?: readonly { name: string; intervalMs: number; step(): Promise<number> }[];
  /** Called in the platform database transaction that changed a register's time zone, after the
   * change (the PostgreSQL store rebuilds its daily pieces there; optional). */
  timeZoneChanged?(tx: Queryable, registerId: number): Promise<void>;
  close(): Promise<void>;
}
