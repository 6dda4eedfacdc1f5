// The CSV import loop: chunks → records → validated rows → fixed-size batches → the time-series
// store. Memory stays constant whatever the file size: one input chunk, one batch being filled,
// one batch being written (the next write starts only when the previous one is committed, which
// also keeps "the last row wins" across batches). Parsing the next batch overlaps the database
// work of the previous one.
//
// Unlike POST /api/readings, which is all-or-nothing per request, the import validates per row:
// a bad row goes to the reject file and the valid rows around it are stored.
import type { Queryable } from '../../store/database.ts';
import type { TimeSeriesStore } from '../../store/timeseries/types.ts';
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

export async function runImport(o: ImportOptions, stats: ImportStats): Promise<void> {
  const splitter = new RecordSplitter();
  const fields = new Fields(COLUMNS.length);
  const reading: Reading = { timestamp: 0, value: 0, resolution: 0 };
  const batch = new ImportBatch(new SeriesCache(), o.batchRows);
  let columns: ColumnIndex | undefined;
  // The previous row's ids and series: consecutive rows of one register skip the lookup.
  let prevMeter = Buffer.alloc(0);
  let prevRegister = Buffer.alloc(0);
  let prevSeries: number | string = -1;
  let writing: Promise<void> | undefined;
  let failure: unknown;

  const finishWrite = async () => {
    if (writing) await writing;
    writing = undefined;
    if (failure) throw failure;
  };

  const flush = async () => {
    const sealed = await batch.seal(o.db, o.store.acceptsPgCopy);
    batch.clear();
    prevSeries = -1;
    await o.rejects.append(sealed.rejects);
    stats.rejected += sealed.rejects.length;
    await finishWrite();
    if (!sealed.write) {
      stats.committedThroughLine = sealed.lastLine || stats.committedThroughLine;
      return;
    }
    const rows = sealed.write.timestamps.length;
    writing = o.store.write(sealed.write).then(
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
      const problem = fields.split(buf, start, end, splitter.quoted);
      const names = Array.from({ length: Math.min(fields.count, fields.max) }, (_, k) => fields.text(buf, k));
      const header = problem ?? (fields.count > fields.max ? readHeader([...names, '…']) : readHeader(names));
      if (typeof header === 'string') throw new ImportError(`line ${line}: ${header}`);
      columns = header;
      return;
    }
    stats.rows += 1;
    const text = () => buf.toString('utf8', start, end);
    const problem = fields.split(buf, start, end, splitter.quoted);
    if (problem) return batch.reject(line, problem, text());
    if (fields.count !== COLUMNS.length) return batch.reject(line, `expected ${COLUMNS.length} fields, got ${fields.count > fields.max ? 'more' : fields.count}`, text());
    const invalid = readReading(buf, fields, columns, reading);
    if (invalid) return batch.reject(line, invalid, text());
    const m = columns.meterId;
    const r = columns.registerId;
    if (prevSeries === -1 || !fields.sameBytes(buf, m, prevMeter) || !fields.sameBytes(buf, r, prevRegister)) {
      prevSeries = batch.seriesOf(fields.text(buf, m), fields.text(buf, r));
      prevMeter = Buffer.from(buf.subarray(fields.starts[m]!, fields.ends[m]!));
      prevRegister = Buffer.from(buf.subarray(fields.starts[r]!, fields.ends[r]!));
    }
    if (typeof prevSeries === 'string') return batch.reject(line, prevSeries, text());
    batch.add(prevSeries, line, reading.timestamp, reading.value, reading.resolution, batch.needsRecord(prevSeries) ? text() : undefined);
  };

  const drain = async () => {
    while (splitter.next()) {
      record();
      if (batch.size >= o.batchRows) await flush();
    }
  };

  try {
    for await (const chunk of o.input.chunks) {
      splitter.feed(chunk as Buffer);
      await drain();
      o.progress?.update({ rows: stats.rows, rejected: stats.rejected + batch.rejectCount, bytesRead: o.input.bytesRead(), totalBytes: o.input.totalBytes });
      if (o.signal?.aborted) throw new ImportError('interrupted');
    }
    splitter.finish();
    await drain();
    if (!columns) throw new ImportError(`${o.input.path} is empty: the header line ${COLUMNS.join(',')} is missing`);
    await flush();
    await finishWrite();
  } catch (err) {
    // Whatever stopped the import, let the write in flight finish so the report is exact.
    await writing?.catch(() => undefined);
    if (err instanceof CsvFormatError) throw new ImportError(err.message);
    throw err;
  } finally {
    o.input.close();
  }
}
