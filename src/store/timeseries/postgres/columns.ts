// Readings out of PostgreSQL as columns: per register, one bytea per column holding the values'
// binary send format back to back (timestamptz_send: int8 microseconds since 2000-01-01;
// float8send; int4send), aggregated in time order. The driver turns each bytea into a Buffer
// (hex decoding, native) and decode() reads it into typed arrays, so no per-reading text is
// formatted by PostgreSQL nor parsed by Node. Measured against building each reading's JSON in
// SQL (to_char) and against array_agg text arrays: docs/benchmarks-meter.md.
import type { Series } from '../types.ts';
import { PG_EPOCH_MS } from '../../../../workers/readings/pgCopy.ts';

const TWO_32 = 4_294_967_296;

/** The four column aggregates over rows ordered by `order`: t (start), v (value), r (seconds
 * covered), u (updated). */
export function columnsSql(start: string, value: string, seconds: string, updated: string, order: string): string {
  const agg = (expr: string, name: string) => `string_agg(${expr}, ''::bytea ORDER BY ${order}) AS ${name}`;
  return [agg(`timestamptz_send(${start})`, 't'), agg(`float8send(${value})`, 'v'), agg(`int4send(${seconds})`, 'r'), agg(`timestamptz_send(${updated})`, 'u')].join(', ');
}

export interface ColumnsRow {
  id: number;
  t: Buffer;
  v: Buffer;
  r: Buffer;
  u: Buffer;
}

function view(b: Buffer): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

/** timestamptz send format → UTC ms (stored instants are whole milliseconds). */
function times(b: Buffer): Float64Array {
  const n = b.length / 8;
  const out = new Float64Array(n);
  const dv = view(b);
  for (let i = 0; i < n; i += 1) out[i] = Math.round((dv.getInt32(i * 8) * TWO_32 + dv.getUint32(i * 8 + 4)) / 1000) + PG_EPOCH_MS;
  return out;
}

function decode(id: number, row: ColumnsRow | undefined): Series {
  if (!row) return { registerId: id, timestamps: new Float64Array(0), values: new Float64Array(0), resolutions: new Int32Array(0), updatedAt: new Float64Array(0) };
  const n = row.v.length / 8;
  const values = new Float64Array(n);
  const resolutions = new Int32Array(n);
  const v = view(row.v);
  const r = view(row.r);
  for (let i = 0; i < n; i += 1) {
    values[i] = v.getFloat64(i * 8);
    resolutions[i] = r.getInt32(i * 4);
  }
  return { registerId: id, timestamps: times(row.t), values, resolutions, updatedAt: times(row.u) };
}

/** One Series per id of `order` (empty where no row came back). */
export function decodeRows(order: readonly number[], rows: readonly ColumnsRow[]): Series[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return order.map((id) => decode(id, byId.get(id)));
}
