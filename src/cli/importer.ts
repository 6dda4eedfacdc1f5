// The CSV import loop: chunks → records → validated rows → fixed-size batches → the time-series
// store. Memory stays constant whatever the file size: one input chunk, one batch being filled,
// one batch being written (the next write starts only when the previous one is committed, which
// also keeps "the last row wins" across batches). Parsing the next batch overlaps the database
// work of the previous one.
//
// Unlike POST /api/readings, which is all-or-nothing per request, the import validates per row:
// a bad row goes to the reject file and the valid rows around it are stored.
import type { Queryable } from '../store/database.ts';
import type { TimeSeriesStore } from '../store/timeseries/types.ts';
import { CsvFormatError, Fields, RecordSplitter } from './csv.ts';
import type { CsvInput } from './csvInput.ts';
import { ImportBatch, SeriesCache } from './importBatch.ts';
import type { Progress } from './progress.ts';
import { COLUMNS, readHeader, readReading, type ColumnIndex, type Reading } from './readingRow.ts';
import type { RejectFile } from './rejectFile.ts';

export interface ImportOptions {
  input: CsvInput;
  db: Queryable;
  store: TimeSeriesStore;
  rejects: RejectFile;
  batchRows: number;
  progress?: Progress;
  signal?: AbortSignal;
}

export interface ImportStats {
  /** Data records read (header and empty lines not counted). */
  rows: number;
  /** Rows written to the store (after duplicates within a batch collapsed). */
  stored: number;
  /** Rows replaced by a later row of the same register and timestamp in the same batch. */
  duplicates: number;
  rejected: number;
  /** Every row up to this line is stored or rejected (committed batches). */
  committedThroughLine: number;
}

/** The import cannot go on (the file, its header, the database); batches committed before stay stored. */
export class ImportError extends Error {}

/** The columns the header record (the splitter's current record) names, or ImportError. */
export function readHeaderRecord(splitter: RecordSplitter, fields: Fields): ColumnIndex {
  const { buf, start, end, line } = splitter;
  const problem = fields.split(buf, start, end, splitter.quoted);
  const names = Array.from({ length: Math.min(fields.count, fields.max) }, (_, k) => fields.text(buf, k));
  const result = problem ?? (fields.count > fields.max ? readHeader([...names, '…']) : readHeader(names));
  if (typeof result === 'string') throw new ImportError(`line ${line}: ${result}`);
  return result;
}

/** Both imports' reading loop (this file's and remoteImport.ts's): every chunk of the input goes
 * through the splitter and `drain` takes the complete records, with a progress update after each
 * chunk. ImportError when interrupted, when the file has no header (`sawHeader`) or for a record
 * the splitter refuses. `pendingRejects`: rejected rows not yet counted in `stats`. */
export async function feedRecords(
  o: { input: CsvInput; progress?: Progress; signal?: AbortSignal },
  splitter: RecordSplitter,
  stats: ImportStats,
  drain: () => Promise<void>,
  pendingRejects: () => number,
  sawHeader: () => boolean,
): Promise<void> {
  try {
    for await (const chunk of o.input.chunks) {
      splitter.feed(chunk as Buffer);
      await drain();
      o.progress?.update({ rows: stats.rows, rejected: stats.rejected + pendingRejects(), bytesRead: o.input.bytesRead(), totalBytes: o.input.totalBytes });
      if (o.signal?.aborted) throw new ImportError('interrupted');
    }
    splitter.finish();
    await drain();
  } catch (err) {
    if (err instanceof CsvFormatError) throw new ImportError(err.message);
    throw err;
  }
  if (!sawHeader()) throw new ImportError(`${o.input.path} is empty: the header line ${COLUMNS.join(',')} is missing`);
}

export async function runImport(o: ImportOptions, stats: ImportStats): Promise<void> {
  const splitter = new RecordSplitter();
  const fields = new Fields(COLUMNS.length);
  const reading: Reading = { timestamp: 0, value: 0, resolution: 0 };
  const batch = new ImportBatch(new SeriesCache(), o.batchRows);
  let columns: ColumnIndex | undefined;
  // Series of this batch by the raw bytes of the two id fields of unquoted records: one string
  // slice and one map lookup per row, no decoding (records with quotes take the decoded path).
  let rawSeries = new Map<string, number | string>();
  let idsAdjacent = false;
  let writing: Promise<void> | undefined;
  let failure: unknown;

  const finishWrite = async () => {
    if (writing) await writing;
    writing = undefined;
    if (failure) throw failure;
  };

  const flush = async () => {
    const sealed = await batch.seal(o.db);
    batch.clear();
    rawSeries = new Map();
    await o.rejects.append(sealed.rejects);
    stats.rejected += sealed.rejects.length;
    await finishWrite();
    if (!sealed.write) {
      stats.committedThroughLine = sealed.lastLine || stats.committedThroughLine;
      return;
    }
    const rows = sealed.write.timestamps.length;
    writing = o.store.write({ rows: sealed.write }).then(
      () => {
        stats.stored += rows;
        stats.duplicates += sealed.duplicates;
        stats.committedThroughLine = sealed.lastLine;
      },
      (err: unknown) => {
        failure = err;
      },
    );
  };

  const record = (): void => {
    const { buf, start, end, line } = splitter;
    if (start === end) return; // an empty line
    if (!columns) {
      columns = readHeaderRecord(splitter, fields);
      idsAdjacent = columns.registerId === columns.meterId + 1;
      return;
    }
    stats.rows += 1;
    const problem = fields.split(buf, start, end, splitter.quoted);
    if (problem) return batch.reject(line, problem, buf.toString('utf8', start, end));
    if (fields.count !== COLUMNS.length) {
      return batch.reject(line, `expected ${COLUMNS.length} fields, got ${fields.count > fields.max ? 'more' : fields.count}`, buf.toString('utf8', start, end));
    }
    const invalid = readReading(buf, fields, columns, reading);
    if (invalid) return batch.reject(line, invalid, buf.toString('utf8', start, end));
    const m = columns.meterId;
    const r = columns.registerId;
    let series: number | string | undefined;
    if (splitter.quoted) series = batch.seriesOf(fields.text(buf, m), fields.text(buf, r));
    else {
      // Unquoted fields hold no comma or newline, so "meter,register" (or "meter\nregister") is unambiguous.
      const raw = idsAdjacent ? buf.toString('latin1', fields.starts[m]!, fields.ends[r]!) : `${buf.toString('latin1', fields.starts[m]!, fields.ends[m]!)}\n${buf.toString('latin1', fields.starts[r]!, fields.ends[r]!)}`;
      series = rawSeries.get(raw);
      if (series === undefined) {
        series = batch.seriesOf(fields.text(buf, m), fields.text(buf, r));
        rawSeries.set(raw, series);
      }
    }
    if (typeof series === 'string') return batch.reject(line, series, buf.toString('utf8', start, end));
    batch.add(series, line, reading.timestamp, reading.value, reading.resolution, batch.needsRecord(series) ? buf.toString('utf8', start, end) : undefined);
  };

  const drain = async () => {
    while (splitter.next()) {
      record();
      if (batch.size >= o.batchRows) await flush();
    }
  };

  try {
    await feedRecords(o, splitter, stats, drain, () => batch.rejectCount, () => columns !== undefined);
    await flush();
    await finishWrite();
  } catch (err) {
    // Whatever stopped the import, let the write in flight finish so the report is exact.
    await writing?.catch(() => undefined);
    throw err;
  } finally {
    o.input.close();
  }
}
