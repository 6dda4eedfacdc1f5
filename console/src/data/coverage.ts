// Coverage of a register's readings per local day of its time zone: complete (every second of
// the day covered by a reading's [timestamp, periodTo)), partial, or missing. Days not over yet
// are `open` (not judged). Computed from the readings as stored, so it needs nothing beyond
// GET /api/readings.

export type DayState = 'complete' | 'partial' | 'missing' | 'open';

export interface DayCoverage {
  /** Local date, YYYY-MM-DD. */
  day: string;
  state: DayState;
  /** Readings that start in the day. */
  readings: number;
  /** Share of the day's seconds covered, 0–1. */
  covered: number;
}

const parts = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = parts.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    parts.set(timeZone, f);
  }
  return f;
}

/** Offset of the zone from UTC at an instant, in ms (local − UTC). */
function offsetAt(timeZone: string, instant: number): number {
  const p: Record<string, number> = {};
  for (const { type, value } of formatter(timeZone).formatToParts(new Date(instant))) p[type] = Number(value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) - Math.floor(instant / 1000) * 1000;
}

/** The instant of local midnight starting a local date (two passes settle DST changes). */
export function localMidnight(timeZone: string, year: number, month: number, day: number): number {
  const wall = Date.UTC(year, month - 1, day);
  let guess = wall - offsetAt(timeZone, wall);
  guess = wall - offsetAt(timeZone, guess);
  return guess;
}

/** Day boundaries of a local calendar year: 366 or 367 instants. */
export function dayStarts(timeZone: string, year: number): { day: string; start: number }[] {
  const out: { day: string; start: number }[] = [];
  for (let d = new Date(Date.UTC(year, 0, 1)); d.getUTCFullYear() <= year; d.setUTCDate(d.getUTCDate() + 1)) {
    out.push({ day: d.toISOString().slice(0, 10), start: localMidnight(timeZone, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()) });
  }
  out.push({ day: `${year + 1}-01-01`, start: localMidnight(timeZone, year + 1, 1, 1) });
  return out;
}

export interface Interval {
  start: number;
  end: number;
}

/** Coverage per day. `readings` must be sorted by start (the API returns them so); overlapping
 * readings are counted once. */
export function coverageByDay(readings: readonly Interval[], timeZone: string, year: number, now = Date.now()): DayCoverage[] {
  const days = dayStarts(timeZone, year);
  const out: DayCoverage[] = [];
  let r = 0;
  for (let d = 0; d + 1 < days.length; d += 1) {
    const dayStart = days[d]!.start;
    const dayEnd = days[d + 1]!.start;
    while (r < readings.length && readings[r]!.end <= dayStart) r += 1;
    let covered = 0;
    let count = 0;
    let cursor = dayStart;
    for (let k = r; k < readings.length && readings[k]!.start < dayEnd; k += 1) {
      const reading = readings[k]!;
      if (reading.start >= dayStart) count += 1;
      const from = Math.max(reading.start, cursor);
      const to = Math.min(reading.end, dayEnd);
      if (to > from) {
        covered += to - from;
        cursor = to;
      }
    }
    const length = dayEnd - dayStart;
    const state: DayState = dayEnd > now ? 'open' : covered >= length ? 'complete' : covered > 0 ? 'partial' : 'missing';
    out.push({ day: days[d]!.day, state, readings: count, covered: covered / length });
  }
  return out;
}
