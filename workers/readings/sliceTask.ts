// Worker task for a large POST /api/readings body parsed on several threads: one slice of the
// body, cut at meter boundaries (parseReadingsSlice), parsed, validated and grouped, and for the
// PostgreSQL store its register-day blocks encoded; the columns (and blocks) go back transferred.
// See src/store/timeseries/parseBody.ts.
import { own, transfer } from '../transfer.ts';
import type { SliceResult, SliceTask } from '../../src/shared/readings/contract.ts';
import { parseReadingsSlice } from '../../src/shared/readings/parseReadings.ts';
import { encodeBlocks } from '../../src/shared/readings/blocks.ts';

export default function sliceTask(task: SliceTask): SliceResult {
  const outcome = parseReadingsSlice(task.body.subarray(0, task.end), task.first, task.last, task.columns);
  const body = task.giveBack ? task.body : undefined;
  const buffers = body ? [body.buffer] : [];
  if (!outcome.ok) return transfer({ ok: false, body }, buffers);
  const { batch } = outcome;
  const blocks = task.encoding === 'pgBlocks' ? encodeBlocks(batch.offsets, batch.timestamps, batch.values, batch.resolutions, task.updatedAtMs ?? Date.now()) : undefined;
  const result: SliceResult = { ok: true, meters: outcome.meters, ...batch, timestamps: own(batch.timestamps), values: own(batch.values), resolutions: own(batch.resolutions), body, blocks };
  const blockBuffers = blocks ? [blocks.data.buffer, blocks.dataStarts.buffer, blocks.counts.buffer, blocks.blockSeries.buffer, blocks.blockDays.buffer, blocks.hourCounts.buffer, blocks.hourSums.buffer, blocks.sumDigits.buffer] : [];
  return transfer(result, [...buffers, batch.offsets.buffer, result.timestamps.buffer, result.values.buffer, result.resolutions.buffer, ...blockBuffers]);
}
