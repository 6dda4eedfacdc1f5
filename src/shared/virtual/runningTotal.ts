// sumPreviousValues: each bucket shows the total of all earlier values and its own, optionally
// restarting every day at a local time of day (timeOfDay + timeZone).
//
// Rules (docs/virtual-registers.md, "Running total"):
// - A bucket belongs to the period in which it starts: with a reset at 06:00, the bucket
//   starting 06:00 is the first of the new period; an hourly bucket starting 05:00 is the last
//   of the old one even though it ends at 06:00.
// - Resets happen at the UTC instant of the local time on each local day, so the period is
//   23 h or 25 h long across a clock change; a reset time inside a spring gap resets at the
//   gap-shifted instant (02:30 → 03:30), one inside the autumn overlap at its first occurrence.
// - A missing value (NaN) gives NaN for its own bucket and adds nothing: the total carries on
//   with the values that are present.
// - The series starts from `initialTotal` (default 0): the sum of the values in the current
//   period before timestamps[0]. The engine either loads from previousResetInstant(…) or passes
//   that sum (for a register without reset: the sum of all earlier readings).
import { fail } from './errors.ts';
import { assertSeries } from './series.ts';
import { assertTimeZone, instantOnDay, localDayAt, localDayIndex, timeOfDayOrFail } from './time.ts';

export interface RunningTotalOptions {
  /** 'HH:MM:SS': the local time at which the total restarts from 0 each day. */
  resetTimeOfDay?: string;
  /** IANA zone of resetTimeOfDay; default 'UTC'. */
  timeZone?: string;
  /** Sum of the current period's values before timestamps[0]; default 0. */
  initialTotal?: number;
}

/** The reset instant on local day number `index`. */
function resetOn(index: number, seconds: number, timeZone: string): number {
  return instantOnDay(localDayAt(index, timeZone), seconds, 'forward');
}

/** The first reset instant strictly after `ms`. */
export function nextResetInstant(ms: number, timeOfDay: string, timeZone: string): number {
  const seconds = timeOfDayOrFail(timeOfDay).seconds;
  let index = localDayIndex(ms, timeZone) - 1;
  while (resetOn(index, seconds, timeZone) <= ms) index += 1;
  return resetOn(index, seconds, timeZone);
}

/** The last reset instant at or before `ms`: where the period containing `ms` began. */
export function previousResetInstant(ms: number, timeOfDay: string, timeZone: string): number {
  const seconds = timeOfDayOrFail(timeOfDay).seconds;
  let index = localDayIndex(ms, timeZone) + 1;
  while (resetOn(index, seconds, timeZone) > ms) index -= 1;
  return resetOn(index, seconds, timeZone);
}

export function runningTotal(timestamps: Float64Array, values: Float64Array, options: RunningTotalOptions = {}): Float64Array {
  assertSeries(timestamps, values, 'series');
  const { resetTimeOfDay, timeZone = 'UTC', initialTotal = 0 } = options;
  if (!Number.isFinite(initialTotal)) fail('invalid_input', `initialTotal must be a finite number, got ${initialTotal}`);
  assertTimeZone(timeZone);
  const seconds = resetTimeOfDay === undefined ? NaN : timeOfDayOrFail(resetTimeOfDay).seconds;

  const n = timestamps.length;
  const out = new Float64Array(n);
  let total = initialTotal;
  // The reset instants are walked day by day (resolved local days are cached), so there is
  // one Intl lookup for the whole series, not one per bucket or per day.
  let resetDay = Number.isNaN(seconds) || n === 0 ? NaN : localDayIndex(timestamps[0]!, timeZone) - 1;
  let nextReset = Number.isNaN(resetDay) ? Infinity : resetOn(resetDay, seconds, timeZone);
  while (nextReset <= timestamps[0]!) nextReset = resetOn(++resetDay, seconds, timeZone);
  for (let i = 0; i < n; i++) {
    const t = timestamps[i]!;
    if (t >= nextReset) {
      total = 0;
      while (nextReset <= t) nextReset = resetOn(++resetDay, seconds, timeZone);
    }
    const v = values[i]!;
    if (Number.isNaN(v)) {
      out[i] = NaN;
      continue;
    }
    total += v;
    out[i] = total;
  }
  return out;
}
