// Baselines: what a register would have read without a flexibility event, computed from its
// own history. Pure: the engine loads the history, this computes. Definitions, with worked
// examples that match test/unit/virtual/baselines*.test.ts: docs/virtual-registers.md.
//
// Each target day is computed on its own, from its own plan (baselineDays.ts) and the days
// before it: the same figures whatever range it is asked in, and whatever happens later.
// All mapping between days is by local clock time in the register's zone, never by ±24 h:
// the 17:00 interval of a day is compared with the 17:00 intervals of other days, also
// across clock changes. A clock time that does not exist on a reference day (spring gap) has
// no value there; one that exists twice (autumn overlap) means its first occurrence.
import { fail } from './errors.ts';
import {
  BASELINE_ALGORITHMS,
  BASELINE_DEFAULTS,
  BaselineAlgorithm,
  DaySet,
  dayClassOf,
  isBaselineAlgorithm,
  searchDaysOf,
  type BaselineAlgorithmSpec,
  type BaselineOptions,
} from './baselineAlgorithms.ts';
import { applyAdjustment, windowMeans } from './baselineAdjustment.ts';
import { BaselineContext } from './baselineContext.ts';
import { dayIndicesOf, eventPeriodsOf, excludedDaySet, gridIndex, planDay, type DayPlan, type EventPeriod } from './baselineDays.ts';
import { assertAscending, assertSeries } from './series.ts';
import { assertTimeZone, splitByLocalDay, wallSecondsOf, type LocalDay } from './time.ts';

export { BaselineAlgorithm, BASELINE_ALGORITHMS, baselineHistoryDays, baselineLookbackDays, isBaselineAlgorithm, type BaselineOptions } from './baselineAlgorithms.ts';
export type { EventPeriod } from './baselineDays.ts';

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
  /** Events on the source register: the local days they touch are excluded like excludedDays,
   * and on each such day they make the event window (baselineDays.ts). */
  eventPeriods?: readonly EventPeriod[];
  /** Local days ('YYYY-MM-DD') that are holidays: the PJM and CAISO methods class them with
   * Sundays and weekend days; the other algorithms ignore them. */
  holidays?: readonly string[];
  options?: BaselineOptions;
}

interface Settings {
  cap: number;
  windowHours: number;
  gapHours: number;
  maxLookbackDays: number | undefined;
  excluded: DaySet;
  holidays: DaySet;
  periods: EventPeriod[];
}

function settingsOf(s: BaselineAlgorithmSpec, input: BaselineInput): Settings {
  const o = input.options ?? {};
  const cap = o.adjustmentCap ?? s.cap;
  const windowHours = o.adjustmentWindowHours ?? BASELINE_DEFAULTS.adjustmentWindowHours;
  const gapHours = o.adjustmentGapHours ?? BASELINE_DEFAULTS.adjustmentGapHours;
  if (!(cap >= 0)) fail('invalid_input', `adjustmentCap must be ≥ 0 (Infinity for no cap), got ${cap}`);
  if (!(windowHours > 0 && Number.isFinite(windowHours))) fail('invalid_input', `adjustmentWindowHours must be > 0, got ${windowHours}`);
  if (!(gapHours >= 0 && Number.isFinite(gapHours))) fail('invalid_input', `adjustmentGapHours must be ≥ 0, got ${gapHours}`);
  const resolution = input.resolutionSeconds;
  if (s.adjustment !== 'none' && ((windowHours * 3600) % resolution !== 0 || (gapHours * 3600) % resolution !== 0)) {
    fail('invalid_input', `adjustment window (${windowHours} h, ${gapHours} h before) must be whole intervals of ${resolution} s`);
  }
  const maxLookbackDays = o.maxLookbackDays;
  if (maxLookbackDays !== undefined && !(Number.isInteger(maxLookbackDays) && maxLookbackDays >= 1)) {
    fail('invalid_input', `maxLookbackDays must be a positive integer, got ${maxLookbackDays}`);
  }
  const periods = eventPeriodsOf(input.eventPeriods);
  const excluded = excludedDaySet(dayIndicesOf(input.excludedDays, 'excludedDays'), periods, input.timeZone);
  const holidays = new DaySet(dayIndicesOf(input.holidays, 'holidays'));
  return { cap, windowHours, gapHours, maxLookbackDays, excluded, holidays, periods };
}

/**
 * The baseline of `algorithm` for each of `input.targetTimestamps`: NaN where it cannot be
 * computed (missing history, too few similar days, incomplete adjustment window, a target that
 * is not an interval start of its day), never a silent 0. Throws a RangeError with a `code`
 * (errors.ts) on bad input.
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
  const resolutionMs = resolution * 1000;
  const context = new BaselineContext(input.history, resolutionMs, input.timeZone);

  const out = new Float64Array(targets.length).fill(NaN);
  for (const run of splitByLocalDay(targets, input.timeZone)) {
    if (s.method === 'previousDay') {
      const previous = context.day(run.day.index - 1);
      for (let i = run.from; i < run.to; i++) out[i] = context.valueAtClock(previous, wallSecondsOf(targets[i]!, run.day));
      continue;
    }
    const plan = planDay(run.day, resolutionMs, settings.periods);
    const values = dayValues(s, context, plan, settings);
    if (values === undefined) continue;
    for (let i = run.from; i < run.to; i++) {
      const k = gridIndex(plan.grid, targets[i]!, resolutionMs);
      if (k >= 0) out[i] = values[k]!;
    }
  }
  return out;
}

/** The baseline of every interval of a target day, or undefined when the day has none. */
function dayValues(s: BaselineAlgorithmSpec, context: BaselineContext, plan: DayPlan, settings: Settings): Float64Array | undefined {
  if (plan.from === plan.to) return undefined;
  const chosen = similarDays(s, context, plan, settings);
  if (chosen === undefined) return undefined;
  const { clock, from, to } = plan;
  let profile: Float64Array = new Float64Array(clock.length);
  for (let i = 0; i < profile.length; i++) {
    let sum = 0;
    if (i >= from && i < to) for (const day of chosen) sum += day.values[i - from]!;
    else for (const day of chosen) sum += context.valueAtClock(day.day, clock[i]!);
    profile[i] = sum / chosen.length;
  }
  if (s.adjustment !== 'none') {
    const days = chosen.map((d) => d.day);
    const means = windowMeans(context, plan.day, plan.anchor, days, settings.windowHours, settings.gapHours);
    if (means === undefined) return undefined;
    profile = applyAdjustment(s.adjustment, profile, means, settings.cap);
  }
  return profile;
}

interface Candidate {
  day: LocalDay;
  /** Its values at the compared clock times (looked up once: they are also the profile's). */
  values: Float64Array;
  /** Their total. */
  total: number;
}

/** `day` as a candidate: its values at the compared clock times; undefined when one is missing. */
function candidate(context: BaselineContext, plan: DayPlan, day: LocalDay): Candidate | undefined {
  const { clock, from } = plan;
  const values = new Float64Array(plan.to - from);
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    const v = context.valueAtClock(day, clock[from + i]!);
    if (Number.isNaN(v)) return undefined;
    values[i] = v;
    total += v;
  }
  return { day, values, total };
}

/**
 * The similar days a target day's baseline averages, highest total first, or undefined with
 * fewer than X. Walks back from the day before the target over the search window, keeping days
 * of the target's class that are not excluded and have a value at every compared clock time:
 * the first Y of them (PJM: after leaving out low-usage days, and completed with event days);
 * of those, the X with the highest total (on equal totals the more recent day).
 */
function similarDays(s: BaselineAlgorithmSpec, context: BaselineContext, plan: DayPlan, settings: Settings): Candidate[] | undefined {
  const target = plan.day.index;
  const type = dayClassOf(s.classing, target, settings.holidays);
  const { x, y } = s.select[type]!;
  const searchDays = searchDaysOf(s, y, target, settings.excluded, settings.maxLookbackDays);
  const usable: Candidate[] = [];
  const events: Candidate[] = [];
  // The low-usage threshold: a share of the mean total of the first Y usable days.
  let threshold = -Infinity;
  let aboveThreshold = 0;
  for (let back = 1; back <= searchDays && aboveThreshold < y; back++) {
    const index = target - back;
    if (dayClassOf(s.classing, index, settings.holidays) !== type) continue;
    const excluded = settings.excluded.has(index);
    if (excluded && !s.completeWithEventDays) continue;
    const day = context.day(index);
    if (day.end <= context.lookup.start) break; // before the history: nothing more to find
    const found = candidate(context, plan, day);
    if (found === undefined) continue;
    if (excluded) {
      events.push(found);
      continue;
    }
    usable.push(found);
    if (s.lowUsageShare > 0 && usable.length === y) {
      threshold = (s.lowUsageShare * usable.reduce((sum, d) => sum + d.total, 0)) / y;
      aboveThreshold = usable.filter((d) => d.total >= threshold).length;
    } else if (found.total >= threshold) aboveThreshold++;
  }
  let basis = threshold === -Infinity ? usable.slice(0, y) : usable.filter((d) => d.total >= threshold).slice(0, y);
  if (s.completeWithEventDays && basis.length < y) {
    // Array.prototype.sort is stable: equal totals keep their recency order.
    basis = basis.concat([...events].sort((a, b) => b.total - a.total).slice(0, y - basis.length));
  }
  if (basis.length < x) return undefined;
  return [...basis].sort((a, b) => b.total - a.total).slice(0, x);
}
