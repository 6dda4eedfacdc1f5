// Virtual registers, computed on read (docs/virtual-registers.md).
import type { RegisterForRead } from './meterStore.ts';

/** A virtual register's values at its defaultResolution: one bucket per interval of the
 * period, NaN where it cannot be computed (missing source data). */
export interface ComputedSeries {
  timestamps: Float64Array;
  /** End of each bucket (a local day can be 23 or 25 hours long). */
  ends: Float64Array;
  values: Float64Array;
  /** Latest updatedAt of the source readings behind each value (NaN when none). */
  updatedAt: Float64Array;
}

/** What the engine needs of a readings query (readingsQuery.ts's ReadingsQuery extends it):
 * the period [start, end) and the bucketing. */
export interface ReadWindow {
  start: number;
  end: number;
  /** 0 = as stored; otherwise bucket length in seconds. */
  resolution: number;
  /** Average every bucket whatever the register kind (the hourly-average endpoint). */
  forceAverage?: boolean;
  /** UTC ms: sources read as recorded at that instant (undefined: now). */
  asOf?: number;
}

export interface VirtualEngine {
  /** The register's readings for the query, as a JSON array like the stored ones (UTF-8). */
  readingsJson(register: RegisterForRead, query: ReadWindow): Promise<Buffer>;
  /** The register's values over [start, end) for computations (delivery validation); with
   * `asOf`, from its sources as recorded at that instant. */
  series(register: RegisterForRead, start: number, end: number, asOf?: number): Promise<ComputedSeries>;
}
