// How long superseded reading versions are kept (READING_VERSIONS_RETENTION): an ISO 8601
// duration (P90D, P1Y6M, PT12H, P2W) or `forever` (the default). Years and months are calendar
// ones, counted back in UTC from the instant asked (P1M before 31 March is the last of February);
// weeks, days and times are fixed lengths (a day is 24 hours: UTC has
// no DST). Shared by the configuration, the reading routes (an `asOf` before the limit is a
// 400) and the stores' purges.

export interface Retention {
  /** As configured: `forever` or the duration's text. */
  text: string;
  /** The earliest instant whose answers are still complete (UTC ms): versions superseded
   * before it may be purged. -Infinity when kept forever. */
  cutoff(now: number): number;
}

export const FOREVER: Retention = { text: 'forever', cutoff: () => -Infinity };

const DURATION = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d{1,3})?)S)?)?$/;

/** The retention of `text`, or undefined when it is neither `forever` nor a usable duration
 * (empty, zero, or longer than 10,000 years). */
export function parseRetention(text: string): Retention | undefined {
  const t = text.trim();
  if (t.toLowerCase() === 'forever') return FOREVER;
  const m = DURATION.exec(t.toUpperCase());
  if (!m || t.endsWith('T') || t.length < 3) return undefined;
  const [years, months, weeks, days, hours, minutes] = m.slice(1, 7).map((x) => (x === undefined ? 0 : Number(x)));
  const seconds = m[7] === undefined ? 0 : Number(m[7]);
  const fixed = (((weeks! * 7 + days!) * 24 + hours!) * 60 + minutes!) * 60_000 + seconds * 1000;
  if (years! * 12 + months! === 0 && fixed === 0) return undefined;
  if (years! + months! / 12 + fixed / (365 * 86_400_000) > 10_000) return undefined;
  return {
    text: t.toUpperCase(),
    cutoff(now: number): number {
      return monthsBefore(now, years! * 12 + months!) - fixed;
    },
  };
}

/** The same UTC day of month and time `months` months earlier, the day cut to the month's last. */
function monthsBefore(now: number, months: number): number {
  if (months === 0) return now;
  const d = new Date(now);
  const total = d.getUTCFullYear() * 12 + d.getUTCMonth() - months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const lastDay = month === 1 ? (isLeap(year) ? 29 : 28) : MONTH_DAYS[month]!;
  // Year 2000 first (Date.UTC reads years 0–99 as 1900–1999), then the real one.
  const out = new Date(Date.UTC(2000, month, Math.min(d.getUTCDate(), lastDay), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()));
  out.setUTCFullYear(year);
  return out.getTime();
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
