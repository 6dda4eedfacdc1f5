// Worker task for a large POST /api/readings body parsed on several threads (the QuestDB store):
// one slice of the body, cut at meter boundaries (parseReadingsSlice), parsed, validated and
// grouped; the columns go back transferred. See src/store/timeseries/parseBody.ts.
import { own, transfer } from '../transfer.ts';
import type { SliceResult, SliceTask } from '../../src/shared/readings/contract.ts';
import { parseReadingsSlice } from '../../src/shared/readings/parseReadings.ts';

export default function sliceTask(task: SliceTask): SliceResult {
  const outcome = parseReadingsSlice(task.body.subarray(0, task.end), task.first, task.last, task.columns);
  const body = task.giveBack ? task.body : undefined;
  const buffers = body ? [body.buffer] : [];
  if (!outcome.ok) return transfer({ ok: false, body }, buffers);
  const { batch } = outcome;
  const result: SliceResult = { ok: true, meters: outcome.meters, ...batch, timestamps: own(batch.timestamps), values: own(batch.values), resolutions: own(batch.resolutions), body };
  return transfer(result, [...buffers, batch.offsets.buffer, result.timestamps.buffer, result.values.buffer, result.resolutions.buffer]);
}
