// Converting stored register-day blocks of the first format (`reading_blocks_v1`, migrations
// 004–009) to the compact encoding (`reading_blocks`, migration 010), at start and before the
// store serves: batch after batch of blocks in (register, day) order, each batch one transaction
// that deletes them from the old table and inserts them converted — readings, recordedAt and
// history unchanged, daily pieces computed for each register's zone — so the conversion resumes
// wherever a stop or crash left it, and a block is always in exactly one of the two tables.
// Progress is logged per batch; the old table is dropped when empty (on a new installation at
// once). Processes starting together serialize on runConversion's advisory lock.
import type { Logger } from 'pino';
import type { Pool, PoolClient } from '../../database.ts';
import { copyIn } from '../../copyIn.ts';
import { BLOCK_COPY_COLUMNS, encodeData, encodeDays, writeBlockRow } from '../../../shared/readings/blocks.ts';
import { decodeDataV1 } from '../../../shared/readings/blocksV1.ts';
import { ByteWriter, decimalDigits } from '../../../shared/readings/codec.ts';
import { COPY_HEADER, COPY_TRAILER } from '../../../shared/readings/pgCopy.ts';
import { dayCuts, lockedZones } from './blockDays.ts';
import { runConversion } from './convertRows.ts';

export interface ConvertBlocksOptions {
  /** Blocks per transaction. */
  blocksPerBatch?: number;
  /** Stop after this many batches (tests: a conversion cut short). */
  maxBatches?: number;
}

const MOVE_SQL = `DELETE FROM reading_blocks_v1 b
  USING (SELECT register_id, day FROM reading_blocks_v1 ORDER BY register_id, day LIMIT $1 FOR UPDATE) k
  WHERE b.register_id = k.register_id AND b.day = k.day
  RETURNING b.register_id AS id, b.day, b.data, b.history, b.history_min`;

async function batch(client: PoolClient, blocks: number): Promise<number> {
  const { rows } = await client.query<{ id: number; day: number; data: Buffer; history: Buffer | null; history_min: number | null }>(MOVE_SQL, [blocks]);
  if (rows.length === 0) return 0;
  rows.sort((a, b) => a.id - b.id || a.day - b.day);
  const cuts = await dayCuts(client, await lockedZones(client, [...new Set(rows.map((r) => r.id))]), Math.min(...rows.map((r) => r.day)), Math.max(...rows.map((r) => r.day)));
  const w = new ByteWriter(COPY_HEADER.length + 200 * rows.length);
  w.bytes.set(COPY_HEADER, 0);
  w.at = COPY_HEADER.length;
  const scratch = new ByteWriter(4096);
  for (const row of rows) {
    const r = decodeDataV1(row.data, row.day);
    let latest = -Infinity;
    for (const u of r.updatedAt) if (u > latest) latest = u;
    scratch.at = 0;
    const data = encodeData(row.day, r.times, r.values, r.resolutions, r.updatedAt, 0, r.times.length, scratch);
    const c = cuts(row.id, row.day);
    const days = c ? encodeDays(row.day, r, decimalDigits(r.values, 0, r.values.length), c, latest) : Uint8Array.of(0);
    writeBlockRow(w, latest, row.history_min, row.id, row.day, r.times.length, data, days, row.history);
  }
  w.ensure(COPY_TRAILER.length);
  w.bytes.set(COPY_TRAILER, w.at);
  w.at += COPY_TRAILER.length;
  await copyIn(client, `COPY reading_blocks ${BLOCK_COPY_COLUMNS} FROM STDIN (FORMAT binary)`, [w.bytes.subarray(0, w.at)], 1 << 20);
  return rows.length;
}

/** Converts what is left of the first-format blocks; true when done (the old table is gone). */
export async function convertBlocks(pool: Pool, log: Pick<Logger, 'info'>, options: ConvertBlocksOptions = {}): Promise<boolean> {
  return runConversion(pool, log, options, {
    table: 'reading_blocks_v1',
    unit: 'blocks',
    messages: ['converting stored reading blocks to the compact encoding', 'reading block conversion progress', 'reading blocks converted to the compact encoding'],
    batch: (client) => batch(client, options.blocksPerBatch ?? 5000),
  });
}
