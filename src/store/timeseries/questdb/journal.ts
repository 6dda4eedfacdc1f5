// The pending-batch journal of the QuestDB store, in PostgreSQL (migration 005): a batch is
// recorded before any of it is sent and removed once all of it is applied; whatever is left
// (Flex killed, QuestDB down) is sent again in full (docs/questdb.md, "All or nothing").
//
// Rows are packed as little-endian columns, 20 bytes a reading:
//   u32 series, u32 readings, f64 registerIds[series], i32 offsets[series+1],
//   f64 timestamps[n], f64 values[n], i32 resolutions[n]
import type { Pool } from '../../database.ts';
import type { ReadingRows } from '../types.ts';

export interface PendingBatch {
  id: number;
  updatedAtMs: number;
  rows: ReadingRows;
}

export function packRows(rows: ReadingRows): Buffer {
  const series = rows.registerIds.length;
  const n = rows.timestamps.length;
  // f64 columns first after the counts would need padding; lay out 8-byte columns at 8-byte offsets.
  const head = 8 + series * 8;
  const offsetsBytes = (series + 1) * 4;
  const at64 = Math.ceil((head + offsetsBytes) / 8) * 8;
  const out = Buffer.alloc(at64 + n * 16 + n * 4);
  out.writeUInt32LE(series, 0);
  out.writeUInt32LE(n, 4);
  new Float64Array(out.buffer, out.byteOffset + 8, series).set(Float64Array.from(rows.registerIds));
  Buffer.from(rows.offsets.buffer, rows.offsets.byteOffset, offsetsBytes).copy(out, head);
  Buffer.from(rows.timestamps.buffer, rows.timestamps.byteOffset, n * 8).copy(out, at64);
  Buffer.from(rows.values.buffer, rows.values.byteOffset, n * 8).copy(out, at64 + n * 8);
  Buffer.from(rows.resolutions.buffer, rows.resolutions.byteOffset, n * 4).copy(out, at64 + n * 16);
  return out;
}

export function unpackRows(packed: Buffer): ReadingRows {
  // An aligned copy: typed arrays need offsets that are multiples of their element size.
  const bytes = new Uint8Array(packed.length);
  bytes.set(packed);
  const view = new DataView(bytes.buffer);
  const series = view.getUint32(0, true);
  const n = view.getUint32(4, true);
  const head = 8 + series * 8;
  const at64 = Math.ceil((head + (series + 1) * 4) / 8) * 8;
  return {
    registerIds: Array.from(new Float64Array(bytes.buffer, 8, series)),
    offsets: new Int32Array(bytes.buffer.slice(head, head + (series + 1) * 4)),
    timestamps: new Float64Array(bytes.buffer, at64, n),
    values: new Float64Array(bytes.buffer, at64 + n * 8, n),
    resolutions: new Int32Array(bytes.buffer, at64 + n * 16, n),
  };
}

export class BatchJournal {
  constructor(private readonly pool: Pool) {}

  async record(rows: ReadingRows, updatedAtMs: number): Promise<number> {
    const { rows: r } = await this.pool.query<{ id: string }>('INSERT INTO timeseries_pending_batches (updated_at_ms, readings, rows) VALUES ($1, $2, $3) RETURNING id', [
      updatedAtMs,
      rows.timestamps.length,
      packRows(rows),
    ]);
    return Number(r[0]!.id);
  }

  async done(id: number): Promise<void> {
    await this.pool.query('DELETE FROM timeseries_pending_batches WHERE id = $1', [id]);
  }

  /** Ids of pending batches created before `olderThanMs` ago, oldest first. */
  async pendingIds(olderThanMs = 0): Promise<number[]> {
    const { rows } = await this.pool.query<{ id: string }>("SELECT id FROM timeseries_pending_batches WHERE created_at <= now() - $1 * interval '1 millisecond' ORDER BY id", [olderThanMs]);
    return rows.map((r) => Number(r.id));
  }

  async load(id: number): Promise<PendingBatch | undefined> {
    const { rows } = await this.pool.query<{ updated_at_ms: number; rows: Buffer }>('SELECT updated_at_ms, rows FROM timeseries_pending_batches WHERE id = $1', [id]);
    if (rows.length === 0) return undefined;
    return { id, updatedAtMs: rows[0]!.updated_at_ms, rows: unpackRows(rows[0]!.rows) };
  }
}

export interface Tombstone {
  registerId: number;
  deletedAtMs: number;
}

/** Registers whose readings were deleted (reads leave them out; see migration 005). */
export class Tombstones {
  private cache: Map<number, number> | undefined;

  constructor(private readonly pool: Pool) {}

  async load(): Promise<Map<number, number>> {
    const { rows } = await this.pool.query<{ register_id: string; deleted_at: Date }>('SELECT register_id, deleted_at FROM timeseries_tombstones');
    this.cache = new Map(rows.map((r) => [Number(r.register_id), r.deleted_at.getTime()]));
    return this.cache;
  }

  /** Deleted at (UTC ms) of each tombstoned register. */
  async all(): Promise<Map<number, number>> {
    return this.cache ?? this.load();
  }

  async add(registerId: number, deletedAtMs: number): Promise<void> {
    await this.pool.query(
      'INSERT INTO timeseries_tombstones (register_id, deleted_at) VALUES ($1, $2) ON CONFLICT (register_id) DO UPDATE SET deleted_at = EXCLUDED.deleted_at',
      [registerId, new Date(deletedAtMs)],
    );
    (await this.all()).set(registerId, deletedAtMs);
  }
}
