// One fixed-size batch of the CSV import: valid readings in columns (the API parser's `Rows`),
// tagged with a batch-local series; rejected lines with their reasons. When the batch is full,
// `seal()` resolves the (meter, register) pairs it has not seen before in ONE query (the API's
// `lookupSeries`, so the rules are the same), rejects the rows of pairs that cannot take readings,
// and groups the rest exactly like POST /api/readings does (by series, sorted by time, the last
// of equal timestamps wins) into rows for the time-series store.
import type { Queryable } from '../store/database.ts';
import type { ReadingRows } from '../store/timeseries/types.ts';
import { Rows, group } from '../shared/readings/parseReadings.ts';
import { lookupSeries, type SeriesLookup } from '../meter/ingest.ts';

export interface Reject {
  line: number;
  reason: string;
  /** The original record, as it was in the file (without its line break). */
  record: string;
}

interface BatchSeries {
  meterId: string;
  registerId: string;
  /** Known once resolved (from the cache, or at seal time). */
  lookup: SeriesLookup | undefined;
  /** Lines of this batch's rows while the pair is not resolved yet: they become rejects if it fails. */
  pending: { line: number; record: string }[];
}

/** Pairs resolved so far, across batches. Bounded: a file naming millions of different unknown
 * pairs must not grow it without limit, so it starts over when full. */
export class SeriesCache {
  private readonly map = new Map<string, SeriesLookup>();
  constructor(private readonly limit = 200_000) {}

  get(key: string): SeriesLookup | undefined {
    return this.map.get(key);
  }

  set(key: string, lookup: SeriesLookup): void {
    if (this.map.size >= this.limit) this.map.clear();
    this.map.set(key, lookup);
  }
}

export interface SealedBatch {
  /** Undefined when no row of the batch is valid. */
  write: ReadingRows | undefined;
  /** Valid rows that were replaced by a later row with the same register and timestamp in this batch. */
  duplicates: number;
  /** Sorted by line. */
  rejects: Reject[];
  /** Last physical line the batch covers. */
  lastLine: number;
}

export class ImportBatch {
  private readonly rows: Rows;
  private readonly series: BatchSeries[] = [];
  private readonly seriesIndex = new Map<string, number>();
  private rejects: Reject[] = [];
  lastLine = 0;

  constructor(
    private readonly cache: SeriesCache,
    capacity: number,
  ) {
    this.rows = new Rows(capacity);
  }

  /** Rows and rejects held: the batch is full when this reaches the batch size. */
  get size(): number {
    return this.rows.size + this.rejects.length;
  }

  /** Rejects held (not yet in the reject file). */
  get rejectCount(): number {
    return this.rejects.length;
  }

  reject(line: number, reason: string, record: string): void {
    this.rejects.push({ line, reason, record });
    this.lastLine = line;
  }

  /** The batch-local series of a pair, or a reason when the pair is known to be unusable. */
  seriesOf(meterId: string, registerId: string): number | string {
    const key = `${meterId}\u0000${registerId}`;
    let index = this.seriesIndex.get(key);
    if (index === undefined) {
      const lookup = this.cache.get(key);
      if (lookup && !('registerId' in lookup)) return lookup.message;
      index = this.series.length;
      this.series.push({ meterId, registerId, lookup, pending: [] });
      this.seriesIndex.set(key, index);
    }
    return index;
  }

  /** Whether rows of this series must bring their original record (the pair is not resolved yet). */
  needsRecord(series: number): boolean {
    return this.series[series]!.lookup === undefined;
  }

  /** A valid row; `record` when `needsRecord(series)`. */
  add(series: number, line: number, timestamp: number, value: number, resolution: number, record: string | undefined): void {
    if (record !== undefined) this.series[series]!.pending.push({ line, record });
    this.rows.push(series, timestamp, value, resolution);
    this.lastLine = line;
  }

  /** Resolves new pairs, moves the rows of unusable ones to the rejects and builds the write. */
  async seal(db: Queryable): Promise<SealedBatch> {
    const unresolved = this.series.filter((s) => s.lookup === undefined);
    if (unresolved.length > 0) {
      const lookups = await lookupSeries(db, unresolved, null, true);
      unresolved.forEach((s, k) => {
        s.lookup = lookups[k]!;
        this.cache.set(`${s.meterId}\u0000${s.registerId}`, s.lookup);
        if (!('registerId' in s.lookup)) for (const p of s.pending) this.rejects.push({ line: p.line, reason: s.lookup.message, record: p.record });
      });
    }
    const rejects = this.rejects.sort((a, b) => a.line - b.line);
    // Keep the rows of usable series, renumbering the series densely.
    const registerIds: number[] = [];
    const newIndex = new Int32Array(this.series.length).fill(-1);
    this.series.forEach((s, k) => {
      if (s.lookup && 'registerId' in s.lookup) {
        newIndex[k] = registerIds.length;
        registerIds.push(s.lookup.registerId);
      }
    });
    const rows = this.rows;
    let kept = 0;
    for (let i = 0; i < rows.size; i += 1) {
      const s = newIndex[rows.series[i]!]!;
      if (s === -1) continue;
      rows.series[kept] = s;
      rows.timestamps[kept] = rows.timestamps[i]!;
      rows.values[kept] = rows.values[i]!;
      rows.resolutions[kept] = rows.resolutions[i]!;
      kept += 1;
    }
    rows.size = kept;
    const sealed: SealedBatch = { write: undefined, duplicates: 0, rejects, lastLine: this.lastLine };
    if (kept > 0) {
      const grouped = group(rows, registerIds.length);
      sealed.duplicates = kept - grouped.kept;
      sealed.write = { registerIds, offsets: grouped.offsets, timestamps: grouped.timestamps, values: grouped.values, resolutions: grouped.resolutions };
    }
    return sealed;
  }

  /** Empties the batch for reuse (the typed arrays stay allocated). */
  clear(): void {
    this.rows.size = 0;
    this.series.length = 0;
    this.seriesIndex.clear();
    this.rejects = [];
    this.lastLine = 0;
  }
}
