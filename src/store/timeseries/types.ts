// The time-series store: where readings live. Two implementations behind this small interface,
// chosen by configuration (TIMESERIES_BACKEND): PostgreSQL (default, needs nothing extra) and
// QuestDB (large installations). The meter domain talks only to this interface.
//
// Reads that go straight to an HTTP response return each register's readings already encoded
// as a JSON array: building the JSON where the rows are (PostgreSQL builds it in C) keeps the
// event loop to concatenating strings. Reads that feed computations (virtual registers,
// baselines, delivery validation) return typed arrays.

/** A validated batch: series (one per register) of rows sorted by time with unique timestamps. */
export interface WriteBatch {
  /** Register id of each series. */
  registerIds: ArrayLike<number>;
  /** Rows of series s are offsets[s] .. offsets[s+1]-1. */
  offsets: Int32Array;
  timestamps: Float64Array;
  values: Float64Array;
  resolutions: Int32Array;
  /** First instants (UTC ms) of the months the rows fall in. */
  months: number[];
  /** The same rows as a PostgreSQL binary COPY payload with register ids still 0 (encoded in a
   * worker when the store `acceptsPgCopy`). */
  pgCopy?: Buffer;
  /** Becomes `updatedAt` of every row (a correction moves it). */
  updatedAtMs: number;
}

/** Numeric readings of one register, time-ordered. */
export interface Series {
  registerId: number;
  timestamps: Float64Array;
  values: Float64Array;
  resolutions: Int32Array;
  updatedAt: Float64Array;
}

export interface RangeQuery {
  registerIds: readonly number[];
  /** UTC ms, inclusive. */
  start: number;
  /** UTC ms, exclusive. */
  end: number;
}

export interface BucketQuery {
  registers: readonly { id: number; aggregate: 'sum' | 'avg'; timeZone: string }[];
  start: number;
  end: number;
  /** Bucket length in seconds; 86400 buckets start at local midnight of the register's zone. */
  resolutionSeconds: number;
}

export class TooManyPoints extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} points`);
  }
}

/** A COPY into the readings table that is fed while the batch is still being parsed (PostgreSQL
 * only). Nothing is visible until finish(); abort() leaves nothing behind. */
export interface ReadingStream {
  /** Whether rows of these months (UTC month starts) can be written: the stream was opened for
   * other months, and their partitions cannot be created while it is open. */
  accepts(months: readonly number[]): Promise<boolean>;
  /** COPY rows (binary, no header) with register ids filled in. */
  write(rows: Buffer): Promise<void>;
  finish(): Promise<void>;
  abort(): Promise<void>;
}

export interface TimeSeriesStore {
  readonly backend: 'postgres' | 'questdb';
  /** Whether write() wants `pgCopy` (then the ingest worker encodes it). */
  readonly acceptsPgCopy: boolean;
  /** Stores the batch atomically: all rows or none. Existing (register, timestamp) rows are replaced. */
  write(batch: WriteBatch): Promise<void>;
  /** Readings as stored, per register, as JSON arrays of {timestamp, periodTo, updatedAt, value, resolution}. Throws TooManyPoints. */
  readJson(query: RangeQuery, maxPoints: number): Promise<Map<number, string>>;
  /** Readings summed or averaged into buckets (only buckets with data), same JSON shape. */
  bucketsJson(query: BucketQuery): Promise<Map<number, string>>;
  /** Numeric readings for computations. */
  readSeries(query: RangeQuery): Promise<Series[]>;
  /** Numeric bucketed readings for computations (bucket starts; resolution = bucket length). */
  bucketSeries(query: BucketQuery): Promise<Series[]>;
  /** A slot for one streaming write (its release function), or undefined when none is free now.
   * Absent with beginStream when the backend cannot stream. */
  reserveStream?(): (() => void) | undefined;
  /** Opens a streaming write into these months (partitions are created first). */
  beginStream?(months: readonly number[]): Promise<ReadingStream>;
  /** Whether any of the registers holds readings within its [low, high] (UTC ms) range. */
  overlaps?(registerIds: readonly number[], lows: readonly number[], highs: readonly number[]): Promise<boolean>;
  hasReadings(registerId: number): Promise<boolean>;
  deleteRegister(registerId: number): Promise<void>;
  close(): Promise<void>;
}
