// The pending-batch journal of the QuestDB store, in PostgreSQL (migrations 005, 007): a batch is
// recorded before any of it is sent and removed once all of it is applied; whatever is left
// (Flex killed, QuestDB down) is sent again in full (docs/questdb.md, "All or nothing"), by any
// instance, once its owner is gone and before any later batch of the same readings
// (docs/questdb.md, "Several instances").
//
// Rows are packed small, since the entry is written before the first chunk leaves (on the 204's
// path): a series whose timestamps are evenly spaced is stored as start and step, a constant
// resolution once, and values that are whole thousandths (as meters send them) as 32-bit
// integers, so 15-minute meter data takes ~4 bytes a reading instead of 20.
//   u32 FORMAT_2, u32 series, u32 readings, then per series: f64 registerId, u32 count,
//   u8 regular, u8 constant, u8 milli, regular ? f64 start, f64 step : f64 timestamps[count],
//   constant ? i32 : i32 resolutions[count], milli ? i32 thousandths[count] : f64 values[count].
//   Little-endian (DataView). Entries of the first format (no FORMAT_2; u32 series, u32
//   readings, per series as above without `milli` and values, then f64 values[readings]), which
//   an older Flex may have left, are still read.
import type { Logger } from 'pino';
import { copyIn } from '../../copyIn.ts';
import type { Pool, PoolClient, Queryable } from '../../database.ts';
import { COPY_HEADER, COPY_TRAILER } from '../../../shared/readings/pgCopy.ts';
import type { ReadingRows } from '../types.ts';
import { LOCKS, type PartitionGate } from './purge.ts';

export interface PendingBatch {
  id: number;
  /** The batch's recordedAt (its rows' updated_at), UTC ms. */
  updatedAtMs: number;
  rows: ReadingRows;
  /** The values it replaces are in the versions table already (nothing of it may have been sent before). */
  versionsKept: boolean;
}

/** Marks the second format (the first began with the series count, never this). */
const FORMAT_2 = 0xfffffffe;

/** The packed rows are journaled in parts of this size (timeseries_pending_batch_parts, migration
 * 008), by one binary COPY, each part in its own CopyData message: PostgreSQL then never needs a
 * large fresh allocation for them (measured: a 4 MB bytea parameter took 90–190 ms to journal,
 * 60 KB parts by COPY 30–50 ms; docs/benchmarks.md, QuestDB). Parts are
 * stored out of line, uncompressed (TOAST EXTERNAL). */
const PART_BYTES = 60_000;
const PARTS_COPY = 'COPY timeseries_pending_batch_parts (batch_id, seq, data) FROM STDIN (FORMAT binary)';

/** The binary COPY data of a batch's parts: (batch_id, seq, data) rows, data a view of `packed`. */
function partRows(id: number, packed: Buffer, parts: number): Uint8Array[] {
  const out: Uint8Array[] = [COPY_HEADER];
  for (let seq = 0; seq < parts; seq += 1) {
    const data = packed.subarray(seq * PART_BYTES, (seq + 1) * PART_BYTES);
    const head = Buffer.alloc(26);
    head.writeInt16BE(3, 0);
    head.writeInt32BE(8, 2);
    head.writeBigInt64BE(BigInt(id), 6);
    head.writeInt32BE(4, 14);
    head.writeInt32BE(seq, 18);
    head.writeInt32BE(data.length, 22);
    out.push(head, data);
  }
  out.push(COPY_TRAILER);
  return out;
}

/** Whether every value of [a, b) is a whole number of thousandths that fits an int32, written
 * back exactly as k / 1000 (what unpackRows computes). */
function inThousandths(values: Float64Array, a: number, b: number): boolean {
  for (let i = a; i < b; i += 1) {
    const k = Math.round(values[i]! * 1000);
    if (!(k / 1000 === values[i]! && k >= -0x80000000 && k <= 0x7fffffff) || Object.is(values[i], -0)) return false;
  }
  return true;
}

export function packRows(rows: ReadingRows): Buffer {
  const series = rows.registerIds.length;
  const n = rows.timestamps.length;
  const { offsets, timestamps, resolutions, values } = rows;
  const shapes: { regular: boolean; constant: boolean; milli: boolean }[] = [];
  let size = 12;
  for (let s = 0; s < series; s += 1) {
    const a = offsets[s]!;
    const b = offsets[s + 1]!;
    const step = b - a > 1 ? timestamps[a + 1]! - timestamps[a]! : 0;
    let regular = true;
    let constant = true;
    for (let i = a + 1; i < b && (regular || constant); i += 1) {
      // Exactly what unpackRows computes, so a replay writes the very timestamps.
      if (timestamps[i] !== timestamps[a]! + (i - a) * step) regular = false;
      if (resolutions[i] !== resolutions[a]) constant = false;
    }
    const milli = inThousandths(values, a, b);
    shapes.push({ regular, constant, milli });
    size += 8 + 4 + 3 + (regular ? 16 : (b - a) * 8) + (constant ? 4 : (b - a) * 4) + (b - a) * (milli ? 4 : 8);
  }
  const out = Buffer.alloc(size);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setUint32(0, FORMAT_2, true);
  view.setUint32(4, series, true);
  view.setUint32(8, n, true);
  let at = 12;
  for (let s = 0; s < series; s += 1) {
    const a = offsets[s]!;
    const b = offsets[s + 1]!;
    const { regular, constant, milli } = shapes[s]!;
    view.setFloat64(at, rows.registerIds[s]!, true);
    view.setUint32(at + 8, b - a, true);
    view.setUint8(at + 12, regular ? 1 : 0);
    view.setUint8(at + 13, constant ? 1 : 0);
    view.setUint8(at + 14, milli ? 1 : 0);
    at += 15;
    at = packTimes(view, at, rows, a, b, regular, constant);
    if (milli) for (let i = a; i < b; i += 1, at += 4) view.setInt32(at, Math.round(values[i]! * 1000), true);
    else for (let i = a; i < b; i += 1, at += 8) view.setFloat64(at, values[i]!, true);
  }
  return out;
}

/** A series' timestamps and resolutions (both formats). */
function packTimes(view: DataView, at: number, rows: ReadingRows, a: number, b: number, regular: boolean, constant: boolean): number {
  const { timestamps, resolutions } = rows;
  if (regular) {
    view.setFloat64(at, timestamps[a] ?? 0, true);
    view.setFloat64(at + 8, b - a > 1 ? timestamps[a + 1]! - timestamps[a]! : 0, true);
    at += 16;
  } else {
    for (let i = a; i < b; i += 1, at += 8) view.setFloat64(at, timestamps[i]!, true);
  }
  if (constant) {
    view.setInt32(at, resolutions[a] ?? 0, true);
    at += 4;
  } else {
    for (let i = a; i < b; i += 1, at += 4) view.setInt32(at, resolutions[i]!, true);
  }
  return at;
}

/** Reads a series' timestamps and resolutions into rows [row, row + count). */
function unpackTimes(view: DataView, at: number, rows: ReadingRows, row: number, count: number, regular: boolean, constant: boolean): number {
  const { timestamps, resolutions } = rows;
  if (regular) {
    const start = view.getFloat64(at, true);
    const step = view.getFloat64(at + 8, true);
    for (let k = 0; k < count; k += 1) timestamps[row + k] = start + k * step;
    at += 16;
  } else {
    for (let k = 0; k < count; k += 1, at += 8) timestamps[row + k] = view.getFloat64(at, true);
  }
  if (constant) {
    (resolutions as Int32Array).fill(view.getInt32(at, true), row, row + count);
    at += 4;
  } else {
    for (let k = 0; k < count; k += 1, at += 4) resolutions[row + k] = view.getInt32(at, true);
  }
  return at;
}

export function unpackRows(packed: Uint8Array): ReadingRows {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  const second = view.getUint32(0, true) === FORMAT_2;
  let at = second ? 4 : 0;
  const series = view.getUint32(at, true);
  const n = view.getUint32(at + 4, true);
  at += 8;
  const registerIds: number[] = [];
  const offsets = new Int32Array(series + 1);
  const rows: ReadingRows = { registerIds, offsets, timestamps: new Float64Array(n), values: new Float64Array(n), resolutions: new Int32Array(n) };
  const { values } = rows;
  let row = 0;
  for (let s = 0; s < series; s += 1) {
    registerIds.push(view.getFloat64(at, true));
    const count = view.getUint32(at + 8, true);
    const regular = view.getUint8(at + 12) === 1;
    const constant = view.getUint8(at + 13) === 1;
    const milli = second && view.getUint8(at + 14) === 1;
    at += second ? 15 : 14;
    offsets[s] = row;
    at = unpackTimes(view, at, rows, row, count, regular, constant);
    if (second && milli) for (let k = 0; k < count; k += 1, at += 4) values[row + k] = view.getInt32(at, true) / 1000;
    else if (second) for (let k = 0; k < count; k += 1, at += 8) values[row + k] = view.getFloat64(at, true);
    row += count;
  }
  offsets[series] = row;
  if (!second) for (let i = 0; i < n; i += 1, at += 8) values[i] = view.getFloat64(at, true);
  return rows;
}

/** The first and last instant of a batch, and its registers (what journal order compares). */
function extent(rows: ReadingRows): { registers: number[]; first: number; last: number } {
  let first = Infinity;
  let last = -Infinity;
  for (let s = 0; s + 1 < rows.offsets.length; s += 1) {
    const a = rows.offsets[s]!;
    const b = rows.offsets[s + 1]!;
    if (b <= a) continue;
    first = Math.min(first, rows.timestamps[a]!);
    last = Math.max(last, rows.timestamps[b - 1]!);
  }
  return { registers: [...new Set(Array.from(rows.registerIds))], first, last };
}

/** The entry lock's object key (the class is LOCKS.entry). */
export const entryKey = (id: number) => id % 2 ** 31;

/** What completing a batch needs from the store. */
export interface Completion {
  /** Sends the rows and waits until QuestDB has applied them. */
  send(batch: PendingBatch): Promise<void>;
  /** Compares the batch with the stored readings and, if `copy`, copies the stored values it
   * changes into the versions table, superseded at the batch's recordedAt (store.ts); run before
   * any of the batch is sent. `again`: a replay, which may find some of the copy made already
   * (its writer died before the journal noted it). Returns the rows to send: those that are new
   * or change a stored reading (undefined: all of them). The copy waits for `after`. */
  keepVersions(batch: Pick<PendingBatch, 'rows' | 'updatedAtMs'>, options: { copy: boolean; again: boolean; after?: Promise<unknown> }): Promise<ReadingRows | undefined>;
  gate: PartitionGate;
}

/** A batch journaled and owned by this process: its session holds the entry's lock and the
 * partition locks of its months until done() or abandon(). */
export interface JournalEntry {
  id: number;
  /** The batch's recordedAt (UTC ms): the updated_at of its rows. */
  recordedAtMs: number;
  /** Settles once the batch may be sent: its parts committed, every older overlapping batch
   * complete, its months entered (no purge rewriting them) and the values it replaces kept; with
   * the rows to send (undefined: all; readings posted again unchanged are left out). */
  ready: Promise<ReadingRows | undefined>;
  /** The batch is applied: the entry goes, the locks are released. */
  done(): Promise<void>;
  /** The batch failed: the entry stays for a replay, the locks are released (once `ready` has settled). */
  abandon(): Promise<void>;
}

/** Journals a batch's header: the write clock's row lock makes entries commit one after another
 * (journal order, the id, is the order of commits: a batch always sees the older entries it must
 * wait for), and gives the batch its recordedAt: the database's clock, always after the previous
 * batch's (or the time the caller gave). The entry's advisory lock is taken by the same
 * statement, so the entry is never visible without its owner. */
const JOURNAL_HEADER = `WITH clock AS (
    UPDATE timeseries_write_clock SET last_ms = CASE WHEN $1::float8 IS NULL THEN greatest(last_ms + 1, (extract(epoch FROM clock_timestamp()) * 1000)::bigint) ELSE last_ms END
    RETURNING last_ms)
  INSERT INTO timeseries_pending_batches (id, updated_at_ms, readings, parts, register_ids, first_ms, last_ms)
  SELECT nextval('timeseries_pending_batches_id_seq'), coalesce($1::float8, clock.last_ms), $2, $3, $4, $5, $6 FROM clock
  RETURNING id, updated_at_ms, pg_advisory_lock(${LOCKS.entry}, (id % 2147483648)::int)`;

/** Ends a session's ownership: its advisory locks released, or the connection closed. */
async function release(client: PoolClient, broken = false): Promise<void> {
  if (!broken) await client.query('SELECT pg_advisory_unlock_all()').catch(() => (broken = true));
  client.release(broken);
}

/**
 * Ownership and order with several Flex instances on one PostgreSQL and QuestDB: an entry is
 * owned by the session that journaled it (an advisory lock taken by the INSERT itself, so the
 * row is never visible unowned) until it is applied; an entry nobody holds is an orphan (its
 * writer died, or gave up with a 503). Before a batch is sent, every older entry that overlaps it
 * (a register in common and overlapping time spans) is waited for, and replayed first if it is
 * an orphan: of two batches writing one reading, the one journaled later is the one stored.
 */
export class BatchJournal {
  /** Journal sessions this process's writers hold at once: half the platform pool. A writer holds
   * its session from its journal entry until the batch is applied, waiting meanwhile for older
   * batches of the same readings; without a bound, 50 writers of the same register-days held the
   * pool's connections while waiting for each other, and writers still asking for one gave up
   * after the pool's 10 s (test/regressions/questdbConcurrentWritersPoolTimeout.test.ts). Here
   * they wait without a limit, leaving the other half of the pool to reads and register lookups. */
  private readonly sessions: Slots;
  constructor(private readonly pool: Pool) {
    this.sessions = new Slots(Math.max(1, Math.floor((pool.options.max ?? 10) / 2)));
  }

  /** Journals the batch's header and returns the entry (its recordedAt known); the rest of the
   * journaling and the waits before sending run on (`ready`). Nothing may be sent before
   * `ready`. `requestedAtMs`: the recordedAt the caller gives (default: the write clock). */
  async begin(rows: ReadingRows, requestedAtMs: number | undefined, completion: Completion): Promise<JournalEntry> {
    const { registers, first, last } = extent(rows);
    const packed = packRows(rows);
    const parts = Math.ceil(packed.length / PART_BYTES);
    await this.sessions.take();
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      this.sessions.give();
      throw err;
    }
    // The session is given back once, whichever of done() and abandon() comes first.
    let ended = false;
    const end = async (broken = false) => {
      if (ended) return;
      ended = true;
      try {
        await release(client, broken);
      } finally {
        this.sessions.give();
      }
    };
    let header: { id: number; recordedAtMs: number };
    try {
      const { rows: r } = await client.query<{ id: string; updated_at_ms: number }>(JOURNAL_HEADER, [requestedAtMs ?? null, rows.timestamps.length, parts, registers, first, last]);
      header = { id: Number(r[0]!.id), recordedAtMs: r[0]!.updated_at_ms };
    } catch (err) {
      await end(true);
      throw err;
    }
    const { id, recordedAtMs } = header;
    const ready = (async () => {
      try {
        // Older batches of the same readings complete and the months entered first; then the
        // parts are written while the batch is compared with the stored readings (QuestDB). The
        // copy of what it replaces waits for the parts: an entry whose parts never committed is
        // dropped by the replay, and must have copied nothing.
        await this.settleOlder(client, id, rows, completion);
        await completion.gate.enter(client, rows, recordedAtMs);
        const written = copyIn(client, PARTS_COPY, partRows(id, packed, parts), PART_BYTES);
        written.catch(() => undefined);
        const send = await this.keepVersions(client, { id, rows, updatedAtMs: recordedAtMs, versionsKept: false }, completion, false, written);
        await written;
        return send;
      } catch (err) {
        await end(true);
        throw err;
      }
    })();
    ready.catch(() => undefined);
    return {
      id,
      recordedAtMs,
      ready,
      done: async () => {
        await ready;
        if (ended) throw new Error(`journal entry ${id} was abandoned`);
        try {
          await client.query('DELETE FROM timeseries_pending_batches WHERE id = $1', [id]);
        } catch (err) {
          await end(true);
          throw err;
        }
        await end();
      },
      abandon: async () => {
        await ready.catch(() => undefined);
        await end();
      },
    };
  }

  /** Copies the values the batch replaces into the versions table, once: the entry records that
   * it did before any of the batch is sent, so a replay never takes the batch's own rows (sent
   * in part before a crash) for replaced ones. Every time (a replay too), the rows to send: a
   * replay leaves out those stored already, unchanged or sent before the crash. */
  private async keepVersions(client: PoolClient, batch: PendingBatch, completion: Completion, again: boolean, after: Promise<unknown> = Promise.resolve()): Promise<ReadingRows | undefined> {
    const send = await completion.keepVersions(batch, { copy: !batch.versionsKept, again, after });
    if (!batch.versionsKept) await client.query('UPDATE timeseries_pending_batches SET versions_kept = true WHERE id = $1', [batch.id]);
    return send;
  }

  /** Completes, in journal order, the older entries overlapping `rows`: waits for the lock of
   * each (its writer finishing or dying), replays it if it is still there. Locks are taken in
   * decreasing id order only, so waits never form a cycle. */
  private async settleOlder(client: PoolClient, id: number, rows: ReadingRows, completion: Completion): Promise<void> {
    const { registers, first, last } = extent(rows);
    const { rows: older } = await client.query<{ id: string }>(
      'SELECT id FROM timeseries_pending_batches WHERE id < $1 AND first_ms <= $4 AND last_ms >= $3 AND register_ids && $2 ORDER BY id',
      [id, registers, first, last],
    );
    for (const { id: text } of older) {
      const other = Number(text);
      await client.query('SELECT pg_advisory_lock($1, $2)', [LOCKS.entry, entryKey(other)]);
      try {
        const batch = await this.load(other, client);
        if (batch) await this.complete(client, batch, completion);
      } finally {
        await client.query('SELECT pg_advisory_unlock($1, $2)', [LOCKS.entry, entryKey(other)]);
      }
    }
  }

  /** Sends an orphan (its lock held by `client`) after the older entries it overlaps. */
  private async complete(client: PoolClient, batch: PendingBatch, completion: Completion): Promise<void> {
    await this.settleOlder(client, batch.id, batch.rows, completion);
    const keys = await completion.gate.enter(client, batch.rows, batch.updatedAtMs);
    try {
      const send = await this.keepVersions(client, batch, completion, true);
      if (!send || send.timestamps.length > 0) await completion.send({ ...batch, rows: send ?? batch.rows });
      await client.query('DELETE FROM timeseries_pending_batches WHERE id = $1', [batch.id]);
    } finally {
      await completion.gate.leave(client, keys);
    }
  }

  /** Sends again, in journal order, every orphaned entry (one whose lock nobody holds); entries
   * being written are left to their writers. Returns the batches sent. */
  async replayOrphans(completion: Completion, log: Logger): Promise<number> {
    const client = await this.pool.connect();
    let broken = false;
    let sent = 0;
    try {
      const { rows } = await client.query<{ id: string }>('SELECT id FROM timeseries_pending_batches ORDER BY id');
      for (const { id: text } of rows) {
        const id = Number(text);
        const { rows: got } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS got', [LOCKS.entry, entryKey(id)]);
        if (!got[0]!.got) continue;
        try {
          const batch = await this.load(id, client);
          if (!batch) continue;
          log.info({ batch: id, readings: batch.rows.timestamps.length }, 'sending an orphaned QuestDB batch again');
          await this.complete(client, batch, completion);
          sent += 1;
        } finally {
          await client.query('SELECT pg_advisory_unlock($1, $2)', [LOCKS.entry, entryKey(id)]);
        }
      }
      return sent;
    } catch (err) {
      broken = true;
      throw err;
    } finally {
      await release(client, broken);
    }
  }

  /** The entry's batch; undefined if it is gone, or if its parts never committed (its writer
   * died between the two steps of begin(), before sending anything): such an entry is dropped. */
  async load(id: number, db: Queryable = this.pool): Promise<PendingBatch | undefined> {
    const { rows } = await db.query<{ updated_at_ms: number; rows: Buffer | null; parts: number; versions_kept: boolean }>('SELECT updated_at_ms, rows, parts, versions_kept FROM timeseries_pending_batches WHERE id = $1', [id]);
    const entry = rows[0];
    if (!entry) return undefined;
    let packed = entry.rows;
    if (packed === null) {
      const { rows: parts } = await db.query<{ data: Buffer }>('SELECT data FROM timeseries_pending_batch_parts WHERE batch_id = $1 ORDER BY seq', [id]);
      if (parts.length !== entry.parts) {
        await db.query('DELETE FROM timeseries_pending_batches WHERE id = $1', [id]);
        return undefined;
      }
      packed = Buffer.concat(parts.map((p) => p.data));
    }
    return { id, updatedAtMs: entry.updated_at_ms, rows: unpackRows(packed), versionsKept: entry.versions_kept };
  }
}

/** A first-come, first-served count of slots; take() waits without a limit. */
class Slots {
  private readonly waiting: (() => void)[] = [];
  constructor(private free: number) {}
  async take(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}

export interface Tombstone {
  registerId: number;
  deletedAtMs: number;
}

/** Registers whose readings were deleted (reads leave them out; see migration 005). Asked of
 * PostgreSQL on every read, not cached: with several instances on one database a cache knows
 * only its own instance's deletes (test/regressions/questdbTombstonesCachedPerInstance.test.ts).
 * The lookup is one query of primary-key probes (a round trip to PostgreSQL), run alongside the QuestDB
 * query where the read allows it (store.ts). */
export class Tombstones {
  constructor(private readonly pool: Pool) {}

  /** Those of `registerIds` that are deleted. */
  async among(registerIds: readonly number[]): Promise<Set<number>> {
    if (registerIds.length === 0) return new Set();
    const { rows } = await this.pool.query<{ register_id: string }>('SELECT register_id FROM timeseries_tombstones WHERE register_id = ANY($1::bigint[])', [registerIds]);
    return new Set(rows.map((r) => Number(r.register_id)));
  }

  async add(registerId: number, deletedAtMs: number): Promise<void> {
    await this.pool.query(
      'INSERT INTO timeseries_tombstones (register_id, deleted_at) VALUES ($1, $2) ON CONFLICT (register_id) DO UPDATE SET deleted_at = EXCLUDED.deleted_at',
      [registerId, new Date(deletedAtMs)],
    );
  }
}
