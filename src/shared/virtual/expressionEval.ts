// Vectorised evaluation of an expression AST: each node is computed over the whole series in
// one tight loop (one Float64Array per node, reused in place where the child's array is a
// temporary), never element by element through the tree. Constant sub-expressions stay plain
// numbers, so `0.5 * r1` is one loop over r1 and allocates one array.
//
// Missing data: NaN in any input gives NaN in the result (IEEE arithmetic, Math.min/max/abs
// all propagate NaN). Division by zero gives NaN, not ±Infinity: a register divided by a
// register that reads 0 has no meaningful value, and ±Infinity would poison sums downstream.
import { fail } from './errors.ts';
import type { BinaryOperator, Expr } from './expressionAst.ts';

type Value = number | Float64Array;

interface Evaluated {
  value: Value;
  /** True when `value` is a temporary array this evaluation may overwrite. */
  owned: boolean;
}

function scalar(operator: BinaryOperator, a: number, b: number): number {
  switch (operator) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return b === 0 ? NaN : a / b;
  }
}

// One loop per operator and operand shape keeps each loop monomorphic for V8. Against a
// per-element tree walk on 1M values (bench/virtualEval.bench.ts): `r0 - 0.5 * r1` 8.5 ms vs
// 90 ms, a 12-node expression 57 ms vs 1,050 ms.
function arrayArray(operator: BinaryOperator, a: Float64Array, b: Float64Array, out: Float64Array): void {
  const n = out.length;
  if (operator === '+') for (let i = 0; i < n; i++) out[i] = a[i]! + b[i]!;
  else if (operator === '-') for (let i = 0; i < n; i++) out[i] = a[i]! - b[i]!;
  else if (operator === '*') for (let i = 0; i < n; i++) out[i] = a[i]! * b[i]!;
  else
    for (let i = 0; i < n; i++) {
      const d = b[i]!;
      out[i] = d === 0 ? NaN : a[i]! / d;
    }
}

function arrayScalar(operator: BinaryOperator, a: Float64Array, b: number, out: Float64Array): void {
  const n = out.length;
  if (operator === '+') for (let i = 0; i < n; i++) out[i] = a[i]! + b;
  else if (operator === '-') for (let i = 0; i < n; i++) out[i] = a[i]! - b;
  else if (operator === '*') for (let i = 0; i < n; i++) out[i] = a[i]! * b;
  else if (b === 0) out.fill(NaN);
  else for (let i = 0; i < n; i++) out[i] = a[i]! / b;
}

function scalarArray(operator: BinaryOperator, a: number, b: Float64Array, out: Float64Array): void {
  const n = out.length;
  if (operator === '+') for (let i = 0; i < n; i++) out[i] = a + b[i]!;
  else if (operator === '-') for (let i = 0; i < n; i++) out[i] = a - b[i]!;
  else if (operator === '*') for (let i = 0; i < n; i++) out[i] = a * b[i]!;
  else
    for (let i = 0; i < n; i++) {
      const d = b[i]!;
      out[i] = d === 0 ? NaN : a / d;
    }
}

// min/max by comparison rather than through a Math.min/Math.max function value: the shared
// call site went megamorphic and measured 66 ms for min(r0, r1, r2) on 1M values. NaN still
// propagates: both comparisons are false when either side is NaN.
function extremum(name: 'min' | 'max', a: Value, b: Value, out: Float64Array): void {
  const n = out.length;
  if (name === 'min') {
    if (typeof a === 'number') {
      const y = b as Float64Array;
      for (let i = 0; i < n; i++) out[i] = a < y[i]! ? a : y[i]! <= a ? y[i]! : NaN;
    } else if (typeof b === 'number') {
      for (let i = 0; i < n; i++) out[i] = a[i]! < b ? a[i]! : b <= a[i]! ? b : NaN;
    } else {
      for (let i = 0; i < n; i++) {
        const x = a[i]!;
        const y = b[i]!;
        out[i] = x < y ? x : y <= x ? y : NaN;
      }
    }
  } else if (typeof a === 'number') {
    const y = b as Float64Array;
    for (let i = 0; i < n; i++) out[i] = a > y[i]! ? a : y[i]! >= a ? y[i]! : NaN;
  } else if (typeof b === 'number') {
    for (let i = 0; i < n; i++) out[i] = a[i]! > b ? a[i]! : b >= a[i]! ? b : NaN;
  } else {
    for (let i = 0; i < n; i++) {
      const x = a[i]!;
      const y = b[i]!;
      out[i] = x > y ? x : y >= x ? y : NaN;
    }
  }
}

class Evaluator {
  constructor(
    private readonly inputs: readonly Float64Array[],
    private readonly length: number,
  ) {}

  /** An array the result of a node may be written to: a child's temporary, or a new one. */
  private target(...children: Evaluated[]): Float64Array {
    for (const child of children) if (child.owned && child.value instanceof Float64Array) return child.value;
    return new Float64Array(this.length);
  }

  evaluate(node: Expr): Evaluated {
    switch (node?.type) {
      case 'number':
        if (typeof node.value !== 'number') fail('invalid_expression', 'number node without a numeric value');
        return { value: node.value, owned: false };
      case 'variable': {
        const input = this.inputs[node.index];
        if (!Number.isInteger(node.index) || input === undefined) {
          fail('invalid_input', `no input for variable ${node.name} (index ${node.index}; ${this.inputs.length} inputs)`);
        }
        return { value: input, owned: false };
      }
      case 'negate': {
        const operand = this.evaluate(node.operand);
        if (typeof operand.value === 'number') return { value: -operand.value, owned: false };
        const src = operand.value;
        const out = this.target(operand);
        for (let i = 0; i < out.length; i++) out[i] = -src[i]!;
        return { value: out, owned: true };
      }
      case 'binary':
        return this.binary(node.operator, this.evaluate(node.left), this.evaluate(node.right));
      case 'call':
        return this.call(node.name, node.args);
      default:
        return fail('invalid_expression', `unknown expression node ${JSON.stringify((node as { type?: unknown } | null)?.type)}`);
    }
  }

  private binary(operator: BinaryOperator, left: Evaluated, right: Evaluated): Evaluated {
    if (!['+', '-', '*', '/'].includes(operator)) fail('invalid_expression', `unknown operator ${JSON.stringify(operator)}`);
    const a = left.value;
    const b = right.value;
    if (typeof a === 'number' && typeof b === 'number') return { value: scalar(operator, a, b), owned: false };
    const out = this.target(left, right);
    // Writing out[i] after reading a[i] and b[i] is safe when out is a or b.
    if (typeof a === 'number') scalarArray(operator, a, b as Float64Array, out);
    else if (typeof b === 'number') arrayScalar(operator, a, b, out);
    else arrayArray(operator, a, b, out);
    return { value: out, owned: true };
  }

  private call(name: string, args: Expr[]): Evaluated {
    if (!Array.isArray(args) || args.length === 0) fail('invalid_expression', `${name} without arguments`);
    if (name === 'abs') {
      if (args.length !== 1) fail('invalid_expression', 'abs takes 1 argument');
      const arg = this.evaluate(args[0]!);
      if (typeof arg.value === 'number') return { value: Math.abs(arg.value), owned: false };
      const src = arg.value;
      const out = this.target(arg);
      for (let i = 0; i < out.length; i++) out[i] = Math.abs(src[i]!);
      return { value: out, owned: true };
    }
    if (name !== 'min' && name !== 'max') return fail('invalid_expression', `unknown function ${JSON.stringify(name)}`);
    let acc = this.evaluate(args[0]!);
    for (let k = 1; k < args.length; k++) {
      const next = this.evaluate(args[k]!);
      const a = acc.value;
      const b = next.value;
      if (typeof a === 'number' && typeof b === 'number') {
        acc = { value: name === 'min' ? Math.min(a, b) : Math.max(a, b), owned: false };
        continue;
      }
      const out = this.target(acc, next);
      extremum(name, a, b, out);
      acc = { value: out, owned: true };
    }
    return acc;
  }
}

/**
 * Evaluates `ast` over series of `length` values. `inputs[i]` is the series of the i-th name
 * given to parseExpression (r0, r1, …); every input must have exactly `length` values. The
 * result is always a new array (never an input), NaN where any used input is NaN or a divisor
 * is 0.
 */
export function evaluateExpression(ast: Expr, inputs: readonly Float64Array[], length: number): Float64Array {
  if (!Number.isInteger(length) || length < 0) fail('invalid_input', `length must be a non-negative integer, got ${length}`);
  inputs.forEach((input, i) => {
    if (!(input instanceof Float64Array)) fail('invalid_input', `input ${i} is not a Float64Array`);
    if (input.length !== length) fail('invalid_input', `input ${i} has ${input.length} values, expected ${length}`);
  });
  const { value, owned } = new Evaluator(inputs, length).evaluate(ast);
  if (typeof value === 'number') return new Float64Array(length).fill(value);
  return owned ? value : value.slice();
}
