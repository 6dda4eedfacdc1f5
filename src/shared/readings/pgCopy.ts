// PostgreSQL binary COPY encoding of reading rows (register_id int4, ts timestamptz,
// value float8, resolution int4, updated_at timestamptz). Every row has the same size, so the
// register id of row k sits at a fixed offset and can be filled in after ids are resolved.

/** Binary COPY's header (signature, flags, extension length), the same for every table. */
export const COPY_HEADER = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]);
/** Binary COPY's trailer (a field count of -1). */
export const COPY_TRAILER = Buffer.from([0xff, 0xff]);
export const ROW_BYTES = 2 + (4 + 4) + (4 + 8) + (4 + 8) + (4 + 4) + (4 + 8);
/** Offset of the register id inside a row. */
export const REGISTER_ID_OFFSET = 2 + 4;
/** 2000-01-01T00:00:00Z, PostgreSQL's timestamp epoch, in Unix milliseconds. */
export const PG_EPOCH_MS = 946_684_800_000;
const TWO_32 = 4_294_967_296;

function writeInt64(view: DataView, at: number, value: number): void {
  const high = Math.floor(value / TWO_32);
  view.setInt32(at, high);
  view.setUint32(at + 4, value - high * TWO_32);
}

/** The COPY payload (header, rows, trailer). Register ids are 0 until `fillRegisterIds`. */
export function encodeCopy(timestamps: Float64Array, values: Float64Array, resolutions: Int32Array, updatedAtMs: number): Buffer {
  const n = timestamps.length;
  const buffer = Buffer.allocUnsafe(COPY_HEADER.length + n * ROW_BYTES + 2);
  COPY_HEADER.copy(buffer, 0);
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const updatedMicros = (updatedAtMs - PG_EPOCH_MS) * 1000;
  let at = COPY_HEADER.length;
  for (let i = 0; i < n; i += 1) {
    view.setInt16(at, 5);
    view.setInt32(at + 2, 4);
    view.setInt32(at + 6, 0);
    view.setInt32(at + 10, 8);
    writeInt64(view, at + 14, (timestamps[i]! - PG_EPOCH_MS) * 1000);
    view.setInt32(at + 22, 8);
    view.setFloat64(at + 26, values[i]!);
    view.setInt32(at + 34, 4);
    view.setInt32(at + 38, resolutions[i]!);
    view.setInt32(at + 42, 8);
    writeInt64(view, at + 46, updatedMicros);
    at += ROW_BYTES;
  }
  view.setInt16(at, -1);
  return buffer;
}

/** Writes the register id of every row, series by series (rows of series s: offsets[s]..offsets[s+1]).
 * `base` is where the rows start: after the header of a whole payload, 0 for header-less chunks. */
export function fillRegisterIds(copy: Buffer, offsets: Int32Array, registerIds: ArrayLike<number>, base = COPY_HEADER.length): void {
  const view = new DataView(copy.buffer, copy.byteOffset, copy.byteLength);
  for (let s = 0; s < registerIds.length; s += 1) {
    const id = registerIds[s]!;
    for (let row = offsets[s]!; row < offsets[s + 1]!; row += 1) view.setInt32(base + row * ROW_BYTES + REGISTER_ID_OFFSET, id);
  }
}
