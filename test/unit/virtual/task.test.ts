import { Piscina, transferableSymbol, valueSymbol } from 'piscina';
import { afterAll, describe, expect, it } from 'vitest';
import { parseExpression } from '../../../src/shared/virtual/expression.ts';
import virtualTask, { BaselineAlgorithm, sourceVariables, type VirtualResult, type VirtualTask } from '../../../workers/virtual/task.ts';

const f64 = (...values: number[]): Float64Array => Float64Array.from(values);
const HOUR = 3_600_000;

function parsed(text: string, count: number) {
  const result = parseExpression(text, sourceVariables(count));
  if (!result.ok) throw new Error(result.message);
  return result.ast;
}

const values = (result: VirtualResult): number[] => {
  if ('error' in result) throw new Error(`${result.error}: ${result.message}`);
  return Array.from(result.values);
};

describe('virtualTask (inline)', () => {
  it('names source variables r0…rN', () => {
    expect(sourceVariables(3)).toEqual(['r0', 'r1', 'r2']);
  });

  it('evaluates an expression AST', () => {
    const task: VirtualTask = { kind: 'expression', ast: parsed('r0 - 0.5 * r1', 2), inputs: [f64(10, 20, NaN), f64(4, 0, 2)], length: 3 };
    expect(values(virtualTask(task))).toEqual([8, 20, NaN]);
  });

  it('parses and evaluates expression text, or reports the parse error as data', () => {
    expect(values(virtualTask({ kind: 'expressionText', expression: 'max(r0, r1)', inputs: [f64(1, 5), f64(3, 2)], length: 2 }))).toEqual([3, 5]);
    expect(virtualTask({ kind: 'expressionText', expression: 'r0 + r2', inputs: [f64(1), f64(2)], length: 1 })).toEqual({ error: 'invalid_expression', message: 'unknown name r2 at 5' });
  });

  it('computes a baseline', () => {
    const history = { timestamps: Float64Array.from([0, 1, 2, 24, 25, 26], (h) => h * HOUR), values: f64(1, 2, 3, 4, 5, 6) };
    const task: VirtualTask = { kind: 'baseline', algorithm: BaselineAlgorithm.PreviousDay, targetTimestamps: Float64Array.from([48, 49], (h) => h * HOUR), resolutionSeconds: 3600, timeZone: 'UTC', history };
    expect(values(virtualTask(task))).toEqual([4, 5]);
  });

  it('computes a running total and a constant', () => {
    const timestamps = Float64Array.from([0, 1, 2], (h) => h * HOUR);
    expect(values(virtualTask({ kind: 'runningTotal', timestamps, values: f64(1, 2, 3), resetTimeOfDay: '02:00:00', timeZone: 'UTC' }))).toEqual([1, 3, 3]);
    expect(values(virtualTask({ kind: 'constant', length: 2, value: 7 }))).toEqual([7, 7]);
  });

  it('returns errors as codes and messages, never throws', () => {
    expect(virtualTask({ kind: 'nope' } as unknown as VirtualTask)).toEqual({ error: 'invalid_task', message: 'unknown task kind "nope"' });
    expect(virtualTask(null as unknown as VirtualTask)).toEqual({ error: 'invalid_task', message: 'unknown task kind undefined' });
    expect(virtualTask({ kind: 'constant', length: 2, value: NaN })).toEqual({ error: 'invalid_input', message: 'constant must be a finite number, got NaN' });
    const baseline = { kind: 'baseline', algorithm: 42, targetTimestamps: f64(), resolutionSeconds: 3600, timeZone: 'UTC', history: { timestamps: f64(), values: f64() } } as unknown as VirtualTask;
    expect(virtualTask(baseline)).toEqual({ error: 'unknown_algorithm', message: 'unknown baseline algorithm 42' });
    const running = { kind: 'runningTotal', timestamps: f64(0), values: f64(1), resetTimeOfDay: '06:00:00', timeZone: 'Atlantis' } as VirtualTask;
    expect(virtualTask(running)).toMatchObject({ error: 'invalid_time_zone' });
  });

  it('marks its result for transfer to Piscina (buffer moved, plain value sent)', () => {
    const result = virtualTask({ kind: 'constant', length: 2, value: 1 }) as unknown as Record<symbol, unknown> & { values: Float64Array };
    expect(result[transferableSymbol]).toBe(result.values.buffer);
    expect(result[valueSymbol]).toEqual({ values: result.values });
    expect(Object.keys(result)).toEqual(['values']);
  });
});

describe('virtualTask in a Piscina worker thread', () => {
  const pool = new Piscina({
    filename: new URL('../../../workers/virtual/task.ts', import.meta.url).href,
    execArgv: ['--import', 'tsx'],
    maxThreads: 1,
  });
  afterAll(() => pool.destroy());

  it('crosses the thread boundary with transferred inputs and result, and errors as data', async () => {
    const r0 = f64(1, 2, 3);
    const r1 = f64(10, 20, 30);
    const task: VirtualTask = { kind: 'expression', ast: parsed('r1 / r0 - 1', 2), inputs: [r0, r1], length: 3 };
    const result = await pool.run(task, { transferList: [r0.buffer as ArrayBuffer, r1.buffer as ArrayBuffer] });
    expect(result.values).toBeInstanceOf(Float64Array);
    expect(Array.from(result.values)).toEqual([9, 9, 9]);
    expect(r0.byteLength).toBe(0); // moved to the worker, not copied
    expect(await pool.run({ kind: 'expression', ast: { type: 'bogus' }, inputs: [], length: 1 })).toEqual({ error: 'invalid_expression', message: 'unknown expression node "bogus"' });
  });
});
