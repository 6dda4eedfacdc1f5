// calculationType constant: the same value in every bucket.
import { fail } from './errors.ts';

export function constantSeries(length: number, value: number): Float64Array {
  if (!Number.isInteger(length) || length < 0) fail('invalid_input', `length must be a non-negative integer, got ${length}`);
  if (typeof value !== 'number' || !Number.isFinite(value)) fail('invalid_input', `constant must be a finite number, got ${value}`);
  return new Float64Array(length).fill(value);
}
