// What one target day's baseline is computed over, fixed by the day itself and never by the
// range it is asked in: the day's intervals at the resolution, the part of them that similar
// days are compared over (the day's event window: the whole day, or the part of it that event
// periods cover), and the instant the same-day adjustment looks back from (the start of that
// window). docs/virtual-registers.md, "Target day".
import { fail } from './errors.ts';
import { DAY_MS, localDayAt, localDayIndex, wallSecondsOf, type LocalDay } from './time.ts';
import { dayIndexOfKey } from './calendar.ts';
import { DaySet, MAX_SEARCH_DAYS, baselineHistoryDays, type BaselineAlgorithm, type BaselineOptions } from './baselineAlgorithms.ts';

/** An event (a demand-response event, a flexibility activation) on the source register: [start, end) in UTC ms. */
export interface EventPeriod {
  start: number;
  end: number;
}

export interface DayPlan {
  day: LocalDay;
  /** Interval starts of the day at the resolution (UTC ms, ascending). */
  grid: Float64Array;
  /** Wall-clock seconds after local midnight of each interval. */
  clock: Float64Array;
  /** grid[from] … grid[to − 1] are the intervals compared between days. */
  from: number;
  to: number;
  /** The same-day adjustment window ends `gap` hours before this instant (an interval start). */
  anchor: number;
}

/** Interval starts of `day`: its first instant at daily resolution, else the multiples of the resolution within it. */
export function dayGrid(day: LocalDay, resolutionMs: number): Float64Array {
  if (resolutionMs === DAY_MS) return Float64Array.of(day.start);
  const first = Math.ceil(day.start / resolutionMs) * resolutionMs;
  const n = Math.max(0, Math.ceil((day.end - first) / resolutionMs));
  const grid = new Float64Array(n);
  for (let i = 0; i < n; i++) grid[i] = first + i * resolutionMs;
  return grid;
}

/**
 * The plan of `day`. `periods` (sorted by start) that overlap the day make its event window:
 * from the earliest start to the latest end among them, within the day; without any, the whole
 * day. The compared intervals are those overlapping the window; the anchor is the first of them.
 */
export function planDay(day: LocalDay, resolutionMs: number, periods: readonly EventPeriod[]): DayPlan {
  const grid = dayGrid(day, resolutionMs);
  const clock = new Float64Array(grid.length);
  for (let i = 0; i < grid.length; i++) clock[i] = wallSecondsOf(grid[i]!, day);
  let start = Infinity;
  let end = -Infinity;
  for (const p of periods) {
    if (p.start >= day.end) break;
    if (p.end <= day.start) continue;
    start = Math.min(start, p.start);
    end = Math.max(end, p.end);
  }
  if (start === Infinity) {
    start = day.start;
    end = day.end;
  }
  const width = resolutionMs === DAY_MS ? day.end - day.start : resolutionMs;
  let from = 0;
  while (from < grid.length && grid[from]! + width <= start) from++;
  let to = from;
  while (to < grid.length && grid[to]! < end) to++;
  return { day, grid, clock, from, to, anchor: from < to ? grid[from]! : day.start };
}

/** The index of `t` in `grid`, or -1 when `t` is not one of its interval starts. */
export function gridIndex(grid: Float64Array, t: number, resolutionMs: number): number {
  if (grid.length === 0) return -1;
  const i = resolutionMs === DAY_MS ? 0 : Math.round((t - grid[0]!) / resolutionMs);
  return i >= 0 && i < grid.length && grid[i] === t ? i : -1;
}

/** Refuses anything but an array of {start, end} with finite start < end; returns them sorted by start. */
export function eventPeriodsOf(periods: unknown): EventPeriod[] {
  if (periods === undefined) return [];
  if (!Array.isArray(periods)) fail('invalid_input', 'eventPeriods must be an array of {start, end}');
  const out = periods.map((p: unknown, i) => {
    const { start, end } = (p ?? {}) as { start?: unknown; end?: unknown };
    if (typeof start !== 'number' || typeof end !== 'number' || !Number.isFinite(start) || !Number.isFinite(end) || !(start < end)) {
      fail('invalid_input', `eventPeriods[${i}] must have finite start < end`);
    }
    return { start, end };
  });
  return out.sort((a, b) => a.start - b.start || a.end - b.end);
}

/** Day numbers of a list of 'YYYY-MM-DD' keys; refuses anything that is not an array of real days. */
export function dayIndicesOf(days: unknown, name: string): number[] {
  if (days === undefined) return [];
  if (!Array.isArray(days)) fail('invalid_input', `${name} must be an array of day keys`);
  return days.map(dayIndexOfKey);
}

/**
 * The days left out of similar days: the excluded days, and every local day (of `timeZone`)
 * an event period touches.
 */
export function excludedDaySet(excludedDays: readonly number[], periods: readonly EventPeriod[], timeZone: string): DaySet {
  const days = new Set(excludedDays);
  for (const p of periods) {
    const last = localDayIndex(p.end - 1, timeZone);
    for (let d = localDayIndex(p.start, timeZone); d <= last; d++) days.add(d);
  }
  return new DaySet(days);
}

/** The days a baseline over some target days can depend on (day numbers of the baseline's zone). */
export interface BaselineReach {
  firstDay: number;
  lastDay: number;
  /** Excluded days, event periods and holidays before this day never matter (no search reaches it). */
  fromDay: number;
}

/** The reach of a baseline over ascending `targets` (at least one): nothing after the last target day matters. */
export function baselineReach(targets: Float64Array, timeZone: string): BaselineReach {
  const firstDay = localDayIndex(targets[0]!, timeZone);
  return { firstDay, lastDay: localDayIndex(targets[targets.length - 1]!, timeZone), fromDay: firstDay - MAX_SEARCH_DAYS - 1 };
}

/** Where `history` must start (UTC ms) for a baseline over `targets`, given the days excluded in its reach. */
export function baselineHistoryStart(algorithm: BaselineAlgorithm, targets: Float64Array, reach: BaselineReach, excluded: DaySet, options: BaselineOptions = {}): number {
  // One day more than the day count: the first target may start late in its day, and days across
  // a clock change are 23 or 25 hours long.
  return targets[0]! - (baselineHistoryDays(algorithm, reach.firstDay, reach.lastDay, excluded, options) + 1) * DAY_MS;
}

/** Where `history` must end (UTC ms, exclusive): at the end of the last target day, whatever part
 * of it is asked for, since the readings of a day before its event make its adjustment window. */
export function baselineHistoryEnd(reach: BaselineReach, timeZone: string): number {
  return localDayAt(reach.lastDay, timeZone).end;
}
