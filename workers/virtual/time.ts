// IANA time-zone arithmetic on Intl alone (no dependencies). Everything is derived from one
// primitive, the zone's wall clock at an instant (`wallClock`); local days are resolved once
// each (`localDay`) so that per-bucket work on ordinary 24-hour days is plain arithmetic.
//
// Local times that do not exist or exist twice (docs/virtual-registers.md, "Time zones"):
// - spring gap: a wall time inside the gap is moved forward by the length of the gap
//   (Europe/Oslo 2024-03-31 02:30 → 03:30 CEST), as Temporal's 'compatible' mode and RFC 5545;
// - autumn overlap: a wall time that occurs twice means its first occurrence (the earlier
//   instant, still on summer time);
// - a local day starts at its first instant: midnight, or the end of a gap that swallows
//   midnight (America/Santiago 2024-09-08 starts at 01:00 -03).
import { fail } from './errors.ts';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export type WeekdayType = 'weekday' | 'weekend';

export interface LocalDateParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** ISO weekday: 1 = Monday … 7 = Sunday. */
  weekday: number;
  /** Local time minus UTC, in minutes (+60 for CET, -300 for EST). */
  offsetMinutes: number;
  dayKey: string;
}

/** A resolved local calendar day: [start, end) in UTC epoch milliseconds. */
export interface LocalDay {
  key: string;
  start: number;
  end: number;
  /** True for a 24-hour day (no clock change), where wall time = start + elapsed time. */
  regular: boolean;
}

export interface TimeOfDay {
  hour: number;
  minute: number;
  second: number;
  /** Seconds since local midnight. */
  seconds: number;
}

// One formatter per zone: creating an Intl.DateTimeFormat costs ~50 µs, formatting ~2 µs.
// `format` + a regular expression measured 4× faster than `formatToParts` (2.1 vs 8.4 µs).
const formats = new Map<string, Intl.DateTimeFormat>();
const FORMATTED = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+):(\d+)$/;

function formatFor(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(timeZone, format);
  }
  return format;
}

export function isValidTimeZone(timeZone: unknown): timeZone is string {
  if (typeof timeZone !== 'string' || timeZone === '') return false;
  try {
    formatFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

export function assertTimeZone(timeZone: unknown): asserts timeZone is string {
  if (!isValidTimeZone(timeZone)) fail('invalid_time_zone', `unknown time zone ${JSON.stringify(timeZone)}`);
}

function isUtc(timeZone: string): boolean {
  return timeZone === 'UTC' || timeZone === 'Etc/UTC';
}

/** The zone's wall clock at instant `ms`, written as if it were a UTC instant. */
function wallClock(ms: number, timeZone: string): number {
  if (isUtc(timeZone)) return ms;
  const match = FORMATTED.exec(formatFor(timeZone).format(ms));
  if (match === null) fail('invalid_input', `cannot express ${ms} in ${timeZone}`);
  const [, month, day, year, hour, minute, second] = match;
  const fraction = ms - Math.floor(ms / 1000) * 1000;
  return Date.UTC(+year!, +month! - 1, +day!, +hour!, +minute!, +second!) + fraction;
}

function offsetAt(ms: number, timeZone: string): number {
  return wallClock(ms, timeZone) - ms;
}

function keyOfWall(wall: number): string {
  return new Date(wall).toISOString().slice(0, 10);
}

const DAY_KEY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Midnight of a day key as a UTC instant (the day's wall-clock origin). */
export function dayKeyToWall(dayKey: string): number {
  const match = typeof dayKey === 'string' ? DAY_KEY.exec(dayKey) : null;
  const wall = match ? Date.UTC(+match[1]!, +match[2]! - 1, +match[3]!) : NaN;
  if (Number.isNaN(wall) || keyOfWall(wall) !== dayKey) fail('invalid_day', `not a day 'YYYY-MM-DD': ${JSON.stringify(dayKey)}`);
  return wall;
}

/**
 * The instants whose wall clock reads `wall`. Offsets a day before and after are the only
 * candidates (no zone changes its offset twice within two days). `gap` is set when the wall
 * time does not exist; then `earlier` is the 'compatible' answer (shifted forward by the gap).
 */
function resolveWall(wall: number, timeZone: string): { earlier: number; later: number; gap: boolean } {
  if (isUtc(timeZone)) return { earlier: wall, later: wall, gap: false };
  const before = offsetAt(wall - DAY_MS, timeZone);
  const after = offsetAt(wall + DAY_MS, timeZone);
  if (before === after) return { earlier: wall - before, later: wall - before, gap: false };
  const first = wall - before;
  const second = wall - after;
  const firstOk = offsetAt(first, timeZone) === before;
  const secondOk = offsetAt(second, timeZone) === after;
  if (firstOk && secondOk) return { earlier: Math.min(first, second), later: Math.max(first, second), gap: false };
  if (firstOk) return { earlier: first, later: first, gap: false };
  if (secondOk) return { earlier: second, later: second, gap: false };
  return { earlier: first, later: first, gap: true };
}

/** The instant a wall time means: its first occurrence; in a gap, NaN or moved forward. */
export function wallToUtc(wall: number, timeZone: string, gap: 'forward' | 'missing' = 'forward'): number {
  const resolved = resolveWall(wall, timeZone);
  return resolved.gap && gap === 'missing' ? NaN : resolved.earlier;
}

export function localDayKey(ms: number, timeZone: string): string {
  assertTimeZone(timeZone);
  return keyOfWall(wallClock(ms, timeZone));
}

export function localDateParts(ms: number, timeZone: string): LocalDateParts {
  assertTimeZone(timeZone);
  const wall = wallClock(ms, timeZone);
  const d = new Date(wall);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    weekday: d.getUTCDay() === 0 ? 7 : d.getUTCDay(),
    offsetMinutes: (wall - ms) / 60_000,
    dayKey: keyOfWall(wall),
  };
}

export function parseTimeOfDay(text: string): { ok: true; value: TimeOfDay } | { ok: false; message: string } {
  const match = typeof text === 'string' ? /^(\d{2}):(\d{2}):(\d{2})$/.exec(text) : null;
  if (match === null) return { ok: false, message: `time of day must be 'HH:MM:SS', got ${JSON.stringify(text)}` };
  const [hour, minute, second] = [+match[1]!, +match[2]!, +match[3]!];
  if (hour > 23 || minute > 59 || second > 59) return { ok: false, message: `time of day out of range: ${text}` };
  return { ok: true, value: { hour, minute, second, seconds: hour * 3600 + minute * 60 + second } };
}

export function timeOfDayOrFail(text: string): TimeOfDay {
  const parsed = parseTimeOfDay(text);
  if (!parsed.ok) fail('invalid_time_of_day', parsed.message);
  return parsed.value;
}

/** The UTC instant of local time `timeOfDay` ('HH:MM:SS') on local day `dayKey` (gap/overlap rules above). */
export function zonedTimeToUtc(dayKey: string, timeOfDay: string, timeZone: string): number {
  assertTimeZone(timeZone);
  return wallToUtc(dayKeyToWall(dayKey) + timeOfDayOrFail(timeOfDay).seconds * 1000, timeZone);
}

/** The first instant whose local day is `dayKey`. */
function dayStart(wall: number, timeZone: string): number {
  const resolved = resolveWall(wall, timeZone);
  if (!resolved.gap) return resolved.earlier;
  // Midnight is inside a gap: the day starts at the clock change. Bisect to the second
  // between the instant before the gap (offset `before`) and the one after it.
  let low = wall - offsetAt(wall + DAY_MS, timeZone); // still on the old offset: previous day
  let high = resolved.earlier; // past the change: on this day
  while (high - low > 1000) {
    const mid = Math.floor((low + high) / 2000) * 1000;
    if (wallClock(mid, timeZone) >= wall) high = mid;
    else low = mid;
  }
  return high;
}

export function localDay(dayKey: string, timeZone: string): LocalDay {
  assertTimeZone(timeZone);
  const wall = dayKeyToWall(dayKey);
  const start = dayStart(wall, timeZone);
  const end = dayStart(wall + DAY_MS, timeZone);
  // A day with two clock changes that cancel out would pass as regular; no zone has one.
  return { key: dayKey, start, end, regular: end - start === DAY_MS };
}

export function startOfLocalDay(ms: number, timeZone: string): number {
  return localDay(localDayKey(ms, timeZone), timeZone).start;
}

export function nextLocalMidnight(ms: number, timeZone: string): number {
  return localDay(localDayKey(ms, timeZone), timeZone).end;
}

export function addLocalDays(dayKey: string, days: number): string {
  if (!Number.isInteger(days)) fail('invalid_input', `days must be an integer, got ${days}`);
  return keyOfWall(dayKeyToWall(dayKey) + days * DAY_MS);
}

/** Whole calendar days from `from` to `to` ('2024-01-02' → '2024-01-05' is 3). */
export function daysBetween(from: string, to: string): number {
  return Math.round((dayKeyToWall(to) - dayKeyToWall(from)) / DAY_MS);
}

export function weekdayType(dayKey: string): WeekdayType {
  const weekday = new Date(dayKeyToWall(dayKey)).getUTCDay();
  return weekday === 0 || weekday === 6 ? 'weekend' : 'weekday';
}

/** Seconds since local midnight by the wall clock, for an instant on `day`. */
export function wallSecondsOf(ms: number, day: LocalDay, timeZone: string): number {
  if (day.regular) return (ms - day.start) / 1000;
  return (wallClock(ms, timeZone) - dayKeyToWall(day.key)) / 1000;
}

/** The instant on `day` whose wall clock reads `seconds` after midnight (first occurrence). */
export function instantOnDay(day: LocalDay, seconds: number, timeZone: string, gap: 'forward' | 'missing'): number {
  if (day.regular) return day.start + seconds * 1000;
  return wallToUtc(dayKeyToWall(day.key) + seconds * 1000, timeZone, gap);
}

/** Consecutive runs of an ascending timestamp array that fall on one local day each. */
export interface DayRun {
  day: LocalDay;
  from: number;
  to: number;
}

/** Splits ascending `timestamps` by local day: one Intl lookup per day, not per value. */
export function splitByLocalDay(timestamps: Float64Array, timeZone: string): DayRun[] {
  assertTimeZone(timeZone);
  const runs: DayRun[] = [];
  let i = 0;
  while (i < timestamps.length) {
    const day = localDay(keyOfWall(wallClock(timestamps[i]!, timeZone)), timeZone);
    let j = i + 1;
    while (j < timestamps.length && timestamps[j]! < day.end) j += 1;
    runs.push({ day, from: i, to: j });
    i = j;
  }
  return runs;
}
