// Checks and lookups shared by the series computations.
import { fail } from './errors.ts';

/** Refuses arrays that are not Float64Arrays of equal length with ascending finite timestamps. */
export function assertSeries(timestamps: unknown, values: unknown, name: string): asserts timestamps is Float64Array {
  if (!(timestamps instanceof Float64Array)) fail('invalid_input', `${name}.timestamps must be a Float64Array`);
  if (!(values instanceof Float64Array)) fail('invalid_input', `${name}.values must be a Float64Array`);
  if (timestamps.length !== values.length) {
    fail('invalid_input', `${name} has ${timestamps.length} timestamps but ${values.length} values`);
  }
  assertAscending(timestamps, name);
}

export function assertAscending(timestamps: unknown, name: string): asserts timestamps is Float64Array {
  if (!(timestamps instanceof Float64Array)) fail('invalid_input', `${name} must be a Float64Array`);
  let previous = -Infinity;
  for (let i = 0; i < timestamps.length; i++) {
    const t = timestamps[i]!;
    if (!Number.isFinite(t)) fail('invalid_input', `${name}[${i}] is not a finite timestamp`);
    if (t <= previous) fail('invalid_input', `${name} must be strictly ascending (index ${i})`);
    previous = t;
  }
}

/**
 * Value lookup by exact timestamp in an ascending series. Meter series are nearly always
 * regular, so the index is first guessed from the resolution (O(1)); a binary search covers
 * gaps in the series.
 */
export class SeriesLookup {
  private readonly first: number;
  private readonly step: number;

  constructor(
    private readonly timestamps: Float64Array,
    private readonly values: Float64Array,
    resolutionMs: number,
  ) {
    this.first = timestamps.length > 0 ? timestamps[0]! : 0;
    this.step = resolutionMs;
  }

  /** The value at exactly `ms`, or NaN when the series has no bucket starting there. */
  valueAt(ms: number): number {
    const ts = this.timestamps;
    const n = ts.length;
    if (n === 0 || Number.isNaN(ms)) return NaN;
    const guess = Math.round((ms - this.first) / this.step);
    if (guess >= 0 && guess < n && ts[guess] === ms) return this.values[guess]!;
    let low = 0;
    let high = n - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const t = ts[mid]!;
      if (t === ms) return this.values[mid]!;
      if (t < ms) low = mid + 1;
      else high = mid - 1;
    }
    return NaN;
  }

  get start(): number {
    return this.first;
  }
}
