// The export's pages: stored readings of each register, in time windows small enough that one
// page stays a few megabytes whatever the period, read through the time-series store with the
// semantics of GET /api/readings:
//   resolution 0 — readings as stored (readSeries); periodTo = timestamp + the reading's resolution;
//   resolution R — R-second buckets aligned to the UTC epoch, or local days of the register's time
//   zone for R = 86400, energy and volume summed, the rest averaged (bucketSeries, the same SQL as
//   the API); periodTo = the bucket's end; resolution = R; updatedAt = the latest of the bucket.
// Windows of bucketed exports start and end on bucket boundaries, so no bucket is split.
// Windows of as-stored exports are sized from the register's defaultResolution (PAGE_ROWS readings
// at that spacing) and adapt to the density actually found, within 1 minute and 4 times that size.
import type { TimeSeriesStore } from '../store/timeseries/types.ts';
import type { RegisterForRead } from '../meter/meterStore.ts';
import { aggregateOf } from '../meter/readingsQuery.ts';
import { roundComputed } from '../store/timeseries/readingJson.ts';
import { startOfLocalDay } from '../shared/virtual/time.ts';

export const EXPORT_HEADER = 'registerId,timestamp,periodTo,updatedAt,value,resolution\n';

/** Readings per page aimed at (about 5 MB of CSV). */
export const PAGE_ROWS = 50_000;
const DAY_MS = 86_400_000;
const MIN_WINDOW_MS = 60_000;
const MAX_WINDOW_MS = 366 * DAY_MS;

export interface ExportQuery {
  registers: readonly RegisterForRead[];
  start: number;
  end: number;
  /** 0 = as stored; otherwise bucket length in seconds. */
  resolution: number;
  /** UTC ms: the readings as recorded at that instant (undefined: now, page by page). */
  asOf?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The end of the window that starts at `from`: a bucket boundary for bucketed exports. */
function bucketWindowEnd(from: number, q: ExportQuery, register: RegisterForRead, pageRows: number): number {
  if (q.resolution === 86400) return Math.min(q.end, startOfLocalDay(from + Math.min(pageRows, 366) * DAY_MS, register.timeZone));
  const step = pageRows * q.resolution * 1000;
  return Math.min(q.end, (Math.floor(from / step) + 1) * step);
}

async function* bucketPages(store: TimeSeriesStore, q: ExportQuery, register: RegisterForRead, pageRows: number): AsyncGenerator<string> {
  for (let from = q.start; from < q.end; ) {
    const to = bucketWindowEnd(from, q, register, pageRows);
    const [series] = await store.bucketSeries({
      registers: [{ id: register.id, aggregate: aggregateOf(register), timeZone: register.timeZone }],
      start: from,
      end: to,
      resolutionSeconds: q.resolution,
      asOf: q.asOf,
    });
    let text = '';
    const s = series!;
    for (let i = 0; i < s.timestamps.length; i += 1) {
      const t = s.timestamps[i]!;
      text += `${register.id},${iso(t)},${iso(t + s.resolutions[i]! * 1000)},${iso(s.updatedAt[i]!)},${roundComputed(s.values[i]!)},${q.resolution}\n`;
    }
    if (text) yield text;
    from = to;
  }
}

async function* storedPages(store: TimeSeriesStore, q: ExportQuery, register: RegisterForRead, pageRows: number): AsyncGenerator<string> {
  // A page of readings at the register's defaultResolution; sparse stretches may widen it only
  // up to 4 times, so data denser after a gap cannot make one page huge.
  const base = Math.max(MIN_WINDOW_MS, pageRows * register.defaultResolution * 1000);
  const widest = Math.min(MAX_WINDOW_MS, 4 * base);
  let window = Math.min(widest, base);
  for (let from = q.start; from < q.end; ) {
    const to = Math.min(q.end, from + window);
    const [s] = await store.readSeries({ registerIds: [register.id], start: from, end: to, asOf: q.asOf });
    const n = s!.timestamps.length;
    let text = '';
    for (let i = 0; i < n; i += 1) {
      const t = s!.timestamps[i]!;
      const resolution = s!.resolutions[i]!;
      text += `${register.id},${iso(t)},${iso(t + resolution * 1000)},${iso(s!.updatedAt[i]!)},${s!.values[i]!},${resolution}\n`;
    }
    if (text) yield text;
    from = to;
    // Denser than expected: smaller windows; sparser: larger ones.
    if (n > 2 * pageRows) window = Math.max(MIN_WINDOW_MS, window / 4);
    else if (n < pageRows / 4) window = Math.min(widest, window * 2);
  }
}

/** The export as CSV text pieces, the header first, register by register in the order asked, each time-ordered. */
export async function* exportPages(store: TimeSeriesStore, q: ExportQuery, pageRows = PAGE_ROWS): AsyncGenerator<string> {
  yield EXPORT_HEADER;
  for (const register of q.registers) {
    yield* q.resolution === 0 ? storedPages(store, q, register, pageRows) : bucketPages(store, q, register, pageRows);
  }
}
