// The one place a reading becomes JSON: the published Reading of GET /api/readings
// ({timestamp, periodTo, updatedAt, value, resolution}; `readingSchema` in src/meter/schemas.ts),
// for both backends and for computed (virtual) registers. test/integration/readingJson.test.ts
// checks every backend's answers against the route's response schema.
//
// Hand-written, not fast-json-stringify: this is the hot path of large reads (100 registers × a
// month of hourly averages is 74,400 readings, 9 MB of JSON), and the generic serializer would
// first need an object per reading. Timestamps are formatted from a cached date prefix plus the
// time of day (Date#toISOString costs ~5× more); measured figures in docs/benchmarks-meter.md.
import type { Series } from './types.ts';

const DAY_MS = 86_400_000;
const TWO = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

let cachedDay = NaN;
let cachedPrefix = '';

/** `YYYY-MM-DDTHH:MM:SS.mmmZ` of an instant in whole UTC milliseconds (Date#toISOString's text). */
export function isoUtc(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay) {
    const text = new Date(day * DAY_MS).toISOString();
    cachedPrefix = text.slice(0, text.indexOf('T') + 1);
    cachedDay = day;
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${cachedPrefix}${TWO[hours]}:${TWO[minutes]}:${TWO[seconds]}.${THREE[Math.floor(rest - seconds * 1000)]}Z`;
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
  const parts = new Array<string>(n);
  for (let i = 0; i < n; i += 1) {
    const t = timestamps[i]!;
    const seconds = resolutions[i]!;
    parts[i] = readingJson(t, t + seconds * 1000, updatedAt[i]!, values[i]!, bucketSeconds ?? seconds);
  }
  return `[${parts.join(',')}]`;
}

/** Every series with data, as JSON arrays by register id. */
export function seriesJsonById(series: readonly Series[], bucketSeconds?: number): Map<number, string> {
  const out = new Map<number, string>();
  for (const s of series) if (s.timestamps.length > 0) out.set(s.registerId, seriesJson(s, bucketSeconds));
  return out;
}
