// A POST /api/readings body into PostgreSQL: workers parse, validate, group and sort it and
// encode its register-day blocks' readings (src/shared/readings/blocks.ts, codec.ts); the
// resolver names its registers; blockWrite.ts adds the daily pieces and stores the blocks in one
// transaction. Nothing is stored unless everything is valid and every series resolved.
import type { Pool } from '../../database.ts';
import type { WorkerPool } from '../../../workerPool.ts';
import { bodyBytes, parseBodySliced, refused } from '../parseBody.ts';
import type { BodyInput, WriteOutcome } from '../types.ts';
import { writeBlocks } from './blockWrite.ts';

export async function ingestBody(pool: Pool, workers: WorkerPool, input: BodyInput): Promise<WriteOutcome> {
  const updatedAtMs = input.updatedAtMs ?? Date.now();
  // A large body is parsed and encoded on several threads (parseBodySliced).
  const parsed = await parseBodySliced(workers, bodyBytes(input.body), updatedAtMs, undefined, 'pgBlocks');
  if (!parsed.ok) return refused(parsed);
  const readings = parsed.timestamps.length;
  // The columns are not needed beyond this: only the blocks are written.
  parsed.release?.();
  const registerIds = await input.resolve(parsed.series);
  if (parsed.blocks) await writeBlocks(pool, parsed.blocks, registerIds, updatedAtMs, input.updatedAtMs === undefined);
  return { ok: true, readings };
}
