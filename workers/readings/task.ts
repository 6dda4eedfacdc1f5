// Worker task for POST /api/readings: parse and validate the body, group and sort it, and
// (for the PostgreSQL store) encode the binary COPY payload — all off the event loop.
// Input and output are plain data; typed arrays travel by transfer, not copy.
import { transfer } from '../transfer.ts';
import { encodeCopy } from './pgCopy.ts';
import { parseReadings, type FieldError, type ParsedSeries } from './parseReadings.ts';

export interface ParseTask {
  body: Uint8Array;
  encodePgCopy: boolean;
  updatedAtMs: number;
}

export type ParseResult =
  | {
      ok: true;
      series: ParsedSeries[];
      offsets: Int32Array;
      timestamps: Float64Array;
      values: Float64Array;
      resolutions: Int32Array;
      months: number[];
      copy: Uint8Array | undefined;
    }
  | { ok: false; syntax: boolean; errors: FieldError[] };

export default function parseReadingsTask(task: ParseTask): ParseResult {
  const outcome = parseReadings(task.body);
  if (!outcome.ok) return outcome;
  const { batch } = outcome;
  // Typed arrays that are views into a larger buffer would transfer the whole buffer: copy them
  // to exact-size arrays first (cheap next to parsing).
  const timestamps = batch.timestamps.slice();
  const values = batch.values.slice();
  const resolutions = batch.resolutions.slice();
  const copy = task.encodePgCopy ? new Uint8Array(encodeCopy(timestamps, values, resolutions, task.updatedAtMs)) : undefined;
  const result: ParseResult = { ok: true, series: batch.series, offsets: batch.offsets, timestamps, values, resolutions, months: batch.months, copy };
  return transfer(result, [batch.offsets.buffer, timestamps.buffer, values.buffer, resolutions.buffer, ...(copy ? [copy.buffer] : [])]);
}
