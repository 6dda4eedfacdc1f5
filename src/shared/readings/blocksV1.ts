// The first register-day block format (migration 004), read only to convert stored blocks to the
// compact one (src/store/timeseries/postgres/convertBlocks.ts, migration 010). Big-endian:
//   data   u8 version (1), u8 flags, i32 n, then
//          times        flags&1 ? i32 first offset, i32 step      : n × i32 offset   (ms since the UTC day began)
//          resolutions  flags&2 ? i32 seconds                     : n × i32
//          updatedAt    flags&4 ? f64 UTC ms                      : n × f64
//          values       n × f64
import type { BlockReadings } from './blocks.ts';

export const V1 = 1;

/** Readings of a first-format block's `data`. */
export function decodeDataV1(data: Uint8Array, day: number): BlockReadings {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (view.getUint8(0) !== V1) throw new Error(`reading block version ${view.getUint8(0)} is not the first format`);
  const flags = view.getUint8(1);
  const n = view.getInt32(2);
  const base = day * 86_400_000;
  const times = new Float64Array(n);
  const values = new Float64Array(n);
  const resolutions = new Int32Array(n);
  const updatedAt = new Float64Array(n);
  let at = 6;
  if (flags & 1) {
    const first = base + view.getInt32(at);
    const step = view.getInt32(at + 4);
    for (let i = 0; i < n; i += 1) times[i] = first + i * step;
    at += 8;
  } else {
    for (let i = 0; i < n; i += 1, at += 4) times[i] = base + view.getInt32(at);
  }
  if (flags & 2) {
    resolutions.fill(view.getInt32(at));
    at += 4;
  } else {
    for (let i = 0; i < n; i += 1, at += 4) resolutions[i] = view.getInt32(at);
  }
  if (flags & 4) {
    updatedAt.fill(view.getFloat64(at));
    at += 8;
  } else {
    for (let i = 0; i < n; i += 1, at += 8) updatedAt[i] = view.getFloat64(at);
  }
  for (let i = 0; i < n; i += 1, at += 8) values[i] = view.getFloat64(at);
  return { times, values, resolutions, updatedAt };
}
