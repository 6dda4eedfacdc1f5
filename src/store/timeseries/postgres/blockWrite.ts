// The PostgreSQL write of a batch of register-day blocks (src/shared/readings/blocks.ts), in one
// transaction. The blocks the batch touches that are stored already are locked (FOR UPDATE, in
// (register, day) order), merged here with the batch's readings and updated in place: an
// incoming reading whose value or resolution differs replaces the stored one, whose version goes
// to the block's history (src/shared/readings/versions.ts); one posted again unchanged keeps its
// version. The batch's other blocks are inserted by one binary COPY. The rollups travel in the
// same rows, so no committed batch is ever visible without them.
//
// recordedAt (a reading's updatedAt) is one instant per batch. Unless the caller set it, it is
// raised above the latest recordedAt of the blocks it locked when a clock (this process's or
// another's) is behind, so a version is always superseded by a later one, in commit order; and
// never below what this process gave a batch committed before (highWater).
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
import { correct, decodeHistory, encodeHistory, historyMin } from '../../../shared/readings/versions.ts';
import type { ReadingRows } from '../types.ts';
import { dayCuts, lockedZones, type DayCuts } from './blockDays.ts';

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
    string_agg(int4send(day) || int4send(length(data)) || data || int4send(coalesce(length(history), 0)) || coalesce(history, ''::bytea), ''::bytea ORDER BY day) AS blob
  FROM locked GROUP BY register_id`;
/** Stored blocks written again in place (locked by STORED_SQL in this transaction). */
const UPDATE_SQL = `UPDATE reading_blocks b SET n = u.n, updated_max = u.updated_max, data = u.data, hours = u.hours, extents = u.extents, days = u.days,
    history = u.history, history_min = u.history_min
  FROM unnest($1::int[], $2::int[], $3::int[], $4::float8[], $5::bytea[], $6::bytea[], $7::bytea[], $8::bytea[], $9::bytea[], $10::float8[])
    AS u(id, day, n, updated_max, data, hours, extents, days, history, history_min)
  WHERE b.register_id = u.id AND b.day = u.day`;

/** One binary COPY of the blocks' rows. */
const writeCopy = (client: PoolClient, pieces: readonly Uint8Array[]) => copyIn(client, COPY_SQL, pieces, COPY_CHUNK);

const key = (id: number, day: number) => `${id}:${day}`;

interface StoredData {
  id: number;
  day: number;
  data: Uint8Array;
  history: Uint8Array | null;
}

function storedBlocks(rows: readonly { id: number; blob: Buffer }[]): StoredData[] {
  const out: StoredData[] = [];
  for (const { id, blob } of rows)
    for (let at = 0; at < blob.length; ) {
      const day = blob.readInt32BE(at);
      const length = blob.readInt32BE(at + 4);
      const data = blob.subarray(at + 8, at + 8 + length);
      at += 8 + length;
      const historyLength = blob.readInt32BE(at);
      out.push({ id, day, data, history: historyLength > 0 ? blob.subarray(at + 4, at + 4 + historyLength) : null });
      at += 4 + historyLength;
    }
  return out;
}

/** Rows of stored blocks to update (UPDATE_SQL's columns). */
class Updates {
  readonly columns: [number[], number[], number[], number[], Buffer[], Buffer[], Buffer[], Buffer[], (Buffer | null)[], (number | null)[]] = [[], [], [], [], [], [], [], [], [], []];

  add(id: number, day: number, row: Uint8Array, rowStart: number, history: Uint8Array | null, historyMin: number | null): void {
    const c = blockRowColumns(row, rowStart);
    const buffer = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    const [ids, days, ns, updated, data, hours, extents, daily, histories, mins] = this.columns;
    ids.push(id);
    days.push(day);
    ns.push(c.n);
    updated.push(c.updatedMax);
    data.push(buffer(c.data));
    hours.push(buffer(c.hours));
    extents.push(buffer(c.extents));
    daily.push(buffer(c.days));
    histories.push(history && buffer(history));
    mins.push(historyMin);
  }

  get size(): number {
    return this.columns[0].length;
  }
}

/** The batch with `stored` blocks merged in (and blocks of one register named by two series of
 * the batch merged in batch order): stored blocks that changed as updates, the others as COPY pieces. */
function mergedWrites(blocks: EncodedBlocks, ids: Int32Array, days: Int32Array, stored: readonly StoredData[], cuts: DayCuts): { updates: Updates; pieces: Uint8Array[] } {
  const storedByKey = new Map<string, StoredData>();
  for (const s of stored) storedByKey.set(key(s.id, s.day), s);
  // The batch's readings per block (blocks named twice merged, the later winning).
  const incoming = new Map<string, BlockReadings>();
  const single = new Map<string, number>();
  const twice = new Set<string>();
  for (let k = 0; k < ids.length; k += 1) {
    const kk = key(ids[k]!, days[k]!);
    const before = incoming.get(kk);
    if (before || single.has(kk)) twice.add(kk);
    const mine = before || storedByKey.has(kk) || single.has(kk) ? decodeData(rowData(blocks, k), days[k]!) : undefined;
    if (single.has(kk)) {
      incoming.set(kk, mergeReadings(decodeData(rowData(blocks, single.get(kk)!), days[k]!), mine!));
      single.delete(kk);
    } else if (before) incoming.set(kk, mergeReadings(before, mine!));
    else if (mine && storedByKey.has(kk)) incoming.set(kk, mine);
    else single.set(kk, k);
  }
  const updates = new Updates();
  const pieces: Uint8Array[] = [COPY_HEADER];
  const written = new Set<string>();
  const encoded = (id: number, day: number, r: BlockReadings) => {
    const row = encodeBlockRow(id, day, r);
    const c = cuts(id, day);
    if (c) fillRowDays(row, 0, c);
    return row;
  };
  for (let k = 0; k < ids.length; k += 1) {
    const kk = key(ids[k]!, days[k]!);
    if (written.has(kk)) continue;
    written.add(kk);
    const id = ids[k]!;
    const day = days[k]!;
    // A block of the batch's own that nothing merges into: as the worker encoded it.
    if (single.has(kk)) {
      pieces.push(blocks.copy.subarray(blocks.rowStarts[k]!, blocks.rowStarts[k + 1]!));
      continue;
    }
    const readings = incoming.get(kk)!;
    const s = storedByKey.get(kk);
    if (!s) {
      pieces.push(encoded(id, day, readings));
      continue;
    }
    const before = decodeData(s.data, day);
    const c = correct(before, decodeHistory(s.history, day), readings);
    if (!c.changed) continue;
    const history = c.superseded > 0 ? encodeHistory(day, c.history) : s.history;
    const min = c.superseded > 0 ? historyMin(c.history) : historyMin(decodeHistory(s.history, day));
    // Every stored reading replaced and the batch named the block once: the worker's row is it.
    const asEncoded = c.superseded === before.times.length && c.current.times.length === readings.times.length && !twice.has(kk);
    if (asEncoded) updates.add(id, day, blocks.copy, blocks.rowStarts[k]!, history, min);
    else updates.add(id, day, encoded(id, day, c.current), 0, history, min);
  }
  pieces.push(COPY_TRAILER);
  return { updates, pieces: pieces.length > 2 ? pieces : [] };
}

/** The blocks again with every reading's recordedAt set to `recordedAt` (rare: a clock behind). */
function withRecordedAt(blocks: EncodedBlocks, recordedAt: number): EncodedBlocks {
  const rows: Uint8Array[] = [];
  let size = COPY_HEADER.length + 2;
  for (let k = 0; k < blocks.blockDays.length; k += 1) {
    const r = decodeData(rowData(blocks, k), blocks.blockDays[k]!);
    r.updatedAt.fill(recordedAt);
    const view = new DataView(blocks.copy.buffer, blocks.copy.byteOffset, blocks.copy.byteLength);
    const row = encodeBlockRow(view.getInt32(blocks.rowStarts[k]! + 6), blocks.blockDays[k]!, r);
    rows.push(row);
    size += row.length;
  }
  const copy = new Uint8Array(size);
  copy.set(COPY_HEADER, 0);
  const rowStarts = new Int32Array(rows.length + 1);
  let at = COPY_HEADER.length;
  rows.forEach((row, k) => {
    rowStarts[k] = at;
    copy.set(row, at);
    at += row.length;
  });
  rowStarts[rows.length] = at;
  copy.set(COPY_TRAILER, at);
  return { copy, rowStarts, blockSeries: blocks.blockSeries, blockDays: blocks.blockDays };
}

/**
 * Writes encoded blocks (register ids still 0) of series with these register ids, atomically.
 * `recordedAt` is what the blocks were encoded with; `clock`: it is this process's clock, and may
 * be raised above the blocks' latest recordedAt (false: the caller chose it).
 */
export async function writeBlocks(pool: Pool, encoded: EncodedBlocks, registerIds: ArrayLike<number>, recordedAt: number, clock: boolean): Promise<void> {
  let blocks = encoded;
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
    const fillDays = async () => {
      for (let k = 0; k < count; k += 1) {
        const c = cuts(ids[k]!, days[k]!);
        if (c) fillRowDays(blocks.copy, blocks.rowStarts[k]!, c);
        // ~1 ms of work per 1,000 blocks: let other requests in between (a 1M POST is ~10,000).
        if (k % 1000 === 999) await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await fillDays();
    // Attempts until one finds no block created by another writer since it looked (see the header).
    for (;;) {
      await client.query('SAVEPOINT flex_blocks');
      try {
        const { rows } = await client.query<{ id: number; blob: Buffer; latest: number }>(STORED_SQL, [idList, dayList]);
        const stored = storedBlocks(rows);
        const latest = rows.reduce((m, r) => Math.max(m, r.latest), -Infinity);
        if (clock && (latest >= recordedAt || highWater > recordedAt)) {
          recordedAt = Math.max(latest + 1, highWater);
          blocks = withRecordedAt(blocks, recordedAt);
          await fillDays();
        }
        if (stored.length === 0 && !duplicates) await writeCopy(client, [blocks.copy]);
        else {
          const { updates, pieces } = mergedWrites(blocks, ids, days, stored, cuts);
          if (updates.size > 0) await client.query(UPDATE_SQL, updates.columns);
          if (pieces.length > 0) await writeCopy(client, pieces);
        }
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
