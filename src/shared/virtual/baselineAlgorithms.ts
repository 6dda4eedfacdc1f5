// The baseline code table (virtualDefinition.baselineAlgorithmType), the day classes each
// algorithm compares, and how far back it looks. Definitions in full, with where each follows
// and where it departs from a published method: docs/virtual-registers.md, "Baselines".
import { weekdayOfIndex } from './calendar.ts';

/** Codes start at 1 so that a forgotten 0 (falsy, JSON default) is never a valid algorithm. */
export enum BaselineAlgorithm {
  /** 0 for every interval. */
  Zero = 1,
  /** The same local clock interval on the previous calendar day. */
  PreviousDay = 2,
  /** Mean of the 4 days with the highest total among the 5 most recent similar days. */
  High4Of5 = 3,
  High4Of5Additive = 4,
  High4Of5Multiplicative = 5,
  /** Mean of the 10 most recent similar days (high 10 of 10). */
  Average10Of10 = 6,
  Average10Of10Additive = 7,
  Average10Of10Multiplicative = 8,
  /** PJM's Customer Baseline: weekdays High 4 of 5, Saturdays and Sundays/holidays High 2 of 3,
   * over the 45 days before, low-usage days left out, symmetric additive adjustment. */
  PjmCustomerBaseline = 9,
  /** CAISO's 10-in-10: weekdays 10 of 10, weekend days and holidays 4 of 4, over the 45 days
   * before, with the load point (day-of) adjustment limited to ±20 %. */
  Caiso10In10 = 10,
  /** CAISO's 10-in-10 without the optional load point adjustment. */
  Caiso10In10Unadjusted = 11,
}

export type BaselineMethod = 'zero' | 'previousDay' | 'similarDays';
export type SameDayAdjustment = 'none' | 'additive' | 'multiplicative';
/**
 * How days are put in classes that are compared with each other:
 * - weekType: weekdays (Monday–Friday) and weekend days (Saturday, Sunday); holidays play no part;
 * - pjm: weekdays that are not holidays; Saturdays that are not holidays; Sundays and holidays;
 * - caiso: weekdays that are not holidays; weekend days and holidays.
 */
export type DayClassing = 'weekType' | 'pjm' | 'caiso';
/** 'widened': 45 days, more when excluded days crowd them out (see searchDaysOf); 'fixed': 45 days. */
export type SearchWindow = 'widened' | 'fixed';

export interface BaselineAlgorithmSpec {
  name: string;
  method: BaselineMethod;
  classing: DayClassing;
  /** High X of Y per day class (indexed by dayClassOf); empty for zero and previousDay. */
  select: readonly { readonly x: number; readonly y: number }[];
  search: SearchWindow;
  /** A similar day whose mean over the compared intervals is below this share of the mean of
   * the first Y similar days is left out (PJM's low-usage rule); 0: no such rule. */
  lowUsageShare: number;
  /** Fewer than Y similar days in the window: complete them with the excluded (event) days of
   * the same class in the window, highest total first (PJM). */
  completeWithEventDays: boolean;
  adjustment: SameDayAdjustment;
  /** Default adjustment cap (BaselineOptions.adjustmentCap overrides it). */
  cap: number;
}

const legacy = (name: string, x: number, y: number, adjustment: SameDayAdjustment): BaselineAlgorithmSpec => ({
  name,
  method: 'similarDays',
  classing: 'weekType',
  select: [
    { x, y },
    { x, y },
  ],
  search: 'widened',
  lowUsageShare: 0,
  completeWithEventDays: false,
  adjustment,
  cap: 0.2,
});

const plain = (name: string, method: 'zero' | 'previousDay'): BaselineAlgorithmSpec => ({
  name,
  method,
  classing: 'weekType',
  select: [],
  search: 'fixed',
  lowUsageShare: 0,
  completeWithEventDays: false,
  adjustment: 'none',
  cap: 0,
});

const caiso = (name: string, adjustment: SameDayAdjustment): BaselineAlgorithmSpec => ({
  name,
  method: 'similarDays',
  classing: 'caiso',
  select: [
    { x: 10, y: 10 },
    { x: 4, y: 4 },
  ],
  search: 'fixed',
  lowUsageShare: 0,
  completeWithEventDays: false,
  adjustment,
  cap: 0.2,
});

export const BASELINE_ALGORITHMS: Readonly<Record<BaselineAlgorithm, BaselineAlgorithmSpec>> = {
  [BaselineAlgorithm.Zero]: plain('Zero', 'zero'),
  [BaselineAlgorithm.PreviousDay]: plain('PreviousDay', 'previousDay'),
  [BaselineAlgorithm.High4Of5]: legacy('High4Of5', 4, 5, 'none'),
  [BaselineAlgorithm.High4Of5Additive]: legacy('High4Of5Additive', 4, 5, 'additive'),
  [BaselineAlgorithm.High4Of5Multiplicative]: legacy('High4Of5Multiplicative', 4, 5, 'multiplicative'),
  [BaselineAlgorithm.Average10Of10]: legacy('Average10Of10', 10, 10, 'none'),
  [BaselineAlgorithm.Average10Of10Additive]: legacy('Average10Of10Additive', 10, 10, 'additive'),
  [BaselineAlgorithm.Average10Of10Multiplicative]: legacy('Average10Of10Multiplicative', 10, 10, 'multiplicative'),
  [BaselineAlgorithm.PjmCustomerBaseline]: {
    name: 'PjmCustomerBaseline',
    method: 'similarDays',
    classing: 'pjm',
    select: [
      { x: 4, y: 5 },
      { x: 2, y: 3 },
      { x: 2, y: 3 },
    ],
    search: 'fixed',
    lowUsageShare: 0.25,
    completeWithEventDays: true,
    adjustment: 'additive',
    cap: Infinity,
  },
  [BaselineAlgorithm.Caiso10In10]: caiso('Caiso10In10', 'multiplicative'),
  [BaselineAlgorithm.Caiso10In10Unadjusted]: caiso('Caiso10In10Unadjusted', 'none'),
};

export function isBaselineAlgorithm(code: unknown): code is BaselineAlgorithm {
  return typeof code === 'number' && Object.hasOwn(BASELINE_ALGORITHMS, code);
}

export interface BaselineOptions {
  /** Length N of the same-day adjustment window, in hours; default 3. */
  adjustmentWindowHours?: number;
  /** The window ends M hours before the day's event start; default 1. */
  adjustmentGapHours?: number;
  /** Adjustment cap: ±cap × window baseline mean (additive), ratio in [1 − cap, 1 + cap]
   * (multiplicative); default the algorithm's (0.2, PJM: Infinity, no cap). */
  adjustmentCap?: number;
  /** Calendar days searched back for similar days; default the algorithm's (searchDaysOf). */
  maxLookbackDays?: number;
}

export const BASELINE_DEFAULTS = { adjustmentWindowHours: 3, adjustmentGapHours: 1 } as const;

/** Similar days are looked for in the 45 calendar days before the target day. */
export const MIN_SEARCH_DAYS = 45;
/** The widened search never goes back further than this. */
export const MAX_SEARCH_DAYS = 366;

/** The class of local day number `index` under `classing` (0 = weekday; see DayClassing). */
export function dayClassOf(classing: DayClassing, index: number, holidays: DaySet): number {
  const weekday = weekdayOfIndex(index);
  switch (classing) {
    case 'weekType':
      return weekday === 0 || weekday === 6 ? 1 : 0;
    case 'pjm':
      return weekday === 0 || holidays.has(index) ? 2 : weekday === 6 ? 1 : 0;
    case 'caiso':
      return weekday === 0 || weekday === 6 || holidays.has(index) ? 1 : 0;
  }
}

/** A set of day numbers that also counts its members in a range (sorted, binary search). */
export class DaySet {
  private readonly days: Int32Array;
  private readonly members: ReadonlySet<number>;

  constructor(days: Iterable<number> = []) {
    this.members = new Set(days);
    this.days = Int32Array.from(this.members).sort();
  }

  has(index: number): boolean {
    return this.members.has(index);
  }

  get size(): number {
    return this.days.length;
  }

  /** Members in [from, to]. */
  countBetween(from: number, to: number): number {
    return to < from ? 0 : this.lowerBound(to + 1) - this.lowerBound(from);
  }

  private lowerBound(value: number): number {
    let low = 0;
    let high = this.days.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.days[mid]! < value) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

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

/**
 * Calendar days searched back from target day `target` (a day number). 'fixed': 45.
 * 'widened': the smallest L ≥ 45 with L ≥ sameTypeSpanDays(y + the excluded days among the L
 * days before the target), at most MAX_SEARCH_DAYS. Only days before the target count, so a
 * day's search never depends on what happens after it.
 */
export function searchDaysOf(s: BaselineAlgorithmSpec, y: number, target: number, excluded: DaySet, maxLookbackDays?: number): number {
  if (maxLookbackDays !== undefined) return maxLookbackDays;
  if (s.search === 'fixed') return MIN_SEARCH_DAYS;
  let days = Math.max(MIN_SEARCH_DAYS, sameTypeSpanDays(y));
  for (;;) {
    const next = Math.min(MAX_SEARCH_DAYS, Math.max(MIN_SEARCH_DAYS, sameTypeSpanDays(y + excluded.countBetween(target - days, target - 1))));
    if (next <= days) return days;
    days = next;
  }
}

/** Extra days a similar day's adjustment window may reach back before it. */
function adjustmentDays(s: BaselineAlgorithmSpec, options: BaselineOptions): number {
  if (s.adjustment === 'none') return 0;
  const hours = (options.adjustmentGapHours ?? BASELINE_DEFAULTS.adjustmentGapHours) + (options.adjustmentWindowHours ?? BASELINE_DEFAULTS.adjustmentWindowHours);
  return Math.ceil(hours / 24);
}

/**
 * Calendar days before the first target day `firstDay` that `history` must cover (it must also
 * cover the target days themselves) for target days `firstDay`…`lastDay` (day numbers), given
 * the days excluded from similar days. NaN for an unknown algorithm.
 */
export function baselineHistoryDays(algorithm: BaselineAlgorithm, firstDay: number, lastDay: number, excluded: DaySet = new DaySet(), options: BaselineOptions = {}): number {
  const s = BASELINE_ALGORITHMS[algorithm];
  if (s === undefined) return NaN;
  if (s.method === 'zero') return 0;
  if (s.method === 'previousDay') return 1;
  const y = Math.max(...s.select.map((c) => c.y));
  let days = 0;
  for (let day = firstDay; day <= lastDay; day++) days = Math.max(days, searchDaysOf(s, y, day, excluded, options.maxLookbackDays) - (day - firstDay));
  return days + adjustmentDays(s, options);
}

/**
 * An upper bound of baselineHistoryDays for any target days when at most `excludedDayCount`
 * excluded days lie within reach: what `history` must cover before the first target day.
 */
export function baselineLookbackDays(algorithm: BaselineAlgorithm, excludedDayCount = 0, options: BaselineOptions = {}): number {
  const s = BASELINE_ALGORITHMS[algorithm];
  if (s === undefined) return NaN;
  if (s.method === 'zero') return 0;
  if (s.method === 'previousDay') return 1;
  const y = Math.max(...s.select.map((c) => c.y));
  const search = options.maxLookbackDays ?? (s.search === 'fixed' ? MIN_SEARCH_DAYS : Math.min(MAX_SEARCH_DAYS, Math.max(MIN_SEARCH_DAYS, sameTypeSpanDays(y + excludedDayCount))));
  return search + adjustmentDays(s, options);
}
