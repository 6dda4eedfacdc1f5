// What the per-day baseline computations share (baselines.ts and baselineAdjustment.ts): the
// source register's history and the zone that defines its days.
import { SeriesLookup } from './series.ts';
import { instantOnDay, localDayAt, type LocalDay } from './time.ts';

export class BaselineContext {
  readonly lookup: SeriesLookup;

  constructor(
    history: { timestamps: Float64Array; values: Float64Array },
    readonly resolutionMs: number,
    readonly timeZone: string,
  ) {
    this.lookup = new SeriesLookup(history.timestamps, history.values, resolutionMs);
  }

  /** Local day number `index` (days since 1970-01-01), resolved once per zone and cached. */
  day(index: number): LocalDay {
    return localDayAt(index, this.timeZone);
  }

  /** The history value at clock time `seconds` on `day`; NaN when missing or nonexistent. */
  valueAtClock(day: LocalDay, seconds: number): number {
    return this.lookup.valueAt(instantOnDay(day, seconds, 'missing'));
  }
}
