// What the virtual-register task (workers/virtual/task.ts) takes and returns: the contract both
// sides of the thread boundary import, so the server never imports the entry point.
import type { BaselineAlgorithm, BaselineInput } from './baselines.ts';
import type { VirtualErrorCode } from './errors.ts';
import type { Expr } from './expression.ts';
import type { RunningTotalOptions } from './runningTotal.ts';

export type VirtualTask =
  | { kind: 'expression'; ast: Expr; inputs: Float64Array[]; length: number }
  /** The expression as text, parsed in the worker with variables r0…r(inputs.length − 1). */
  | { kind: 'expressionText'; expression: string; inputs: Float64Array[]; length: number }
  | ({ kind: 'baseline'; algorithm: BaselineAlgorithm } & BaselineInput)
  | ({ kind: 'runningTotal'; timestamps: Float64Array; values: Float64Array } & RunningTotalOptions)
  | { kind: 'constant'; length: number; value: number };

export type VirtualResult = { values: Float64Array } | { error: VirtualErrorCode; message: string };

/** Variable names r0…r(n − 1): one per source register, in sourceRegisters order. */
export function sourceVariables(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `r${i}`);
}
