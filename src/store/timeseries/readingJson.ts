// The one place a reading becomes JSON: the published Reading of GET /api/readings
// ({timestamp, periodTo, updatedAt, value, resolution}; `readingSchema` in src/meter/schemas.ts),
// for both backends and for computed (virtual) registers. test/integration/timeseriesContract
// checks every backend's answers against the route's response schema.
//
// Hand-written, not fast-json-stringify: this is the hot path of large reads (100 registers × a
// month of hourly averages is 74,400 readings, 11 MB of JSON), and the generic serializer would
// first need an object and three Date strings per reading. Timestamps are a cached day prefix
// plus table lookups for the time of day, and consecutive readings share texts (a reading's
// periodTo is usually the next one's timestamp; a batch shares one updatedAt), so most readings
// format one timestamp and one number. Measured in docs/benchmarks-meter.md.
import type { Series } from './types.ts';

const DAY_MS = 86_400_000;
const pad = (n: number, width: number) => String(n).padStart(width, '0');
/** `HH:MM:` of each minute of a day. */
const MINUTES = Array.from({ length: 1440 }, (_, m) => `${pad(Math.floor(m / 60), 2)}:${pad(m % 60, 2)}:`);
/** `SS.000Z` of each second of a minute (whole seconds: nearly every reading's instant). */
const WHOLE_SECONDS = Array.from({ length: 60 }, (_, s) => `${pad(s, 2)}.000Z`);
const SECONDS = Array.from({ length: 60 }, (_, s) => `${pad(s, 2)}.`);
const MILLIS = Array.from({ length: 1000 }, (_, ms) => `${pad(ms, 3)}Z`);

let cachedDay = NaN;
let cachedPrefix = '';

/** `YYYY-MM-DDTHH:MM:SS.mmmZ` of an instant in whole UTC milliseconds: Date#toISOString's text. */
export function isoUtc(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay) {
    const text = new Date(day * DAY_MS).toISOString();
    cachedPrefix = text.slice(0, text.indexOf('T') + 1);
    cachedDay = day;
  }
  const inDay = ms - day * DAY_MS;
  const minute = Math.floor(inDay / 60_000);
  const inMinute = inDay - minute * 60_000;
  const second = Math.floor(inMinute / 1000);
  const milli = inMinute - second * 1000;
  return milli === 0 ? cachedPrefix + MINUTES[minute] + WHOLE_SECONDS[second] : cachedPrefix + MINUTES[minute] + SECONDS[second] + MILLIS[Math.floor(milli)];
}

/** A JSON number; a non-finite one (an overflowing sum) becomes null, as JSON.stringify does. */
function number(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/** One Reading as JSON text. */
export function readingJson(timestamp: number, periodTo: number, updatedAt: number, value: number, resolution: number): string {
  return `{"timestamp":"${isoUtc(timestamp)}","periodTo":"${isoUtc(periodTo)}","updatedAt":"${isoUtc(updatedAt)}","value":${number(value)},"resolution":${resolution}}`;
}

/** The series as a JSON array of Reading: periodTo = timestamp + the row's resolution; the
 * `resolution` written is `bucketSeconds` when given (buckets: the length asked for, 86400 on a
 * 23-hour local day too), else the row's own. */
export function seriesJson(series: Series, bucketSeconds?: number): string {
  const { timestamps, values, resolutions, updatedAt } = series;
  const n = timestamps.length;
  if (n === 0) return '[]';
  // Texts of the previous reading's periodTo and updatedAt, and of the last resolution.
  let endMs = NaN;
  let endText = '';
  let updatedMs = NaN;
  let updatedText = '';
  let seconds = NaN;
  let tail = '';
  let out = '[';
  for (let i = 0; i < n; i += 1) {
    const t = timestamps[i]!;
    const start = t === endMs ? endText : isoUtc(t);
    if (resolutions[i] !== seconds) {
      seconds = resolutions[i]!;
      tail = `,"resolution":${bucketSeconds ?? seconds}}`;
    }
    endMs = t + seconds * 1000;
    endText = isoUtc(endMs);
    const u = updatedAt[i]!;
    if (u !== updatedMs) {
      updatedMs = u;
      updatedText = isoUtc(u);
    }
    out += `${i === 0 ? '' : ','}{"timestamp":"${start}","periodTo":"${endText}","updatedAt":"${updatedText}","value":${number(values[i]!)}${tail}`;
  }
  return `${out}]`;
}

/** Every series with data, as JSON arrays by register id. */
export function seriesJsonById(series: readonly Series[], bucketSeconds?: number): Map<number, string> {
  const out = new Map<number, string>();
  for (const s of series) if (s.timestamps.length > 0) out.set(s.registerId, seriesJson(s, bucketSeconds));
  return out;
}
