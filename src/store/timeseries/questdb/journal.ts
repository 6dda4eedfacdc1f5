// The pending-batch journal of the QuestDB store, in PostgreSQL (migration 005): a batch is
// recorded before any of it is sent and removed once all of it is applied; whatever is left
// (Flex killed, QuestDB down) is sent again in full (docs/questdb.md, "All or nothing").
//
// Rows are packed small, since the entry is written before the first chunk leaves (on the 204's
// path): a series whose timestamps are evenly spaced is stored as start and step, a constant
// resolution once, so 15-minute meter data takes ~8 bytes a reading (the value) instead of 20.
//   u32 series, u32 readings, then per series: f64 registerId, u32 count, u8 regular, u8 constant,
//   regular ? f64 start, f64 step : f64 timestamps[count], constant ? i32 : i32 resolutions[count];
//   then f64 values[readings]. Little-endian (DataView).
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
  const { offsets, timestamps, resolutions, values } = rows;
  const shapes: { regular: boolean; constant: boolean }[] = [];
  let size = 8 + n * 8;
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
    shapes.push({ regular, constant });
    size += 8 + 4 + 2 + (regular ? 16 : (b - a) * 8) + (constant ? 4 : (b - a) * 4);
  }
  const out = Buffer.alloc(size);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setUint32(0, series, true);
  view.setUint32(4, n, true);
  let at = 8;
  for (let s = 0; s < series; s += 1) {
    const a = offsets[s]!;
    const b = offsets[s + 1]!;
    const { regular, constant } = shapes[s]!;
    view.setFloat64(at, rows.registerIds[s]!, true);
    view.setUint32(at + 8, b - a, true);
    view.setUint8(at + 12, regular ? 1 : 0);
    view.setUint8(at + 13, constant ? 1 : 0);
    at += 14;
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
  }
  for (let i = 0; i < n; i += 1, at += 8) view.setFloat64(at, values[i]!, true);
  return out;
}

export function unpackRows(packed: Uint8Array): ReadingRows {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  const series = view.getUint32(0, true);
  const n = view.getUint32(4, true);
  const registerIds: number[] = [];
  const offsets = new Int32Array(series + 1);
  const timestamps = new Float64Array(n);
  const resolutions = new Int32Array(n);
  const values = new Float64Array(n);
  let at = 8;
  let row = 0;
  for (let s = 0; s < series; s += 1) {
    registerIds.push(view.getFloat64(at, true));
    const count = view.getUint32(at + 8, true);
    const regular = view.getUint8(at + 12) === 1;
    const constant = view.getUint8(at + 13) === 1;
    at += 14;
    offsets[s] = row;
    if (regular) {
      const start = view.getFloat64(at, true);
      const step = view.getFloat64(at + 8, true);
      for (let k = 0; k < count; k += 1) timestamps[row + k] = start + k * step;
      at += 16;
    } else {
      for (let k = 0; k < count; k += 1, at += 8) timestamps[row + k] = view.getFloat64(at, true);
    }
    if (constant) {
      resolutions.fill(view.getInt32(at, true), row, row + count);
      at += 4;
    } else {
      for (let k = 0; k < count; k += 1, at += 4) resolutions[row + k] = view.getInt32(at, true);
    }
    row += count;
  }
  offsets[series] = row;
  for (let i = 0; i < n; i += 1, at += 8) values[i] = view.getFloat64(at, true);
  return { registerIds, offsets, timestamps, values, resolutions };
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
