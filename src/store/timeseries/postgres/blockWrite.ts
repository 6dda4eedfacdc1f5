// The PostgreSQL write of a batch of register-day blocks (src/shared/readings/blocks.ts), in one
// transaction. The blocks the batch touches that are stored already are locked (FOR UPDATE, in
// (register, day) order), merged here with the batch's readings (an incoming reading replaces the
// stored one at its time, and only the incoming readings get the new updatedAt) and updated in
// place; the batch's other blocks are inserted by one binary COPY. The rollups travel in the same
// rows, so no committed batch is ever visible without them.
//
// Concurrent writers of the same blocks: a writer waiting for a block another has locked gets the
// block as that one committed it (an UPDATE keeps the row, so PostgreSQL hands the waiter the new
// version; a delete and re-insert would make it skip the row). Two writers creating the same block
// at once: the later one's COPY fails on the primary key (23505) once the other commits; its
// attempt is rolled back to a savepoint (releasing what it locked and inserted there) and made
// again, now merging into the block the other committed. Every failed attempt means another
// writer committed a block this one had not seen, so the loop has no bound and cannot give up:
// every batch is stored. Locks are taken in one order within an
// attempt (blocks by (register, day), then inserts by (register, day)) and an attempt holds no
// insert while it waits for a lock, so writers do not deadlock among themselves.
//
// The daily rollups of each block (`days`, local midnights of its register's zone: blockDays.ts)
// are filled in here, the zones read FOR SHARE first so that a zone change never interleaves
// with the write.
import { copyIn } from '../../copyIn.ts';
import { withTransaction, type Pool, type PoolClient } from '../../database.ts';
import { sqlState } from '../../retry.ts';
import {
  BLOCK_COPY_COLUMNS,
  blockRowColumns,
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
/** Stored blocks written again in place (locked by STORED_SQL in this transaction). */
const UPDATE_SQL = `UPDATE reading_blocks b SET n = u.n, updated_max = u.updated_max, data = u.data, hours = u.hours, extents = u.extents, days = u.days
  FROM unnest($1::int[], $2::int[], $3::int[], $4::float8[], $5::bytea[], $6::bytea[], $7::bytea[], $8::bytea[]) AS u(id, day, n, updated_max, data, hours, extents, days)
  WHERE b.register_id = u.id AND b.day = u.day`;

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

/** Rows of stored blocks to update (UPDATE_SQL's columns). */
class Updates {
  readonly columns: [number[], number[], number[], number[], Buffer[], Buffer[], Buffer[], Buffer[]] = [[], [], [], [], [], [], [], []];

  add(id: number, day: number, row: Uint8Array, rowStart: number): void {
    const c = blockRowColumns(row, rowStart);
    const buffer = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    const [ids, days, ns, updated, data, hours, extents, daily] = this.columns;
    ids.push(id);
    days.push(day);
    ns.push(c.n);
    updated.push(c.updatedMax);
    data.push(buffer(c.data));
    hours.push(buffer(c.hours));
    extents.push(buffer(c.extents));
    daily.push(buffer(c.days));
  }

  get size(): number {
    return this.columns[0].length;
  }
}

/** The batch with `stored` blocks merged in (and blocks of one register named by two series of
 * the batch merged in batch order): stored blocks as updates, the others as COPY pieces. */
function mergedWrites(blocks: EncodedBlocks, ids: Int32Array, days: Int32Array, stored: readonly StoredData[], cuts: DayCuts): { updates: Updates; pieces: Uint8Array[] } {
  const merged = new Map<string, BlockReadings>();
  const isStored = new Set<string>();
  for (const s of stored) {
    merged.set(key(s.id, s.day), decodeData(s.data, s.day));
    isStored.add(key(s.id, s.day));
  }
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
  const updates = new Updates();
  const pieces: Uint8Array[] = [COPY_HEADER];
  const written = new Set<string>();
  for (let k = 0; k < ids.length; k += 1) {
    const kk = key(ids[k]!, days[k]!);
    const m = merged.get(kk);
    if (!m) {
      // The batch's own block: as the worker encoded it (a stored one it covers is replaced).
      if (isStored.has(kk)) updates.add(ids[k]!, days[k]!, blocks.copy, blocks.rowStarts[k]!);
      else pieces.push(blocks.copy.subarray(blocks.rowStarts[k]!, blocks.rowStarts[k + 1]!));
    } else if (!written.has(kk)) {
      written.add(kk);
      const row = encodeBlockRow(ids[k]!, days[k]!, m);
      const c = cuts(ids[k]!, days[k]!);
      if (c) fillRowDays(row, 0, c);
      if (isStored.has(kk)) updates.add(ids[k]!, days[k]!, row, 0);
      else pieces.push(row);
    }
  }
  pieces.push(COPY_TRAILER);
  return { updates, pieces: pieces.length > 2 ? pieces : [] };
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
  await withTransaction(pool, async (client) => {
    const cuts = await dayCuts(client, await lockedZones(client, [...new Set(idList)]), firstDay, lastDay);
    for (let k = 0; k < count; k += 1) {
      const c = cuts(ids[k]!, days[k]!);
      if (c) fillRowDays(blocks.copy, blocks.rowStarts[k]!, c);
      // ~1 ms of work per 1,000 blocks: let other requests in between (a 1M POST is ~10,000).
      if (k % 1000 === 999) await new Promise((resolve) => setImmediate(resolve));
    }
    // Attempts until one finds no block created by another writer since it looked (see the header).
    for (;;) {
      await client.query('SAVEPOINT flex_blocks');
      try {
        const stored = storedBlocks((await client.query<{ id: number; blob: Buffer }>(STORED_SQL, [idList, dayList])).rows);
        if (stored.length === 0 && !duplicates) await writeCopy(client, [blocks.copy]);
        else {
          const { updates, pieces } = mergedWrites(blocks, ids, days, stored, cuts);
          if (updates.size > 0) await client.query(UPDATE_SQL, updates.columns);
          if (pieces.length > 0) await writeCopy(client, pieces);
        }
        await client.query('RELEASE SAVEPOINT flex_blocks');
        return;
      } catch (err) {
        if (sqlState(err) !== '23505') throw err;
        await client.query('ROLLBACK TO SAVEPOINT flex_blocks');
      }
    }
  });
}

/** Rows already in columns (CSV import, reference readings): encoded here, written the same way. */
export async function writeRows(pool: Pool, rows: ReadingRows, updatedAtMs: number): Promise<void> {
  if (rows.timestamps.length === 0) return;
  await writeBlocks(pool, encodeBlocks(rows.offsets, rows.timestamps, rows.values, rows.resolutions, updatedAtMs), rows.registerIds);
}
