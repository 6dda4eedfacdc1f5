// Worker task: buckets of registers aggregated from their blocks' readings (aggregate.ts) when
// there are many: every reading is decoded and summed, work that stays off the event loop. Answers come back as transferred typed arrays.
import { transfer } from '../transfer.ts';
import { aggregateBlocks, type BucketColumns } from '../../src/shared/readings/aggregate.ts';
import type { AggregateTask } from '../../src/shared/readings/contract.ts';

export type { AggregateTask } from '../../src/shared/readings/contract.ts';

export default function aggregateTask(task: AggregateTask): BucketColumns[] {
  const out = task.registers.map((r) => aggregateBlocks(r.blocks, r.summed, r.bucketing, task.start, task.end));
  return transfer(
    out,
    out.flatMap((c) => [c.timestamps.buffer, c.values.buffer, c.resolutions.buffer, c.updatedAt.buffer]),
  );
}
