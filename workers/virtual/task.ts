// Piscina worker entry for virtual registers: one pure function of cloneable input.
//
//   const pool = new Piscina({ filename: new URL('../workers/virtual/task.ts', import.meta.url).href });
//   const result: VirtualResult = await pool.run(task, { transferList: [...input buffers] });
//
// Failures come back as data, `{ error: code, message }` (errors.ts), never as thrown custom
// errors, which lose their class and fields crossing the thread boundary. The result array is
// handed back by transfer, not copied (a year of 15-minute values is 280 kB; 1M values 8 MB).
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { BaselineAlgorithm, computeBaseline, type BaselineInput } from '../../src/shared/virtual/baselines.ts';
import { constantSeries } from '../../src/shared/virtual/constant.ts';
import { errorCodeOf, fail, type VirtualErrorCode } from '../../src/shared/virtual/errors.ts';
import { evaluateExpression, parseExpression, type Expr } from '../../src/shared/virtual/expression.ts';
import { runningTotal, type RunningTotalOptions } from '../../src/shared/virtual/runningTotal.ts';

import { sourceVariables, type VirtualResult, type VirtualTask } from '../../src/shared/virtual/contract.ts';

export type { BaselineInput, Expr, RunningTotalOptions, VirtualErrorCode };
export { BaselineAlgorithm, sourceVariables };
export type { VirtualResult, VirtualTask };

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
