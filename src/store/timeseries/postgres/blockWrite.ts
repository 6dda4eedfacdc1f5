// The PostgreSQL write of a batch of register-day blocks (src/shared/readings/blocks.ts), in one
// transaction. The blocks the batch touches that are stored already are locked (FOR UPDATE, in
// (register, day) order), merged here with the batch's readings and updated in place: an
// incoming reading whose value or resolution differs replaces the stored one, whose version goes
// to the block's history (src/shared/readings/versions.ts); one posted again unchanged keeps its
// version. The batch's other blocks are inserted by one binary COPY. The daily pieces travel in the
// same rows, so no committed batch is ever visible without them.
//
// recordedAt (a reading's updatedAt) is one instant per batch. Unless the caller set it, it is
// taken once the write holds its locks, a few milliseconds before it commits, and raised above the
// latest recordedAt of the blocks it locked when a clock (this process's or another's) is behind,
// so a version is always superseded by a later one, in commit order; and never below what this
// process gave a batch committed before (highWater).
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
// The daily pieces of each block (`days`, local midnights of its register's zone: blockDays.ts)
// are computed here from its readings, the zones read FOR SHARE first so that a zone change never
// interleaves with the write; the rows are assembled here (the worker encoded only `data`).
import { copyIn } from '../../copyIn.ts';
import { withTransaction, type Pool, type PoolClient } from '../../database.ts';
import { sqlState } from '../../retry.ts';
import { ByteWriter, afterRecordedAt, dataAsHistory, decimalDigits, writeWithRecordedAt } from '../../../shared/readings/codec.ts';
import { COPY_HEADER, COPY_TRAILER } from '../../../shared/readings/pgCopy.ts';
import {
  BLOCK_COPY_COLUMNS,
  blockData,
  decodeData,
  encodeBlocks,
  encodeData,
  encodeDays,
  encodeDaysFromHours,
  mergeReadings,
  writeBlockRow,
  writeBlockRowAt,
  type BlockReadings,
  type EncodedBlocks,
} from '../../../shared/readings/blocks.ts';
import { correct, decodeHistory, encodeHistory, historyMin } from '../../../shared/readings/versions.ts';
import type { ReadingRows } from '../types.ts';
import { dayCuts, lockedZones, type DayCuts } from './blockDays.ts';
import { DATA_AND_HISTORY_SQL, blocksWithHistory, type BlockWithHistory } from './blockRead.ts';

const COPY_SQL = `COPY reading_blocks ${BLOCK_COPY_COLUMNS} FROM STDIN (FORMAT binary)`;
const COPY_CHUNK = 1 << 20;
/** Stored blocks among the batch's (register, day) keys, locked until the transaction ends; one
 * result row per register (day, then length and bytes of data and of history per block), and
 * the latest recordedAt of them all. */
const STORED_SQL = `WITH locked AS (
    SELECT b.register_id, b.day, b.data, b.history, b.updated_max FROM reading_blocks b
    JOIN unnest($1::int[], $2::int[]) AS k(id, day) ON b.register_id = k.id AND b.day = k.day
    ORDER BY b.register_id, b.day FOR UPDATE OF b)
  SELECT register_id AS id, max(updated_max) AS latest,
    string_agg(int4send(day) || ${DATA_AND_HISTORY_SQL}, ''::bytea ORDER BY day) AS blob
  FROM locked GROUP BY register_id`;
/** Stored blocks written again in place (locked by STORED_SQL in this transaction): their new
 * rows are copied into a temporary table (binary COPY: measured twice as fast as the same rows as
 * unnest() arrays of hex text, docs/benchmarks-readings.md), then updated from it by key. The key
 * is unchanged and no indexed column but history_min (BRIN, summarizing), so an update can stay
 * on its page (HOT). The join is by primary key, always a nested loop over the few rows copied
 * (the temporary table has no statistics: a hash join would read the whole block table). */
const UPDATES_TABLE_SQL = 'CREATE TEMP TABLE IF NOT EXISTS flex_block_updates (LIKE reading_blocks) ON COMMIT DELETE ROWS';
const UPDATES_COPY_SQL = `COPY flex_block_updates ${BLOCK_COPY_COLUMNS} FROM STDIN (FORMAT binary)`;
const UPDATE_SQL = `UPDATE reading_blocks b SET n = u.n, updated_max = u.updated_max, data = u.data, days = u.days, history = u.history, history_min = u.history_min
  FROM flex_block_updates u WHERE b.register_id = u.register_id AND b.day = u.day`;
const NESTED_LOOP_SQL = 'SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off';

/** One binary COPY of the blocks' rows. */
const writeCopy = (client: PoolClient, payload: Uint8Array) => copyIn(client, COPY_SQL, [payload], COPY_CHUNK);

const key = (id: number, day: number) => `${id}:${day}`;
/** `days` of a block whose register's zone PostgreSQL does not know: not computed. */
const NO_DAYS = Uint8Array.of(0);


/** Rows of stored blocks to update, as COPY rows of the temporary table (UPDATE_SQL). */
class Updates {
  private readonly w = new ByteWriter(4096);
  size = 0;

  constructor() {
    this.w.bytes.set(COPY_HEADER, 0);
    this.w.at = COPY_HEADER.length;
  }

  add(id: number, day: number, n: number, updatedMax: number, data: Uint8Array, days: Uint8Array, history: Uint8Array | null, historyMin: number | null): void {
    writeBlockRow(this.w, updatedMax, historyMin, id, day, n, data, days, history);
    this.size += 1;
  }

  async write(client: PoolClient): Promise<void> {
    if (this.size === 0) return;
    this.w.ensure(COPY_TRAILER.length);
    this.w.bytes.set(COPY_TRAILER, this.w.at);
    this.w.at += COPY_TRAILER.length;
    await client.query(UPDATES_TABLE_SQL);
    await copyIn(client, UPDATES_COPY_SQL, [this.w.bytes.subarray(0, this.w.at)], COPY_CHUNK);
    await client.query(NESTED_LOOP_SQL);
    await client.query(UPDATE_SQL);
  }
}

/** Whether `incoming` has the times of `stored` and changes every one of them. */
function replacesAll(stored: BlockReadings, incoming: BlockReadings): boolean {
  if (stored.times.length !== incoming.times.length) return false;
  for (let i = 0; i < stored.times.length; i += 1) {
    if (stored.times[i] !== incoming.times[i]) return false;
    if (Object.is(stored.values[i], incoming.values[i]) && stored.resolutions[i] === incoming.resolutions[i]) return false;
  }
  return true;
}

function latestOf(r: BlockReadings): number {
  let latest = -Infinity;
  for (let i = 0; i < r.updatedAt.length; i += 1) if (r.updatedAt[i]! > latest) latest = r.updatedAt[i]!;
  return latest;
}

/** The batch's writes: blocks nothing is stored for as COPY rows, stored blocks that changed as
 * updates (their readings corrected, the superseded versions added to their history), blocks of
 * one register named by two series of the batch merged in batch order. */
async function batchWrites(blocks: EncodedBlocks, ids: Int32Array, days: Int32Array, stored: readonly BlockWithHistory[], cuts: DayCuts, recordedAt: number): Promise<{ updates: Updates; copy: Uint8Array | undefined }> {
  const storedByKey = new Map<string, BlockWithHistory>();
  for (const s of stored) storedByKey.set(key(s.id, s.day), s);
  const count = ids.length;
  /** Block k of the batch's, decoded, with this write's recordedAt (the worker encoded its own). */
  const decodeMine = (k: number): BlockReadings => {
    const r = decodeData(blockData(blocks, k), days[k]!);
    r.updatedAt.fill(recordedAt);
    return r;
  };
  // Blocks named more than once, merged in batch order (the later reading wins).
  const first = new Map<string, number>();
  const merged = new Map<string, BlockReadings>();
  for (let k = 0; k < count; k += 1) {
    const kk = key(ids[k]!, days[k]!);
    const at = first.get(kk);
    if (at === undefined) first.set(kk, k);
    else merged.set(kk, mergeReadings(merged.get(kk) ?? decodeMine(at), decodeMine(k)));
  }
  const updates = new Updates();
  let rows = 0;
  const w = new ByteWriter(COPY_HEADER.length + blocks.data.length + 64 * count);
  w.bytes.set(COPY_HEADER, 0);
  w.at = COPY_HEADER.length;
  {
    for (let k = 0; k < count; k += 1) {
      // ~1 ms of work per 1,000 blocks: let other requests in between (a 1M POST is ~10,000).
      if (k % 1000 === 999) await new Promise((resolve) => setImmediate(resolve));
      const id = ids[k]!;
      const day = days[k]!;
      const kk = key(id, day);
      if (first.get(kk) !== k) continue;
      // No zone PostgreSQL knows: no pieces (k = 0), the readings answer.
      const c = cuts(id, day);
      const s = storedByKey.get(kk);
      const twice = merged.get(kk);
      if (!s && !twice) {
        // The batch's own block as the worker encoded it: only its daily pieces to add (from
        // the worker's hourly sums: no decoding).
        writeBlockRowAt(w, recordedAt, id, day, blocks.counts[k]!, blockData(blocks, k), c ? encodeDaysFromHours(blocks, k, c, recordedAt) : NO_DAYS);
        rows += 1;
        continue;
      }
      if (s && !twice) {
        const mine = blockData(blocks, k);
        // Posted again unchanged (a head-end re-sending its last days): the same bytes past the
        // recordedAt — nothing to write.
        if (Buffer.compare(mine.subarray(afterRecordedAt(mine)), s.data.subarray(afterRecordedAt(s.data))) === 0) continue;
        // Every reading replaced, none before: the worker's block is the new one and the stored
        // one becomes the history as it is (no decoding beyond the comparison, no encoding).
        if (!s.history && replacesAll(decodeData(s.data, day), decodeData(mine, day))) {
          const data = new ByteWriter(mine.length + 16);
          writeWithRecordedAt(data, mine, day, recordedAt);
          updates.add(id, day, blocks.counts[k]!, recordedAt, data.result(), c ? encodeDaysFromHours(blocks, k, c, recordedAt) : NO_DAYS, dataAsHistory(s.data, day, recordedAt), recordedAt);
          continue;
        }
      }
      const incoming = twice ?? decodeMine(k);
      if (!s) {
        const data = encodeData(day, incoming.times, incoming.values, incoming.resolutions, recordedAt, 0, incoming.times.length);
        writeBlockRow(w, recordedAt, null, id, day, incoming.times.length, data, c ? encodeDays(day, incoming, decimalDigits(incoming.values, 0, incoming.values.length), c, recordedAt) : NO_DAYS, null);
        rows += 1;
        continue;
      }
      const history = decodeHistory(s.history, day);
      const corrected = correct(decodeData(s.data, day), history, incoming);
      if (!corrected.changed) continue;
      const r = corrected.current;
      const latest = latestOf(r);
      const data = encodeData(day, r.times, r.values, r.resolutions, r.updatedAt, 0, r.times.length);
      const h = corrected.superseded > 0 ? corrected.history : history;
      updates.add(id, day, r.times.length, latest, data, c ? encodeDays(day, r, decimalDigits(r.values, 0, r.values.length), c, latest) : NO_DAYS, corrected.superseded > 0 ? encodeHistory(day, h) : s.history, historyMin(h));
    }
  }
  w.ensure(COPY_TRAILER.length);
  w.bytes.set(COPY_TRAILER, w.at);
  w.at += COPY_TRAILER.length;
  return { updates, copy: rows > 0 ? w.bytes.subarray(0, w.at) : undefined };
}

/**
 * Writes encoded blocks of series with these register ids, atomically. `recordedAt` is what the
 * blocks were encoded with; `clock`: it is this process's clock, and is taken again once the
 * write holds its locks (false: the caller chose it, and it is kept).
 */
export async function writeBlocks(pool: Pool, blocks: EncodedBlocks, registerIds: ArrayLike<number>, recordedAt: number, clock: boolean): Promise<void> {
  const count = blocks.blockSeries.length;
  if (count === 0) return;
  const ids = new Int32Array(count);
  for (let k = 0; k < count; k += 1) ids[k] = registerIds[blocks.blockSeries[k]!]!;
  const days = blocks.blockDays;
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
    // Attempts until one finds no block created by another writer since it looked (see the header).
    for (;;) {
      await client.query('SAVEPOINT flex_blocks');
      try {
        const { rows } = await client.query<{ id: number; blob: Buffer; latest: number }>(STORED_SQL, [idList, dayList]);
        const latest = rows.reduce((m, r) => Math.max(m, r.latest), -Infinity);
        if (clock) recordedAt = Math.max(Date.now(), latest + 1, highWater);
        const { updates, copy } = await batchWrites(blocks, ids, days, blocksWithHistory(rows), cuts, recordedAt);
        await updates.write(client);
        if (copy) await writeCopy(client, copy);
        await client.query('RELEASE SAVEPOINT flex_blocks');
        break;
      } catch (err) {
        if (sqlState(err) !== '23505') throw err;
        await client.query('ROLLBACK TO SAVEPOINT flex_blocks');
      }
    }
  });
  if (clock && recordedAt > highWater) highWater = recordedAt;
}

/** The latest recordedAt this process's clock gave a committed batch (raised ones included): a
 * batch that starts after another ended is never recorded before it, whatever blocks each touched. */
let highWater = -Infinity;

/** Rows already in columns (CSV import, reference readings): encoded here, written the same way. */
export async function writeRows(pool: Pool, rows: ReadingRows, updatedAtMs: number | undefined): Promise<void> {
  if (rows.timestamps.length === 0) return;
  const recordedAt = updatedAtMs ?? Date.now();
  await writeBlocks(pool, encodeBlocks(rows.offsets, rows.timestamps, rows.values, rows.resolutions, recordedAt), rows.registerIds, recordedAt, updatedAtMs === undefined);
}
