// Returning typed arrays from a worker without copying them: Piscina transfers the listed
// ArrayBuffers and hands the plain value to the caller.
import { move, transferableSymbol, valueSymbol } from 'piscina';

export function transfer<T extends object>(value: T, buffers: ArrayBufferLike[]): T {
  const unique = [...new Set(buffers)].filter((b) => b.byteLength > 0);
  return move({
    get [transferableSymbol]() {
      return unique;
    },
    get [valueSymbol]() {
      return value;
    },
  } as never) as unknown as T;
}
