// The daily pieces of stored register-day blocks, read as the store reads them (blocks.ts
// readDays): how many (k; 0 = not computed) and where the second starts (ms into its UTC day).
import { readDays } from '../../src/shared/readings/blocks.ts';
import type { Queryable } from '../../src/store/database.ts';

export interface BlockPieces {
  id: number;
  day: number;
  k: number;
  /** The second piece's start, ms since the UTC day began (0 with one piece). */
  cut: number;
}

export async function blockPieces(db: Queryable, registerIds: readonly number[], firstDay = -1e9, lastDay = 1e9): Promise<BlockPieces[]> {
  const { rows } = await db.query<{ id: number; day: number; days: Buffer; updated_max: number }>(
    'SELECT register_id AS id, day, days, updated_max FROM reading_blocks WHERE register_id = ANY($1::int[]) AND day BETWEEN $2 AND $3 ORDER BY register_id, day',
    [registerIds, firstDay, lastDay],
  );
  return rows.map((r) => {
    const p = readDays(r.days, r.day, r.updated_max);
    return { id: r.id, day: r.day, k: p.k, cut: p.k > 1 ? p.starts[1]! - r.day * 86_400_000 : 0 };
  });
}
