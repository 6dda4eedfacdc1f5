// The PostgreSQL write of a batch of register-day blocks (src/shared/readings/blocks.ts), in one
// transaction. The blocks the batch touches that are stored already are locked (FOR UPDATE),
// merged here with the batch's readings (an incoming reading replaces the stored one at its time,
// and only the incoming readings get the new updatedAt), deleted and written again with the
// fresh ones, all by one binary COPY: a correction rewrites only the blocks it touches, and the
// rollups travel in the same rows, so no committed batch is ever visible without them. Two
// writers creating the same block at once: the later one fails on the primary key (23505) and
// runs again, now merging into the block the other committed; deadlocks between writers that
// lock shared blocks in different order re-run as well (withTransaction). The daily rollups of
// each block (`days`, local midnights of its register's zone: blockDays.ts) are filled in here,
// the zones read FOR SHARE first so that a zone change never interleaves with the write.
import { copyIn } from '../../copyIn.ts';
import { withTransaction, type Pool, type PoolClient } from '../../database.ts';
import { sqlState } from '../../retry.ts';
import {
  BLOCK_COPY_COLUMNS,
  decodeData,
  encodeBlockRow,
  encodeBlocks,
  fillBlockRegisterIds,
  fillRowDays,
  mergeReadings,
  rowData,
  type BlockReadings,
  type EncodedBlocks,
} from '../../../shared/readings/blocks.ts';
import { COPY_HEADER, COPY_TRAILER } from '../../../shared/readings/pgCopy.ts';
import type { ReadingRows } from '../types.ts';
import { dayCuts, lockedZones, type DayCuts } from './blockDays.ts';

const COPY_SQL = `COPY reading_blocks ${BLOCK_COPY_COLUMNS} FROM STDIN (FORMAT binary)`;
const COPY_CHUNK = 1 << 20;
/** Stored blocks among the batch's (register, day) keys, locked until the transaction ends; one
 * result row per register (day, length, data per block), as blockRead.ts reads them. */
const STORED_SQL = `WITH locked AS (
    SELECT b.register_id, b.day, b.data FROM reading_blocks b
    JOIN unnest($1::int[], $2::int[]) AS k(id, day) ON b.register_id = k.id AND b.day = k.day
    ORDER BY b.register_id, b.day FOR UPDATE OF b)
  SELECT register_id AS id, string_agg(int4send(day) || int4send(length(data)) || data, ''::bytea ORDER BY day) AS blob FROM locked GROUP BY register_id`;
const DELETE_SQL = 'DELETE FROM reading_blocks b USING unnest($1::int[], $2::int[]) AS k(id, day) WHERE b.register_id = k.id AND b.day = k.day';
const ATTEMPTS = 5;

/** One binary COPY of the blocks' rows. */
const writeCopy = (client: PoolClient, pieces: readonly Uint8Array[]) => copyIn(client, COPY_SQL, pieces, COPY_CHUNK);

const key = (id: number, day: number) => `${id}:${day}`;

interface StoredData {
  id: number;
  day: number;
  data: Uint8Array;
}

function storedBlocks(rows: readonly { id: number; blob: Buffer }[]): StoredData[] {
  const out: StoredData[] = [];
  for (const { id, blob } of rows)
    for (let at = 0; at < blob.length; ) {
      const day = blob.readInt32BE(at);
      const length = blob.readInt32BE(at + 4);
      out.push({ id, day, data: blob.subarray(at + 8, at + 8 + length) });
      at += 8 + length;
    }
  return out;
}

/** Whether every time of `stored` is also in `incoming` (both ascending): then the incoming
 * block replaces the stored one as it is (a re-sent day), nothing to merge or encode again. */
function covers(incoming: Float64Array, stored: Float64Array): boolean {
  let j = 0;
  for (let i = 0; i < stored.length; i += 1) {
    while (j < incoming.length && incoming[j]! < stored[i]!) j += 1;
    if (j >= incoming.length || incoming[j] !== stored[i]) return false;
  }
  return true;
}

/** The COPY pieces for the batch with `stored` blocks merged in (and blocks of one register
 * named by two series of the batch merged in batch order). */
function mergedPieces(blocks: EncodedBlocks, ids: Int32Array, days: Int32Array, stored: readonly StoredData[], cuts: DayCuts): Uint8Array[] {
  const merged = new Map<string, BlockReadings>();
  for (const s of stored) merged.set(key(s.id, s.day), decodeData(s.data, s.day));
  const seen = new Map<string, number>();
  for (let k = 0; k < ids.length; k += 1) seen.set(key(ids[k]!, days[k]!), (seen.get(key(ids[k]!, days[k]!)) ?? 0) + 1);
  for (let k = 0; k < ids.length; k += 1) {
    const kk = key(ids[k]!, days[k]!);
    if (!merged.has(kk) && seen.get(kk) === 1) continue;
    const incoming = decodeData(rowData(blocks, k), days[k]!);
    const before = merged.get(kk);
    if (before && seen.get(kk) === 1 && covers(incoming.times, before.times)) merged.delete(kk);
    else merged.set(kk, before ? mergeReadings(before, incoming) : incoming);
  }
  const pieces: Uint8Array[] = [COPY_HEADER];
  const written = new Set<string>();
  for (let k = 0; k < ids.length; k += 1) {
    const kk = key(ids[k]!, days[k]!);
    const m = merged.get(kk);
    if (!m) pieces.push(blocks.copy.subarray(blocks.rowStarts[k]!, blocks.rowStarts[k + 1]!));
    else if (!written.has(kk)) {
      written.add(kk);
      const row = encodeBlockRow(ids[k]!, days[k]!, m);
      const c = cuts(ids[k]!, days[k]!);
      if (c) fillRowDays(row, 0, c);
      pieces.push(row);
    }
  }
  pieces.push(COPY_TRAILER);
  return pieces;
}

/** Writes encoded blocks (register ids still 0) of series with these register ids, atomically. */
export async function writeBlocks(pool: Pool, blocks: EncodedBlocks, registerIds: ArrayLike<number>): Promise<void> {
  const count = blocks.blockSeries.length;
  if (count === 0) return;
  fillBlockRegisterIds(blocks, registerIds);
  const ids = new Int32Array(count);
  for (let k = 0; k < count; k += 1) ids[k] = registerIds[blocks.blockSeries[k]!]!;
  const days = blocks.blockDays;
  const distinct = new Set<string>();
  for (let k = 0; k < count; k += 1) distinct.add(key(ids[k]!, days[k]!));
  const duplicates = distinct.size < count;
  const idList = Array.from(ids);
  const dayList = Array.from(days);
  let firstDay = Infinity;
  let lastDay = -Infinity;
  for (const day of dayList) {
    if (day < firstDay) firstDay = day;
    if (day > lastDay) lastDay = day;
  }
  for (let attempt = 1; ; attempt += 1) {
    try {
      await withTransaction(pool, async (client) => {
        const cuts = await dayCuts(client, await lockedZones(client, [...new Set(idList)]), firstDay, lastDay);
        for (let k = 0; k < count; k += 1) {
          const c = cuts(ids[k]!, days[k]!);
          if (c) fillRowDays(blocks.copy, blocks.rowStarts[k]!, c);
          // ~1 ms of work per 1,000 blocks: let other requests in between (a 1M POST is ~10,000).
          if (k % 1000 === 999) await new Promise((resolve) => setImmediate(resolve));
        }
        const stored = storedBlocks((await client.query<{ id: number; blob: Buffer }>(STORED_SQL, [idList, dayList])).rows);
        if (stored.length === 0 && !duplicates) return writeCopy(client, [blocks.copy]);
        if (stored.length > 0) await client.query(DELETE_SQL, [stored.map((s) => s.id), stored.map((s) => s.day)]);
        await writeCopy(client, mergedPieces(blocks, ids, days, stored, cuts));
      });
      return;
    } catch (err) {
      if (sqlState(err) !== '23505' || attempt >= ATTEMPTS) throw err;
    }
  }
}

/** Rows already in columns (CSV import, reference readings): encoded here, written the same way. */
export async function writeRows(pool: Pool, rows: ReadingRows, updatedAtMs: number): Promise<void> {
  if (rows.timestamps.length === 0) return;
  await writeBlocks(pool, encodeBlocks(rows.offsets, rows.timestamps, rows.values, rows.resolutions, updatedAtMs), rows.registerIds);
}
