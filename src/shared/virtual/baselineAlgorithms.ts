// The baseline code table (virtualDefinition.baselineAlgorithmType) and how far back each
// algorithm looks. Definitions in full: docs/virtual-registers.md, "Baselines".

/** Codes start at 1 so that a forgotten 0 (falsy, JSON default) is never a valid algorithm. */
export enum BaselineAlgorithm {
  /** 0 for every interval. */
  Zero = 1,
  /** The same local clock interval on the previous calendar day. */
  PreviousDay = 2,
  /** Mean of the 4 days with the highest window total among the 5 most recent similar days. */
  High4Of5 = 3,
  High4Of5Additive = 4,
  High4Of5Multiplicative = 5,
  /** Mean of the 10 most recent similar days (high 10 of 10). */
  Average10Of10 = 6,
  Average10Of10Additive = 7,
  Average10Of10Multiplicative = 8,
}

export type BaselineMethod = 'zero' | 'previousDay' | 'highXOfY';
export type SameDayAdjustment = 'none' | 'additive' | 'multiplicative';

export interface BaselineAlgorithmSpec {
  name: string;
  method: BaselineMethod;
  /** Days averaged (high X) and similar days considered (of Y); 0 for zero/previousDay. */
  x: number;
  y: number;
  adjustment: SameDayAdjustment;
}

const spec = (name: string, method: BaselineMethod, x: number, y: number, adjustment: SameDayAdjustment): BaselineAlgorithmSpec => ({ name, method, x, y, adjustment });

export const BASELINE_ALGORITHMS: Readonly<Record<BaselineAlgorithm, BaselineAlgorithmSpec>> = {
  [BaselineAlgorithm.Zero]: spec('Zero', 'zero', 0, 0, 'none'),
  [BaselineAlgorithm.PreviousDay]: spec('PreviousDay', 'previousDay', 0, 0, 'none'),
  [BaselineAlgorithm.High4Of5]: spec('High4Of5', 'highXOfY', 4, 5, 'none'),
  [BaselineAlgorithm.High4Of5Additive]: spec('High4Of5Additive', 'highXOfY', 4, 5, 'additive'),
  [BaselineAlgorithm.High4Of5Multiplicative]: spec('High4Of5Multiplicative', 'highXOfY', 4, 5, 'multiplicative'),
  [BaselineAlgorithm.Average10Of10]: spec('Average10Of10', 'highXOfY', 10, 10, 'none'),
  [BaselineAlgorithm.Average10Of10Additive]: spec('Average10Of10Additive', 'highXOfY', 10, 10, 'additive'),
  [BaselineAlgorithm.Average10Of10Multiplicative]: spec('Average10Of10Multiplicative', 'highXOfY', 10, 10, 'multiplicative'),
};

export function isBaselineAlgorithm(code: unknown): code is BaselineAlgorithm {
  return typeof code === 'number' && Object.hasOwn(BASELINE_ALGORITHMS, code);
}

export interface BaselineOptions {
  /** Length N of the same-day adjustment window, in hours; default 3. */
  adjustmentWindowHours?: number;
  /** The window ends M hours before the day's first target interval; default 1. */
  adjustmentGapHours?: number;
  /** Adjustment cap: ±cap × window baseline mean (additive), ratio in [1 − cap, 1 + cap] (multiplicative); default 0.2. */
  adjustmentCap?: number;
  /** Calendar days searched back for similar days; default baselineSearchDays(y, excluded days). */
  maxLookbackDays?: number;
}

export const BASELINE_DEFAULTS = { adjustmentWindowHours: 3, adjustmentGapHours: 1, adjustmentCap: 0.2 } as const;

/** Similar days are looked for at most this far back, as PJM and CAISO do (45 days). */
export const MIN_SEARCH_DAYS = 45;

/**
 * Calendar days back from a target day within which `count` days of the target's weekday
 * type are sure to lie, in the worst case over the target's weekday. Weekend days are the
 * sparse ones: the n-th previous weekend day of a Saturday is 7·n/2 days back (n even) or
 * 7·(n+1)/2 − 1 (n odd); weekdays need n + 2·⌈n/5⌉.
 */
export function sameTypeSpanDays(count: number): number {
  if (count <= 0) return 0;
  const weekend = count % 2 === 0 ? (7 * count) / 2 : (7 * (count + 1)) / 2 - 1;
  const weekday = count + 2 * Math.ceil(count / 5);
  return Math.max(weekend, weekday);
}

/** How far back a high-X-of-Y search goes by default: 45 days, more when exclusions demand it. */
export function baselineSearchDays(y: number, excludedDayCount: number): number {
  return Math.max(MIN_SEARCH_DAYS, sameTypeSpanDays(y + excludedDayCount));
}

/**
 * Calendar days before the first target day the engine must load into `history` (which
 * must also cover the target days themselves). Pass the number of excluded days you will pass
 * to computeBaseline, and the same options.
 */
export function baselineLookbackDays(algorithm: BaselineAlgorithm, excludedDayCount = 0, options: BaselineOptions = {}): number {
  const s = BASELINE_ALGORITHMS[algorithm];
  if (s === undefined) return NaN;
  if (s.method === 'zero') return 0;
  if (s.method === 'previousDay') return 1;
  const search = options.maxLookbackDays ?? baselineSearchDays(s.y, excludedDayCount);
  if (s.adjustment === 'none') return search;
  // A similar day's adjustment window may start on the day before it.
  const windowHours = (options.adjustmentGapHours ?? BASELINE_DEFAULTS.adjustmentGapHours) + (options.adjustmentWindowHours ?? BASELINE_DEFAULTS.adjustmentWindowHours);
  return search + Math.ceil(windowHours / 24);
}
