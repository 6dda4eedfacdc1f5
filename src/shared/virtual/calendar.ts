// Calendar days as numbers: day index = days since 1970-01-01 (proleptic Gregorian), day key
// = 'YYYY-MM-DD'. Integer arithmetic (H. Hinnant's days_from_civil / civil_from_days): the
// baselines turn thousands of day keys per request, and Date + toISOString measured 1.1 s of
// a 2.3 s profile before this file existed.
import { fail } from './errors.ts';

export type WeekdayType = 'weekday' | 'weekend';

/** Days from 1970-01-01 of a proleptic Gregorian date. */
export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** Year, month (1–12) and day of a day index (H. Hinnant's civil_from_days): the one
 * definition, for day keys here and for the reading JSON writer's dates
 * (src/store/timeseries/readingJson.ts). */
export function civilFromDays(index: number): { y: number; m: number; d: number } {
  const z = index + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097; // day of the 400-year era, from a 1 March
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100)); // day of the year from 1 March
  const mp = Math.floor((5 * doy + 2) / 153); // month from March = 0
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

export function dayIndexToKey(index: number): string {
  const { y, m, d } = civilFromDays(index);
  return `${String(y).padStart(4, '0')}-${pad2(m)}-${pad2(d)}`;
}

const digit = (code: number): number => (code >= 48 && code <= 57 ? code - 48 : NaN);

/** Days since 1970-01-01 of a 'YYYY-MM-DD' key; refuses anything that is not a real date. */
export function dayIndexOfKey(key: string): number {
  if (typeof key !== 'string' || key.length !== 10 || key[4] !== '-' || key[7] !== '-') {
    return fail('invalid_day', `not a day 'YYYY-MM-DD': ${JSON.stringify(key)}`);
  }
  const c = (i: number): number => digit(key.charCodeAt(i));
  const y = c(0) * 1000 + c(1) * 100 + c(2) * 10 + c(3);
  const m = c(5) * 10 + c(6);
  const d = c(8) * 10 + c(9);
  if (!(m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m))) {
    return fail('invalid_day', `not a day 'YYYY-MM-DD': ${JSON.stringify(key)}`);
  }
  return daysFromCivil(y, m, d);
}

export function addLocalDays(dayKey: string, days: number): string {
  if (!Number.isInteger(days)) fail('invalid_input', `days must be an integer, got ${days}`);
  return dayIndexToKey(dayIndexOfKey(dayKey) + days);
}

/** Whole calendar days from `from` to `to` ('2024-01-02' → '2024-01-05' is 3). */
export function daysBetween(from: string, to: string): number {
  return dayIndexOfKey(to) - dayIndexOfKey(from);
}

/** 0 = Sunday … 6 = Saturday (1970-01-01, index 0, was a Thursday). */
export function weekdayOfIndex(index: number): number {
  return (((index + 4) % 7) + 7) % 7;
}

export function weekdayTypeOfIndex(index: number): WeekdayType {
  const weekday = weekdayOfIndex(index);
  return weekday === 0 || weekday === 6 ? 'weekend' : 'weekday';
}

/** 'weekday' for Monday–Friday, 'weekend' for Saturday and Sunday. */
export function weekdayType(dayKey: string): WeekdayType {
  return weekdayTypeOfIndex(dayIndexOfKey(dayKey));
}
