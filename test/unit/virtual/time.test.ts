// Expected instants are written out by hand from the zones' published rules:
// Europe/Oslo      CET +01 / CEST +02; 2024-03-31 02:00 → 03:00 (01:00Z), 2024-10-27 03:00 → 02:00 (01:00Z)
// America/New_York EST −05 / EDT −04; 2024-03-10 02:00 → 03:00 (07:00Z), 2024-11-03 02:00 → 01:00 (06:00Z)
// America/Santiago −04 / −03;         2024-09-08 00:00 → 01:00 (04:00Z), 2024-04-07 00:00 → 2024-04-06 23:00 (03:00Z)
import { describe, expect, it } from 'vitest';
import {
  addLocalDays,
  dayIndexOfKey,
  dayIndexToKey,
  daysBetween,
  instantOnDay,
  isValidTimeZone,
  localDateParts,
  localDay,
  localDayKey,
  nextLocalMidnight,
  parseTimeOfDay,
  splitByLocalDay,
  startOfLocalDay,
  wallSecondsOf,
  weekdayOfIndex,
  weekdayType,
  zonedTimeToUtc,
} from '../../../src/shared/virtual/time.ts';

const OSLO = 'Europe/Oslo';
const NEW_YORK = 'America/New_York';
const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000', '');

describe('isValidTimeZone', () => {
  it('accepts IANA names and UTC, refuses anything else', () => {
    expect(isValidTimeZone('Europe/Oslo')).toBe(true);
    expect(isValidTimeZone('America/New_York')).toBe(true);
    expect(isValidTimeZone('UTC')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
    expect(isValidTimeZone(42)).toBe(false);
    expect(isValidTimeZone(undefined)).toBe(false);
  });
});

describe('localDayKey and localDateParts', () => {
  it('gives the local calendar day of an instant', () => {
    expect(localDayKey(at('2024-03-30T22:59:59Z'), OSLO)).toBe('2024-03-30');
    expect(localDayKey(at('2024-03-30T23:00:00Z'), OSLO)).toBe('2024-03-31');
    expect(localDayKey(at('2024-03-31T21:59:59Z'), OSLO)).toBe('2024-03-31'); // 23:59:59 CEST
    expect(localDayKey(at('2024-03-31T22:00:00Z'), OSLO)).toBe('2024-04-01');
    expect(localDayKey(at('2024-11-03T04:30:00Z'), NEW_YORK)).toBe('2024-11-03');
    expect(localDayKey(at('2024-11-03T03:59:59Z'), NEW_YORK)).toBe('2024-11-02');
    expect(localDayKey(at('2024-03-31T23:30:00Z'), 'UTC')).toBe('2024-03-31');
  });

  it('gives clock, weekday and offset, across the Oslo spring change', () => {
    expect(localDateParts(at('2024-03-31T00:59:59Z'), OSLO)).toEqual({ year: 2024, month: 3, day: 31, hour: 1, minute: 59, second: 59, weekday: 7, offsetMinutes: 60, dayKey: '2024-03-31' });
    expect(localDateParts(at('2024-03-31T01:00:00Z'), OSLO)).toEqual({ year: 2024, month: 3, day: 31, hour: 3, minute: 0, second: 0, weekday: 7, offsetMinutes: 120, dayKey: '2024-03-31' });
  });

  it('shows the repeated hour twice in the Oslo autumn change', () => {
    expect(localDateParts(at('2024-10-27T00:30:00Z'), OSLO)).toMatchObject({ hour: 2, minute: 30, offsetMinutes: 120 });
    expect(localDateParts(at('2024-10-27T01:30:00Z'), OSLO)).toMatchObject({ hour: 2, minute: 30, offsetMinutes: 60 });
  });

  it('gives New York offsets on both sides of its changes', () => {
    expect(localDateParts(at('2024-03-10T06:59:00Z'), NEW_YORK)).toMatchObject({ hour: 1, minute: 59, offsetMinutes: -300, weekday: 7 });
    expect(localDateParts(at('2024-03-10T07:00:00Z'), NEW_YORK)).toMatchObject({ hour: 3, minute: 0, offsetMinutes: -240 });
    expect(localDateParts(at('2024-11-03T05:30:00Z'), NEW_YORK)).toMatchObject({ hour: 1, minute: 30, offsetMinutes: -240 });
    expect(localDateParts(at('2024-11-03T06:30:00Z'), NEW_YORK)).toMatchObject({ hour: 1, minute: 30, offsetMinutes: -300 });
  });

  it('refuses an unknown zone with a code', () => {
    expect(() => localDayKey(0, 'Nowhere/Town')).toThrow(expect.objectContaining({ code: 'invalid_time_zone' }));
  });
});

describe('zonedTimeToUtc', () => {
  it('converts ordinary local times', () => {
    expect(iso(zonedTimeToUtc('2024-01-15', '06:00:00', OSLO))).toBe('2024-01-15T05:00:00Z');
    expect(iso(zonedTimeToUtc('2024-07-15', '06:00:00', OSLO))).toBe('2024-07-15T04:00:00Z');
    expect(iso(zonedTimeToUtc('2024-01-15', '06:00:00', NEW_YORK))).toBe('2024-01-15T11:00:00Z');
    expect(iso(zonedTimeToUtc('2024-07-15', '23:59:59', 'UTC'))).toBe('2024-07-15T23:59:59Z');
  });

  it('converts the times just around each change', () => {
    expect(iso(zonedTimeToUtc('2024-03-31', '01:59:59', OSLO))).toBe('2024-03-31T00:59:59Z');
    expect(iso(zonedTimeToUtc('2024-03-31', '03:00:00', OSLO))).toBe('2024-03-31T01:00:00Z');
    expect(iso(zonedTimeToUtc('2024-10-27', '03:00:00', OSLO))).toBe('2024-10-27T02:00:00Z');
    expect(iso(zonedTimeToUtc('2024-03-10', '03:00:00', NEW_YORK))).toBe('2024-03-10T07:00:00Z');
    expect(iso(zonedTimeToUtc('2024-11-03', '02:00:00', NEW_YORK))).toBe('2024-11-03T07:00:00Z');
  });

  it('moves a time in the spring gap forward by the length of the gap', () => {
    // 02:30 does not exist; 02:30 CET would be 01:30Z, which the clock shows as 03:30 CEST.
    expect(iso(zonedTimeToUtc('2024-03-31', '02:30:00', OSLO))).toBe('2024-03-31T01:30:00Z');
    expect(iso(zonedTimeToUtc('2024-03-31', '02:00:00', OSLO))).toBe('2024-03-31T01:00:00Z');
    expect(iso(zonedTimeToUtc('2024-03-10', '02:30:00', NEW_YORK))).toBe('2024-03-10T07:30:00Z');
  });

  it('takes the first occurrence of a time in the autumn overlap', () => {
    expect(iso(zonedTimeToUtc('2024-10-27', '02:30:00', OSLO))).toBe('2024-10-27T00:30:00Z'); // CEST, not 01:30Z
    expect(iso(zonedTimeToUtc('2024-10-27', '02:00:00', OSLO))).toBe('2024-10-27T00:00:00Z');
    expect(iso(zonedTimeToUtc('2024-11-03', '01:30:00', NEW_YORK))).toBe('2024-11-03T05:30:00Z'); // EDT, not 06:30Z
  });

  it('refuses bad days, times and zones with codes', () => {
    expect(() => zonedTimeToUtc('2024-02-30', '00:00:00', OSLO)).toThrow(expect.objectContaining({ code: 'invalid_day' }));
    expect(() => zonedTimeToUtc('2024-1-5', '00:00:00', OSLO)).toThrow(expect.objectContaining({ code: 'invalid_day' }));
    expect(() => zonedTimeToUtc('2024-01-05', '24:00:00', OSLO)).toThrow(expect.objectContaining({ code: 'invalid_time_of_day' }));
    expect(() => zonedTimeToUtc('2024-01-05', '06:00', OSLO)).toThrow(expect.objectContaining({ code: 'invalid_time_of_day' }));
    expect(() => zonedTimeToUtc('2024-01-05', '06:00:00', 'CEST')).toThrow(expect.objectContaining({ code: 'invalid_time_zone' }));
  });
});

describe('local days', () => {
  it.each([
    // zone, day, start, end, hours
    [OSLO, '2024-03-30', '2024-03-29T23:00:00Z', '2024-03-30T23:00:00Z', 24],
    [OSLO, '2024-03-31', '2024-03-30T23:00:00Z', '2024-03-31T22:00:00Z', 23],
    [OSLO, '2024-10-27', '2024-10-26T22:00:00Z', '2024-10-27T23:00:00Z', 25],
    [NEW_YORK, '2024-03-10', '2024-03-10T05:00:00Z', '2024-03-11T04:00:00Z', 23],
    [NEW_YORK, '2024-11-03', '2024-11-03T04:00:00Z', '2024-11-04T05:00:00Z', 25],
    // Santiago springs forward at midnight: 2024-09-08 has no 00:00 and starts at 01:00 −03.
    ['America/Santiago', '2024-09-08', '2024-09-08T04:00:00Z', '2024-09-09T03:00:00Z', 23],
    ['America/Santiago', '2024-04-06', '2024-04-06T03:00:00Z', '2024-04-07T04:00:00Z', 25],
    // Lord Howe changes by half an hour.
    ['Australia/Lord_Howe', '2024-10-06', '2024-10-05T13:30:00Z', '2024-10-06T13:00:00Z', 23.5],
  ])('%s %s runs %s – %s (%s h)', (zone, key, start, end, hours) => {
    const day = localDay(key, zone);
    expect([iso(day.start), iso(day.end), (day.end - day.start) / 3_600_000, day.regular]).toEqual([start, end, hours, hours === 24]);
  });

  it('startOfLocalDay and nextLocalMidnight bracket any instant of the day', () => {
    expect(iso(startOfLocalDay(at('2024-03-31T12:00:00Z'), OSLO))).toBe('2024-03-30T23:00:00Z');
    expect(iso(nextLocalMidnight(at('2024-03-31T12:00:00Z'), OSLO))).toBe('2024-03-31T22:00:00Z');
    expect(iso(startOfLocalDay(at('2024-10-27T22:59:59Z'), OSLO))).toBe('2024-10-26T22:00:00Z');
    expect(iso(nextLocalMidnight(at('2024-10-27T22:59:59Z'), OSLO))).toBe('2024-10-27T23:00:00Z');
    expect(iso(startOfLocalDay(at('2024-03-10T04:59:59Z'), NEW_YORK))).toBe('2024-03-09T05:00:00Z');
    expect(iso(nextLocalMidnight(at('2024-03-10T05:00:00Z'), NEW_YORK))).toBe('2024-03-11T04:00:00Z');
    expect(iso(startOfLocalDay(at('2024-11-03T23:00:00Z'), NEW_YORK))).toBe('2024-11-03T04:00:00Z');
    expect(iso(nextLocalMidnight(at('2024-11-03T23:00:00Z'), NEW_YORK))).toBe('2024-11-04T05:00:00Z');
    expect(iso(startOfLocalDay(at('2024-09-08T12:00:00Z'), 'America/Santiago'))).toBe('2024-09-08T04:00:00Z');
  });

  it('reads and writes clock times of a day, irregular days included', () => {
    const spring = localDay('2024-03-31', OSLO);
    expect(wallSecondsOf(at('2024-03-31T00:00:00Z'), spring)).toBe(3600); // 01:00 CET
    expect(wallSecondsOf(at('2024-03-31T01:00:00Z'), spring)).toBe(3 * 3600); // 03:00 CEST
    expect(iso(instantOnDay(spring, 3 * 3600, 'missing'))).toBe('2024-03-31T01:00:00Z');
    expect(instantOnDay(spring, 2 * 3600, 'missing')).toBeNaN();
    expect(iso(instantOnDay(spring, 2 * 3600, 'forward'))).toBe('2024-03-31T01:00:00Z');
    const autumn = localDay('2024-10-27', OSLO);
    expect(wallSecondsOf(at('2024-10-27T01:00:00Z'), autumn)).toBe(2 * 3600); // second 02:00
    expect(iso(instantOnDay(autumn, 2 * 3600, 'missing'))).toBe('2024-10-27T00:00:00Z'); // first 02:00
    const ordinary = localDay('2024-01-15', OSLO);
    expect(wallSecondsOf(at('2024-01-15T16:15:00Z'), ordinary)).toBe(17.25 * 3600);
    expect(iso(instantOnDay(ordinary, 17.25 * 3600, 'missing'))).toBe('2024-01-15T16:15:00Z');
  });

  it('splits ascending timestamps into local-day runs', () => {
    const ts = Float64Array.from(['2024-03-30T22:00:00Z', '2024-03-30T23:00:00Z', '2024-03-31T21:00:00Z', '2024-03-31T22:00:00Z', '2024-04-03T10:00:00Z'], at);
    expect(splitByLocalDay(ts, OSLO).map((r) => [r.day.key, r.from, r.to])).toEqual([
      ['2024-03-30', 0, 1],
      ['2024-03-31', 1, 3],
      ['2024-04-01', 3, 4],
      ['2024-04-03', 4, 5],
    ]);
    expect(splitByLocalDay(new Float64Array(0), OSLO)).toEqual([]);
  });
});

describe('calendar arithmetic', () => {
  it('adds days across months, leap days and years', () => {
    expect(addLocalDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addLocalDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(addLocalDays('2023-03-01', -1)).toBe('2023-02-28');
    expect(addLocalDays('2024-12-31', 1)).toBe('2025-01-01');
    expect(addLocalDays('2024-03-31', -45)).toBe('2024-02-15');
    expect(addLocalDays('2024-10-27', 0)).toBe('2024-10-27');
    expect(daysBetween('2024-02-27', '2024-03-01')).toBe(3);
    expect(daysBetween('2024-03-01', '2024-02-27')).toBe(-3);
  });

  it('tells weekdays (Monday–Friday) from weekend days', () => {
    // 2024-01-01 was a Monday.
    expect(['2024-01-01', '2024-01-05', '2024-01-06', '2024-01-07', '2024-01-08'].map(weekdayType)).toEqual(['weekday', 'weekday', 'weekend', 'weekend', 'weekday']);
    expect(weekdayType('2024-03-31')).toBe('weekend');
    expect(weekdayType('2024-11-04')).toBe('weekday');
  });

  it('parses HH:MM:SS times of day', () => {
    expect(parseTimeOfDay('06:00:00')).toEqual({ ok: true, value: { hour: 6, minute: 0, second: 0, seconds: 21600 } });
    expect(parseTimeOfDay('23:59:59')).toEqual({ ok: true, value: { hour: 23, minute: 59, second: 59, seconds: 86399 } });
    expect(parseTimeOfDay('00:00:00')).toMatchObject({ ok: true, value: { seconds: 0 } });
    for (const bad of ['24:00:00', '12:60:00', '12:00:60', '6:00:00', '06:00', '06:00:00.5', ' 06:00:00', '', 'noon']) {
      expect(parseTimeOfDay(bad).ok, bad).toBe(false);
    }
    expect(parseTimeOfDay('24:00:00')).toEqual({ ok: false, message: 'time of day out of range: 24:00:00' });
  });
});

describe('calendar day numbers', () => {
  it('numbers days from 1970-01-01 (a Thursday)', () => {
    expect(dayIndexOfKey('1970-01-01')).toBe(0);
    expect(dayIndexOfKey('1969-12-31')).toBe(-1);
    expect(dayIndexOfKey('2024-01-01')).toBe(19723);
    expect(dayIndexToKey(19723)).toBe('2024-01-01');
    expect(dayIndexToKey(-1)).toBe('1969-12-31');
    expect([0, 1, 2, 3, 4, 5, 6].map(weekdayOfIndex)).toEqual([4, 5, 6, 0, 1, 2, 3]);
    expect(weekdayOfIndex(-1)).toBe(3);
  });

  it('agrees with Date for every day from 1900 to 2100', () => {
    for (let index = dayIndexOfKey('1900-01-01'); index <= dayIndexOfKey('2100-12-31'); index++) {
      const key = new Date(index * 86_400_000).toISOString().slice(0, 10);
      if (dayIndexToKey(index) !== key || dayIndexOfKey(key) !== index) throw new Error(`day ${index}: ${dayIndexToKey(index)} vs ${key}`);
    }
  });

  it('refuses keys that are not real dates', () => {
    for (const bad of ['2023-02-29', '2024-02-30', '2024-04-31', '2024-13-01', '2024-00-10', '2024-1-01', '2024/01/01', '20240101', 'abcd-ef-gh']) {
      expect(() => dayIndexOfKey(bad), bad).toThrow(expect.objectContaining({ code: 'invalid_day' }));
    }
    expect(dayIndexOfKey('2000-02-29')).toBe(11016);
  });
});

describe('local days agree with Intl everywhere', () => {
  // Intl is the oracle: every day of 2024 in zones with whole-hour, half-hour, 45-minute,
  // southern-hemisphere and midnight clock changes, and none.
  it.each(['Europe/Oslo', 'America/New_York', 'America/Santiago', 'Australia/Lord_Howe', 'Australia/Sydney', 'Pacific/Chatham', 'Asia/Kolkata', 'UTC'])('%s', (zone) => {
    const wallParts = (ms: number) => localDateParts(ms, zone);
    for (let index = dayIndexOfKey('2024-01-01'); index <= dayIndexOfKey('2024-12-31'); index++) {
      const key = dayIndexToKey(index);
      const day = localDay(key, zone);
      const problems: string[] = [];
      if (wallParts(day.start).dayKey !== key || wallParts(day.start - 1000).dayKey === key) problems.push('start');
      if (wallParts(day.end).dayKey === key || wallParts(day.end - 1000).dayKey !== key) problems.push('end');
      for (let t = day.start; t < day.end; t += 15 * 60_000) {
        const p = wallParts(t);
        const seconds = p.hour * 3600 + p.minute * 60 + p.second;
        if (wallSecondsOf(t, day) !== seconds) problems.push(`clock at ${iso(t)}`);
        const back = instantOnDay(day, seconds, 'missing');
        // A clock time seen twice maps back to its first occurrence.
        if (back !== t && !(back < t && wallParts(back).hour === p.hour && wallParts(back).minute === p.minute)) problems.push(`instant at ${iso(t)}`);
      }
      if (problems.length > 0) throw new Error(`${zone} ${key}: ${problems.slice(0, 3).join(', ')}`);
    }
  });

  it('gives Samoa no 2011-12-30 (it skipped that day)', () => {
    const day = localDay('2011-12-30', 'Pacific/Apia');
    expect([iso(day.start), iso(day.end)]).toEqual(['2011-12-30T10:00:00Z', '2011-12-30T10:00:00Z']);
  });
});
