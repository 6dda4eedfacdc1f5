// Same-day adjustment of a high-X-of-Y baseline: scale or shift it so that it matches what
// the register actually read in the hours just before the event.
//
// Window: the `windowHours` hours (default 3) ending `gapHours` hours (default 1) before the
// day's anchor (the first interval of its event window, baselineDays.ts), in elapsed time (so
// across a clock change it is still 3 hours of data): intervals starting in
// [anchor − (gap + window) h, anchor − gap h).
// The window's baseline is built from the same chosen days, by local clock time (a window
// interval on the day before the target maps to the day before each chosen day).
//
// Every window interval must have an actual value and a value on every chosen day; otherwise
// the adjusted baseline of that day is NaN, not the unadjusted one: a day-ahead request, made
// before the window's readings arrive, must not return a number that changes silently later.
import type { BaselineContext } from './baselineContext.ts';
import type { SameDayAdjustment } from './baselineAlgorithms.ts';
import { HOUR_MS, localDayNear, wallSecondsOf, type LocalDay } from './time.ts';

export interface WindowMeans {
  actual: number;
  baseline: number;
  intervals: number;
}

export function windowMeans(
  context: BaselineContext,
  target: LocalDay,
  anchor: number,
  chosenDays: readonly LocalDay[],
  windowHours: number,
  gapHours: number,
): WindowMeans | undefined {
  const end = anchor - gapHours * HOUR_MS;
  const start = end - windowHours * HOUR_MS;
  let actualSum = 0;
  let baselineSum = 0;
  let intervals = 0;
  let day = target;
  for (let t = start; t < end; t += context.resolutionMs) {
    const actual = context.lookup.valueAt(t);
    if (Number.isNaN(actual)) return undefined;
    day = localDayNear(t, day, context.timeZone);
    const seconds = wallSecondsOf(t, day);
    const shift = day.index - target.index;
    for (const chosen of chosenDays) {
      const v = context.valueAtClock(context.day(chosen.index + shift), seconds);
      if (Number.isNaN(v)) return undefined;
      baselineSum += v;
    }
    actualSum += actual;
    intervals += 1;
  }
  if (intervals === 0) return undefined;
  return { actual: actualSum / intervals, baseline: baselineSum / (intervals * chosenDays.length), intervals };
}

/**
 * additive: baseline + (actual mean − baseline mean), the shift limited to ±cap × |baseline mean|;
 * multiplicative: baseline × actual mean / baseline mean, the ratio limited to [1 − cap, 1 + cap].
 * A window whose baseline mean is 0 gives no ratio: multiplicative leaves the baseline as is.
 */
export function applyAdjustment(kind: Exclude<SameDayAdjustment, 'none'>, profile: Float64Array, means: WindowMeans, cap: number): Float64Array {
  const out = new Float64Array(profile.length);
  if (kind === 'additive') {
    const limit = cap === Infinity ? Infinity : cap * Math.abs(means.baseline);
    const shift = Math.min(limit, Math.max(-limit, means.actual - means.baseline));
    for (let i = 0; i < out.length; i++) out[i] = profile[i]! + shift;
    return out;
  }
  let ratio = means.baseline === 0 ? 1 : means.actual / means.baseline;
  ratio = Math.min(1 + cap, Math.max(1 - cap, ratio));
  for (let i = 0; i < out.length; i++) out[i] = profile[i]! * ratio;
  return out;
}
