// Local wall-clock time of an IANA zone, for the demo's synthetic meter data: the profiles follow
// local days and hours (a heat pump's morning peak is at 07:00 in Helsinki and in Amsterdam alike).
// Offsets come from Intl once per UTC hour and are cached, so a year of quarter hours costs
// ~9,000 Intl calls per zone instead of ~35,000.

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

export interface LocalTime {
  /** Hours since local midnight, fractional (17.25 = 17:15). */
  hour: number;
  /** 0 = Monday … 6 = Sunday. */
  weekday: number;
  /** Days since 1 January of the local year (0-based). */
  dayOfYear: number;
  /** Local date, YYYY-MM-DD. */
  day: string;
}

export class ZoneClock {
  private readonly format: Intl.DateTimeFormat;
  private readonly offsets = new Map<number, number>();

  constructor(readonly timeZone: string) {
    this.format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' });
  }

  /** Local minus UTC, in ms, at an instant. */
  offset(instant: number): number {
    const hour = Math.floor(instant / HOUR);
    let offset = this.offsets.get(hour);
    if (offset === undefined) {
      const at = hour * HOUR;
      const p: Record<string, number> = {};
      for (const { type, value } of this.format.formatToParts(new Date(at))) p[type] = Number(value);
      offset = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!) - at;
      this.offsets.set(hour, offset);
    }
    return offset;
  }

  local(instant: number): LocalTime {
    const wall = instant + this.offset(instant);
    const midnight = Math.floor(wall / DAY) * DAY;
    const date = new Date(midnight);
    const weekday = (date.getUTCDay() + 6) % 7;
    const dayOfYear = Math.round((midnight - Date.UTC(date.getUTCFullYear(), 0, 1)) / DAY);
    return { hour: (wall - midnight) / HOUR, weekday, dayOfYear, day: date.toISOString().slice(0, 10) };
  }

  /** The instant of local `hh:mm` on the local date of `day` (a UTC midnight naming that date). */
  at(day: number, hours: number, minutes = 0): number {
    const wall = day + hours * HOUR + minutes * MINUTE;
    let guess = wall - this.offset(wall);
    guess = wall - this.offset(guess);
    return guess;
  }
}
