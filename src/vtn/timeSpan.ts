// The time span of an event (or a report) for the `x-start`/`x-end` filter, derived from its
// intervalPeriod and intervals (docs/vtn.md, "Event span"):
// - the object's intervalPeriod gives the default start S and duration D of its intervals;
// - an interval with its own intervalPeriod covers [start, start + (its duration or D));
// - an interval without one is the k-th of a back-to-back sequence: [S + k·D, S + (k+1)·D),
//   k being its position in the list (OpenADR: "intervals are sequential");
// - without intervals the span is [S, S + D);
// - a zero or missing duration means open-ended (OpenADR: PT0S is "instantaneous or infinity,
//   depending on payloadType"; the filter takes the safe reading, infinity);
// - an object with no timing at all is unbounded: it overlaps every window.
// The span is [min start, max end); null bounds are unbounded.

export interface Period {
  start: string;
  duration?: string | null;
  randomizeStart?: string | null;
}

export interface Span {
  start: number | null;
  end: number | null;
}

interface Duration {
  sign: 1 | -1;
  years: number;
  months: number;
  /** Everything below months, in milliseconds (weeks and days are 24 h: all times are UTC). */
  ms: number;
}

const DURATION = /^(-)?P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;
const DAY = 86_400_000;

export function parseDuration(text: string): Duration | undefined {
  const m = DURATION.exec(text);
  if (!m) return undefined;
  const n = (i: number) => (m[i] ? Number(m[i]) : 0);
  const years = n(2);
  const months = n(3);
  // Fractions of years and months have no calendar meaning; they count as average lengths.
  const fractional = (years % 1) * 365.2425 * DAY + (months % 1) * 30.436875 * DAY;
  const ms = fractional + n(4) * 7 * DAY + n(5) * DAY + n(6) * 3_600_000 + n(7) * 60_000 + n(8) * 1000;
  return { sign: m[1] ? -1 : 1, years: Math.trunc(years), months: Math.trunc(months), ms };
}

export function isZero(d: Duration): boolean {
  return d.years === 0 && d.months === 0 && d.ms === 0;
}

/** `from` + times × duration, with calendar years and months (UTC). */
export function addDuration(from: number, d: Duration, times = 1): number {
  const k = d.sign * times;
  let t = from;
  if (d.years !== 0 || d.months !== 0) {
    const date = new Date(t);
    const day = date.getUTCDate();
    date.setUTCDate(1);
    date.setUTCMonth(date.getUTCMonth() + k * (d.years * 12 + d.months));
    // Clamp to the month's last day (Jan 31 + P1M = Feb 28/29), as calendars do.
    const last = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
    date.setUTCDate(Math.min(day, last));
    t = date.getTime();
  }
  return t + k * d.ms;
}

interface Timed {
  intervalPeriod?: Period | null;
}

function periodSpan(start: number, duration: Duration | undefined, times = 1): [number, number | null] {
  if (!duration || isZero(duration)) return [start, null];
  const end = addDuration(start, duration, times);
  return end >= start ? [start, end] : [end, start];
}

/** Span of an object with a default intervalPeriod and intervals (an event, a report resource). */
export function spanOf(period: Period | null | undefined, intervals: readonly Timed[] | null | undefined): Span | undefined {
  const defaultStart = period ? Date.parse(period.start) : undefined;
  const defaultDuration = period?.duration ? parseDuration(period.duration) : undefined;
  const pieces: [number, number | null][] = [];
  if (defaultStart !== undefined && (!intervals || intervals.length === 0)) pieces.push(periodSpan(defaultStart, defaultDuration));
  intervals?.forEach((item, k) => {
    const own = item.intervalPeriod;
    if (own) {
      const ownDuration = own.duration ? parseDuration(own.duration) : defaultDuration;
      pieces.push(periodSpan(Date.parse(own.start), ownDuration));
    } else if (defaultStart !== undefined) {
      const begin = defaultDuration && !isZero(defaultDuration) ? addDuration(defaultStart, defaultDuration, k) : defaultStart;
      pieces.push(periodSpan(begin, defaultDuration));
    }
  });
  return combine(pieces);
}

/** The hull of several spans; undefined when there is no timing at all. */
export function combine(pieces: readonly (readonly [number, number | null])[]): Span | undefined {
  if (pieces.length === 0) return undefined;
  let start = Infinity;
  let end: number | null = -Infinity;
  for (const [s, e] of pieces) {
    start = Math.min(start, s);
    end = end === null || e === null ? null : Math.max(end, e);
  }
  return { start, end };
}

/** Span of a report: the hull of its resources' spans (each like an event). */
export function reportSpan(resources: readonly { intervalPeriod?: Period | null; intervals?: readonly Timed[] | null }[] | null | undefined): Span | undefined {
  const pieces: [number, number | null][] = [];
  for (const r of resources ?? []) {
    const span = spanOf(r.intervalPeriod, r.intervals);
    if (span) pieces.push([span.start!, span.end]);
  }
  return combine(pieces);
}

/** Column values: undefined spans are unbounded on both sides. */
export function spanColumns(span: Span | undefined): [string | null, string | null] {
  const iso = (ms: number | null) => (ms === null || !Number.isFinite(ms) ? null : new Date(ms).toISOString());
  return span ? [iso(span.start), iso(span.end)] : [null, null];
}
