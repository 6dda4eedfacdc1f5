// Worker task for POST /api/readings: parse and validate the body, group and sort it, and encode
// it in the wire format the time-series backend asked for — all off the event loop. Input and
// output are plain data; typed arrays travel by transfer, not copy.
//
// Streaming (`stream` set, PostgreSQL store, large bodies): every `chunkRows` rows, at the end
// of a meter and while nothing has been refused, the rows parsed since the last chunk are grouped,
// sorted, de-duplicated and encoded as COPY rows and posted on the port, so the main thread can
// COPY them while parsing goes on. The final result still holds every row (columns only), for the
// main thread to fall back on whenever streaming cannot finish the job.
import { own, transfer } from '../transfer.ts';
import { encodeBlocks } from '../../src/shared/readings/blocks.ts';
import { COPY_HEADER, encodeCopy } from '../../src/shared/readings/pgCopy.ts';
import type { ParseResult, ParseTask, ReadingChunk } from '../../src/shared/readings/contract.ts';
import { group, monthsOf, parseReadings, type ParsedSeries, type Rows } from '../../src/shared/readings/parseReadings.ts';

export type { ParseResult, ParseTask, ReadingChunk, ReadingEncoding } from '../../src/shared/readings/contract.ts';

function chunkEmitter(task: ParseTask): { hook: (rows: Rows, series: readonly ParsedSeries[], clean: boolean) => void; flush: (rows: Rows, series: readonly ParsedSeries[]) => void; sent: () => number } {
  let from = 0;
  let sentSeries = 0;
  let index = 0;
  const chunkRows = task.chunkRows ?? 100_000;
  const emit = (rows: Rows, series: readonly ParsedSeries[]) => {
    const n = rows.size - from;
    if (n <= 0) return;
    const part = { size: n, timestamps: rows.timestamps.subarray(from, rows.size), values: rows.values.subarray(from, rows.size), resolutions: rows.resolutions.subarray(from, rows.size), series: rows.series.subarray(from, rows.size) } as Rows;
    const grouped = group(part, series.length);
    const seriesIndexes: number[] = [];
    const offsets: number[] = [];
    const firsts: number[] = [];
    const lasts: number[] = [];
    for (let s = 0; s < series.length; s += 1) {
      const a = grouped.offsets[s]!;
      const b = grouped.offsets[s + 1]!;
      if (b === a) continue;
      seriesIndexes.push(s);
      offsets.push(a);
      firsts.push(grouped.timestamps[a]!);
      lasts.push(grouped.timestamps[b - 1]!);
    }
    offsets.push(grouped.kept);
    const encoded = encodeCopy(grouped.timestamps, grouped.values, grouped.resolutions, task.updatedAtMs);
    const copy = new Uint8Array(encoded.subarray(COPY_HEADER.length, encoded.length - 2));
    const chunk: ReadingChunk = {
      index: index++,
      seriesIndexes,
      offsets: Int32Array.from(offsets),
      newSeries: series.slice(sentSeries),
      firsts: Float64Array.from(firsts),
      lasts: Float64Array.from(lasts),
      months: monthsOf(grouped.timestamps),
      copy,
    };
    sentSeries = series.length;
    from = rows.size;
    task.stream!.postMessage(chunk, [copy.buffer as ArrayBuffer, chunk.offsets.buffer as ArrayBuffer]);
  };
  return {
    hook: (rows, series, clean) => {
      if (clean && rows.size - from >= chunkRows) emit(rows, series);
    },
    flush: emit,
    sent: () => index,
  };
}

export default function parseReadingsTask(task: ParseTask): ParseResult {
  const emitter = task.stream ? chunkEmitter(task) : undefined;
  let lastRows: Rows | undefined;
  let lastSeries: readonly ParsedSeries[] = [];
  const outcome = parseReadings(
    task.body,
    emitter &&
      ((rows, series, clean) => {
        lastRows = rows;
        lastSeries = series;
        emitter.hook(rows, series, clean);
      }),
  );
  if (emitter) {
    if (outcome.ok && lastRows) emitter.flush(lastRows, lastSeries);
    task.stream!.close();
  }
  if (!outcome.ok) return { ...outcome, chunks: emitter?.sent() ?? 0 };
  const { batch } = outcome;
  const timestamps = own(batch.timestamps);
  const values = own(batch.values);
  const resolutions = own(batch.resolutions);
  const copy = task.encoding === 'pgCopy' ? new Uint8Array(encodeCopy(timestamps, values, resolutions, task.updatedAtMs)) : undefined;
  const blocks = task.encoding === 'pgBlocks' ? encodeBlocks(batch.offsets, timestamps, values, resolutions, task.updatedAtMs) : undefined;
  const result: ParseResult = { ok: true, series: batch.series, offsets: batch.offsets, timestamps, values, resolutions, months: batch.months, copy, blocks, chunks: emitter?.sent() ?? 0 };
  const blockBuffers = blocks ? [blocks.data.buffer, blocks.dataStarts.buffer, blocks.counts.buffer, blocks.blockSeries.buffer, blocks.blockDays.buffer, blocks.hourCounts.buffer, blocks.hourSums.buffer, blocks.sumDigits.buffer] : [];
  return transfer(result, [batch.offsets.buffer, timestamps.buffer, values.buffer, resolutions.buffer, ...(copy ? [copy.buffer] : []), ...blockBuffers]);
}
