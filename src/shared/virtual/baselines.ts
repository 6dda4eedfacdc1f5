// Baselines: what a register would have read without a flexibility event, computed from its
// own history. Pure: the engine loads the history, this computes. Definitions, with worked
// examples that match test/unit/virtual/baselines.test.ts: docs/virtual-registers.md.
//
// All mapping between days is by local clock time in the register's zone, never by ±24 h:
// the 17:00 interval of a day is compared with the 17:00 intervals of other days, also
// across clock changes. A clock time that does not exist on a reference day (spring gap) has
// no value there; one that exists twice (autumn overlap) means its first occurrence.
import { fail } from './errors.ts';
import {
  BASELINE_ALGORITHMS,
  BASELINE_DEFAULTS,
  BaselineAlgorithm,
  baselineSearchDays,
  isBaselineAlgorithm,
  type BaselineAlgorithmSpec,
  type BaselineOptions,
} from './baselineAlgorithms.ts';
import { applyAdjustment, windowMeans } from './baselineAdjustment.ts';
import { BaselineContext } from './baselineContext.ts';
import { assertAscending, assertSeries } from './series.ts';
import { assertTimeZone, dayIndexOfKey, splitByLocalDay, wallSecondsOf, weekdayTypeOfIndex, type LocalDay } from './time.ts';

export { BaselineAlgorithm, BASELINE_ALGORITHMS, baselineLookbackDays, isBaselineAlgorithm, type BaselineOptions } from './baselineAlgorithms.ts';

export interface BaselineInput {
  /** Bucket starts (UTC ms, ascending) to compute the baseline for; the result aligns with them. */
  targetTimestamps: Float64Array;
  resolutionSeconds: number;
  /** IANA zone that defines the register's days (virtualDefinition.timeZone). */
  timeZone: string;
  /** The source register at the same resolution, covering the lookback days and the target days. */
  history: { timestamps: Float64Array; values: Float64Array };
  /** Local days ('YYYY-MM-DD') never used as similar days, e.g. days with events. */
  excludedDays?: readonly string[];
  options?: BaselineOptions;
}

interface Settings {
  cap: number;
  windowHours: number;
  gapHours: number;
  searchDays: number;
  /** Excluded days as day numbers. */
  excluded: ReadonlySet<number>;
}

function settingsOf(s: BaselineAlgorithmSpec, input: BaselineInput): Settings {
  const o = input.options ?? {};
  const cap = o.adjustmentCap ?? BASELINE_DEFAULTS.adjustmentCap;
  const windowHours = o.adjustmentWindowHours ?? BASELINE_DEFAULTS.adjustmentWindowHours;
  const gapHours = o.adjustmentGapHours ?? BASELINE_DEFAULTS.adjustmentGapHours;
  if (!(cap >= 0)) fail('invalid_input', `adjustmentCap must be ≥ 0 (Infinity for no cap), got ${cap}`);
  if (!(windowHours > 0 && Number.isFinite(windowHours))) fail('invalid_input', `adjustmentWindowHours must be > 0, got ${windowHours}`);
  if (!(gapHours >= 0 && Number.isFinite(gapHours))) fail('invalid_input', `adjustmentGapHours must be ≥ 0, got ${gapHours}`);
  const resolution = input.resolutionSeconds;
  if (s.adjustment !== 'none' && ((windowHours * 3600) % resolution !== 0 || (gapHours * 3600) % resolution !== 0)) {
    fail('invalid_input', `adjustment window (${windowHours} h, ${gapHours} h before) must be whole intervals of ${resolution} s`);
  }
  const excludedDays = input.excludedDays ?? [];
  if (!Array.isArray(excludedDays)) fail('invalid_input', 'excludedDays must be an array of day keys');
  const excluded = new Set(excludedDays.map(dayIndexOfKey));
  const searchDays = o.maxLookbackDays ?? baselineSearchDays(s.y, excluded.size);
  if (!(Number.isInteger(searchDays) && searchDays >= 1)) fail('invalid_input', `maxLookbackDays must be a positive integer, got ${searchDays}`);
  return { cap, windowHours, gapHours, searchDays, excluded };
}

/**
 * The baseline of `algorithm` for each of `input.targetTimestamps`: NaN where it cannot be
 * computed (missing history, too few similar days, incomplete adjustment window), never a
 * silent 0. Throws a RangeError with a `code` (errors.ts) on bad input.
 */
export function computeBaseline(algorithm: BaselineAlgorithm, input: BaselineInput): Float64Array {
  if (!isBaselineAlgorithm(algorithm)) fail('unknown_algorithm', `unknown baseline algorithm ${JSON.stringify(algorithm)}`);
  const s = BASELINE_ALGORITHMS[algorithm];
  const targets = input.targetTimestamps;
  assertAscending(targets, 'targetTimestamps');
  if (s.method === 'zero') return new Float64Array(targets.length);

  assertTimeZone(input.timeZone);
  const resolution = input.resolutionSeconds;
  if (!(Number.isFinite(resolution) && resolution > 0)) fail('invalid_input', `resolutionSeconds must be > 0, got ${resolution}`);
  assertSeries(input.history?.timestamps, input.history?.values, 'history');
  const settings = settingsOf(s, input);
  const context = new BaselineContext(input.history, resolution * 1000, input.timeZone);

  const out = new Float64Array(targets.length).fill(NaN);
  for (const run of splitByLocalDay(targets, input.timeZone)) {
    const clock = new Float64Array(run.to - run.from);
    for (let i = 0; i < clock.length; i++) clock[i] = wallSecondsOf(targets[run.from + i]!, run.day);
    if (s.method === 'previousDay') {
      const previous = context.day(run.day.index - 1);
      for (let i = 0; i < clock.length; i++) out[run.from + i] = context.valueAtClock(previous, clock[i]!);
      continue;
    }
    const similar = highXOfY(context, run.day, clock, s.x, s.y, settings);
    if (similar === undefined) continue;
    let profile = similar.profile;
    if (s.adjustment !== 'none') {
      const means = windowMeans(context, run.day, targets[run.from]!, similar.days, settings.windowHours, settings.gapHours);
      if (means === undefined) continue;
      profile = applyAdjustment(s.adjustment, profile, means, settings.cap);
    }
    out.set(profile, run.from);
  }
  return out;
}

export interface SimilarDays {
  /** The X chosen days, highest window total first. */
  days: LocalDay[];
  /** The interval-by-interval mean of the chosen days over the target intervals. */
  profile: Float64Array;
}

/**
 * High X of Y: walk back from the target day over at most `searchDays` calendar days, keep
 * the first Y days of the same weekday type that are not excluded and have a value for every
 * target clock time; choose the X with the highest total over those clock times (on a tie
 * the more recent day) and average them interval by interval. Fewer than X usable days:
 * undefined (the caller writes NaN).
 */
export function highXOfY(
  context: BaselineContext,
  target: LocalDay,
  clock: Float64Array,
  x: number,
  y: number,
  settings: Pick<Settings, 'searchDays' | 'excluded'>,
): SimilarDays | undefined {
  const type = weekdayTypeOfIndex(target.index);
  const usable: { day: LocalDay; values: Float64Array; total: number }[] = [];
  for (let back = 1; back <= settings.searchDays && usable.length < y; back++) {
    const index = target.index - back;
    if (weekdayTypeOfIndex(index) !== type || settings.excluded.has(index)) continue;
    const day = context.day(index);
    if (day.end <= context.lookup.start) break; // before the history: nothing more to find
    const values = new Float64Array(clock.length);
    let total = 0;
    let complete = true;
    for (let i = 0; i < clock.length && complete; i++) {
      const v = context.valueAtClock(day, clock[i]!);
      complete = !Number.isNaN(v);
      values[i] = v;
      total += v;
    }
    if (complete) usable.push({ day, values, total });
  }
  if (usable.length < x) return undefined;
  // Array.prototype.sort is stable: equal totals keep their recency order.
  const chosen = [...usable].sort((a, b) => b.total - a.total).slice(0, x);
  const profile = new Float64Array(clock.length);
  for (const day of chosen) for (let i = 0; i < profile.length; i++) profile[i] = profile[i]! + day.values[i]!;
  for (let i = 0; i < profile.length; i++) profile[i] = profile[i]! / x;
  return { days: chosen.map((d) => d.day), profile };
}
