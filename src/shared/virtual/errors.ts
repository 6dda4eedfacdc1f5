// Error codes of the virtual-register computations. The functions throw ordinary RangeErrors
// carrying a `code`; the worker entry (task.ts) turns them into `{ error, message }` data,
// because custom error classes do not survive the worker-thread boundary.

export const VIRTUAL_ERROR_CODES = {
  invalid_task: 'the task is not one of the known kinds',
  invalid_input: 'arrays of different lengths, timestamps not ascending, a bad number or option',
  invalid_expression: 'the expression text does not parse, or an AST node is malformed',
  invalid_time_zone: 'not an IANA time-zone name known to this Node.js (Intl)',
  invalid_time_of_day: "not a local time of day written 'HH:MM:SS'",
  invalid_day: "not a local calendar day written 'YYYY-MM-DD'",
  unknown_algorithm: 'not a BaselineAlgorithm code',
  internal_error: 'anything else (a bug): the message says what',
} as const;

export type VirtualErrorCode = keyof typeof VIRTUAL_ERROR_CODES;

export interface VirtualError extends RangeError {
  code: VirtualErrorCode;
}

export function fail(code: VirtualErrorCode, message: string): never {
  throw Object.assign(new RangeError(message), { code });
}

export function errorCodeOf(err: unknown): VirtualErrorCode {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code in VIRTUAL_ERROR_CODES ? (code as VirtualErrorCode) : 'internal_error';
}
