// Piscina worker entry for virtual registers: one pure function of cloneable input.
//
//   const pool = new Piscina({ filename: new URL('../workers/virtual/task.ts', import.meta.url).href });
//   const result: VirtualResult = await pool.run(task, { transferList: [...input buffers] });
//
// Failures come back as data, `{ error: code, message }` (errors.ts), never as thrown custom
// errors, which lose their class and fields crossing the thread boundary. The result array is
// handed back by transfer, not copied (a year of 15-minute values is 280 kB; 1M values 8 MB).
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { BaselineAlgorithm, computeBaseline, type BaselineInput } from './baselines.ts';
import { constantSeries } from './constant.ts';
import { errorCodeOf, fail, type VirtualErrorCode } from './errors.ts';
import { evaluateExpression, parseExpression, type Expr } from './expression.ts';
import { runningTotal, type RunningTotalOptions } from './runningTotal.ts';

export type { BaselineInput, Expr, RunningTotalOptions, VirtualErrorCode };
export { BaselineAlgorithm };

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

function compute(task: VirtualTask): Float64Array {
  switch (task?.kind) {
    case 'expression':
      return evaluateExpression(task.ast, task.inputs, task.length);
    case 'expressionText': {
      const parsed = parseExpression(task.expression, sourceVariables(task.inputs.length));
      if (!parsed.ok) return fail('invalid_expression', parsed.message);
      return evaluateExpression(parsed.ast, task.inputs, task.length);
    }
    case 'baseline':
      return computeBaseline(task.algorithm, task);
    case 'runningTotal':
      return runningTotal(task.timestamps, task.values, task);
    case 'constant':
      return constantSeries(task.length, task.value);
    default:
      return fail('invalid_task', `unknown task kind ${JSON.stringify((task as { kind?: unknown } | null)?.kind)}`);
  }
}

/** Marks a result so Piscina transfers its buffer back instead of copying it. */
function transferable(values: Float64Array): VirtualResult {
  const result = { values };
  Object.defineProperties(result, {
    [transferableSymbol]: { value: values.buffer, enumerable: false },
    [valueSymbol]: { value: { values }, enumerable: false },
  });
  move(result as never);
  return result;
}

export default function virtualTask(task: VirtualTask): VirtualResult {
  try {
    return transferable(compute(task));
  } catch (err) {
    return { error: errorCodeOf(err), message: err instanceof Error ? err.message : String(err) };
  }
}
