// Returning typed arrays from a worker without copying them: Piscina transfers the listed
// ArrayBuffers and hands the plain value to the caller.
import { move, transferableSymbol, valueSymbol } from 'piscina';

export function transfer<T extends object>(value: T, buffers: ArrayBufferLike[]): T {
  // Shared memory is shared, not transferred.
  const unique = [...new Set(buffers)].filter((b) => b instanceof ArrayBuffer && b.byteLength > 0);
  return move({
    get [transferableSymbol]() {
      return unique;
    },
    get [valueSymbol]() {
      return value;
    },
  } as never) as unknown as T;
}

/** A column safe to hand back: the array itself when it is in shared memory or starts its
 * buffer (the rest of that buffer is capacity never written, so never resident), else an
 * exact-size copy. */
export function own<T extends Float64Array | Int32Array>(column: T): T {
  return column.buffer instanceof SharedArrayBuffer || column.byteOffset === 0 ? column : (column.slice() as T);
}
