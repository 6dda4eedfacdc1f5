// Virtual registers, computed on read (docs/virtual-registers.md).
import type { RegisterForRead } from './meterStore.ts';
import type { ReadingsQuery } from './readingsQuery.ts';

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

export interface VirtualEngine {
  /** The register's readings for the query, as a JSON array like the stored ones (UTF-8). */
  readingsJson(register: RegisterForRead, query: ReadingsQuery): Promise<Buffer>;
  /** The register's values over [start, end) for computations (delivery validation). */
  series(register: RegisterForRead, start: number, end: number): Promise<ComputedSeries>;
}
