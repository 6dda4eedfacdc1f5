import { describe, expect, it } from 'vitest';
import {
  evaluateExpression,
  expressionVariables,
  formatExpression,
  MAX_EXPRESSION_LENGTH,
  MAX_NESTING_DEPTH,
  parseExpression,
  type Expr,
} from '../../../src/shared/virtual/expression.ts';

const VARS = ['r0', 'r1', 'r2'];

function ast(text: string, variables: readonly string[] = VARS): Expr {
  const parsed = parseExpression(text, variables);
  if (!parsed.ok) throw new Error(`${text}: ${parsed.message}`);
  return parsed.ast;
}

const grouped = (text: string): string => formatExpression(ast(text));

function error(text: string, variables: readonly string[] = VARS): { message: string; position: number } {
  const parsed = parseExpression(text, variables);
  if (parsed.ok) throw new Error(`${text} parsed`);
  return { message: parsed.message, position: parsed.position };
}

const f64 = (...values: number[]): Float64Array => Float64Array.from(values);

describe('parseExpression: grammar', () => {
  it('builds a plain-data AST with the variable index of each name', () => {
    expect(ast('r0 - 0.5 * r1')).toEqual({
      type: 'binary',
      operator: '-',
      left: { type: 'variable', name: 'r0', index: 0 },
      right: { type: 'binary', operator: '*', left: { type: 'number', value: 0.5 }, right: { type: 'variable', name: 'r1', index: 1 } },
    });
  });

  it('survives JSON and structured clone unchanged (it travels to worker threads)', () => {
    const tree = ast('max(r0, -r1) / abs(r2 - 3) + min(1, 2, r0)');
    expect(JSON.parse(JSON.stringify(tree))).toEqual(tree);
    expect(structuredClone(tree)).toEqual(tree);
  });

  it('reads decimal numbers: integers, fractions, leading and trailing dots, exponents', () => {
    const numbers = ['7', '0.25', '.5', '5.', '1e3', '2.5E-2', '1e+2', '00012'].map((t) => ast(t));
    expect(numbers).toEqual([7, 0.25, 0.5, 5, 1000, 0.025, 100, 12].map((value) => ({ type: 'number', value })));
  });

  it('gives * and / precedence over + and -', () => {
    expect(grouped('1 + 2 * 3')).toBe('(1 + (2 * 3))');
    expect(grouped('1 * 2 + 3')).toBe('((1 * 2) + 3)');
    expect(grouped('r0 - r1 / r2')).toBe('(r0 - (r1 / r2))');
  });

  it('groups operators of equal precedence to the left', () => {
    expect(grouped('1 - 2 - 3')).toBe('((1 - 2) - 3)');
    expect(grouped('8 / 4 / 2')).toBe('((8 / 4) / 2)');
    expect(grouped('1 - 2 + 3')).toBe('((1 - 2) + 3)');
    expect(grouped('2 * 3 / 4 * 5')).toBe('(((2 * 3) / 4) * 5)');
  });

  it('lets parentheses override precedence', () => {
    expect(grouped('(1 + 2) * 3')).toBe('((1 + 2) * 3)');
    expect(grouped('r0 - (r1 - r2)')).toBe('(r0 - (r1 - r2))');
    expect(grouped('((((r0))))')).toBe('r0');
  });

  it('binds unary minus and plus tighter than any binary operator', () => {
    expect(grouped('-r0 * r1')).toBe('((-r0) * r1)');
    expect(grouped('-r0 - -r1')).toBe('((-r0) - (-r1))');
    expect(grouped('2 * -3')).toBe('(2 * (-3))');
    expect(grouped('--r0')).toBe('(-(-r0))');
    expect(grouped('+r0 + +2')).toBe('(r0 + 2)');
    expect(grouped('-(r0 + r1)')).toBe('(-(r0 + r1))');
  });

  it('parses function calls with any expressions as arguments', () => {
    expect(grouped('min(r0, r1)')).toBe('min(r0, r1)');
    expect(grouped('max(r0, r1 * 2, -3)')).toBe('max(r0, (r1 * 2), (-3))');
    expect(grouped('abs(r0 - r1) * 2')).toBe('(abs((r0 - r1)) * 2)');
    expect(grouped('min(max(r0, 0), 10)')).toBe('min(max(r0, 0), 10)');
    expect(grouped('min(r0)')).toBe('min(r0)');
  });

  it('ignores spaces, tabs and newlines', () => {
    expect(grouped(' r0\t*\n( r1 +r2 ) ')).toBe('(r0 * (r1 + r2))');
  });

  it('accepts any variable names it is given, case-sensitively', () => {
    expect(formatExpression(ast('import - export_2', ['import', 'export_2']))).toBe('(import - export_2)');
    expect(ast('import - export_2', ['import', 'export_2'])).toMatchObject({ left: { index: 0 }, right: { index: 1 } });
    expect(error('R0').message).toBe('unknown name R0 at 0');
  });
});

describe('parseExpression: errors name the position', () => {
  it.each([
    ['r0 + 1 + r7', 'unknown name r7 at 9', 9],
    ['r0 + 1 - 2 *  r7', 'unknown name r7 at 14', 14],
    ['(r0 + r1', "expected ')' at 8", 8],
    ['(r0 + r1 r2)', "expected ')' at 9", 9],
    ['r0 +', 'unexpected end of expression', 4],
    ['r0 * (', 'unexpected end of expression', 6],
    ['r0 r1', 'unexpected name r1 at 3', 3],
    ['r0 2', 'unexpected number 2 at 3', 3],
    ['r0 + 1)', "unexpected ')' at 6", 6],
    ['2 * / 3', "unexpected '/' at 4", 4],
    [', r0', "unexpected ',' at 0", 0],
    ['r0 # r1', "unexpected character '#' at 3", 3],
    ['r0 ^ 2', "unexpected character '^' at 3", 3],
    ['1e + r0', 'invalid number 1e at 0', 0],
    ['r0 + 1.2.3', 'invalid number 1.2.3 at 5', 5],
    ['2r0', 'invalid number 2r0 at 0', 0],
    ['1e999', 'number out of range 1e999 at 0', 0],
    ['sqrt(r0)', 'unknown function sqrt at 0', 0],
    ['min r0', "expected '(' after min at 4", 4],
    ['abs', "expected '(' after abs at 3", 3],
    ['min()', 'min takes at least 1 argument, got 0 at 0', 0],
    ['1 + abs(r0, r1)', 'abs takes 1 argument, got 2 at 4', 4],
    ['max(r0 r1)', "expected ',' or ')' at 7", 7],
    ['max(r0,', 'unexpected end of expression', 7],
    ['max(r0,)', "unexpected ')' at 7", 7],
    ['r0(2)', "unexpected '(' at 2", 2],
  ])('%s → %s', (text, message, position) => {
    expect(error(text)).toEqual({ message, position });
  });

  it('refuses empty and blank input', () => {
    expect(error('')).toEqual({ message: 'empty expression', position: 0 });
    expect(error(' \t\n')).toEqual({ message: 'empty expression', position: 0 });
  });

  it(`refuses more than ${MAX_EXPRESSION_LENGTH} characters before looking at them`, () => {
    const longest = `r0${' + r0'.repeat(199)}`.padEnd(MAX_EXPRESSION_LENGTH, ' ');
    expect(longest.length).toBe(MAX_EXPRESSION_LENGTH);
    expect(parseExpression(longest, VARS).ok).toBe(true);
    expect(error(`${longest} `)).toEqual({ message: 'expression longer than 1000 characters', position: 1000 });
  });

  it(`refuses nesting deeper than ${MAX_NESTING_DEPTH} (parentheses, calls, unary signs)`, () => {
    const parens = (n: number): string => `${'('.repeat(n)}r0${')'.repeat(n)}`;
    expect(parseExpression(parens(64), VARS).ok).toBe(true);
    expect(error(parens(65))).toEqual({ message: 'nesting deeper than 64 at 64', position: 64 });
    expect(parseExpression(`${'-'.repeat(64)}r0`, VARS).ok).toBe(true);
    expect(error(`${'-'.repeat(65)}r0`).message).toBe('nesting deeper than 64 at 64');
    expect(error(`${'abs('.repeat(65)}r0${')'.repeat(65)}`).message).toBe('nesting deeper than 64 at 256');
  });

  // Backtracking or work exponential in the nesting would not finish on 1,000-character inputs:
  // the test's timeout catches that; the time it takes is not asserted (no timing assertions).
  it('finishes on hostile input at the limits', () => {
    for (const text of ['('.repeat(1000), '-'.repeat(1000), 'r0+'.repeat(333), 'min('.repeat(250), `${'1'.repeat(999)}x`]) {
      expect(parseExpression(text, VARS).ok).toBe(false);
    }
  }, 10_000);
});

describe('expressionVariables', () => {
  it('lists the names used, once each, in input order', () => {
    expect(expressionVariables(ast('r2 * r0 + r2 - min(r0, 3)'))).toEqual(['r0', 'r2']);
    expect(expressionVariables(ast('1 + 2'))).toEqual([]);
    expect(expressionVariables(ast('abs(-r1)'))).toEqual(['r1']);
  });
});

describe('evaluateExpression', () => {
  const r0 = f64(10, 20, 30, NaN);
  const r1 = f64(4, 0, -2, 1);
  const r2 = f64(1, 2, 3, 4);
  const run = (text: string): number[] => Array.from(evaluateExpression(ast(text), [r0, r1, r2], 4));

  it('evaluates the documented example r0 - 0.5 * r1, NaN where an input is missing', () => {
    // 10 - 2 = 8, 20 - 0 = 20, 30 + 1 = 31, NaN - 0.5 = NaN
    expect(run('r0 - 0.5 * r1')).toEqual([8, 20, 31, NaN]);
  });

  it('computes each operator element by element, in every operand shape', () => {
    expect(run('r0 + r2')).toEqual([11, 22, 33, NaN]);
    expect(run('r2 - r1')).toEqual([-3, 2, 5, 3]);
    expect(run('r1 * r2')).toEqual([4, 0, -6, 4]);
    expect(run('r2 * 3')).toEqual([3, 6, 9, 12]);
    expect(run('10 - r2')).toEqual([9, 8, 7, 6]);
    expect(run('r2 - 10')).toEqual([-9, -8, -7, -6]);
    expect(run('12 / r2')).toEqual([12, 6, 4, 3]);
    expect(run('r2 / 2')).toEqual([0.5, 1, 1.5, 2]);
    expect(run('-r1')).toEqual([-4, -0, 2, -1]);
    expect(run('+r1')).toEqual([4, 0, -2, 1]);
  });

  it('follows precedence and associativity', () => {
    expect(run('r2 - r2 - r2')).toEqual([-1, -2, -3, -4]);
    expect(run('r2 * 2 + 1')).toEqual([3, 5, 7, 9]);
    expect(run('(r2 + 1) * 2')).toEqual([4, 6, 8, 10]);
    expect(run('-r2 * -r2')).toEqual([1, 4, 9, 16]);
    expect(run('12 / r2 / 2')).toEqual([6, 3, 2, 1.5]);
  });

  it('gives NaN for division by zero (scalar and array divisors), never ±Infinity', () => {
    expect(run('r0 / r1')).toEqual([2.5, NaN, -15, NaN]);
    expect(run('r2 / 0')).toEqual([NaN, NaN, NaN, NaN]);
    expect(run('1 / r1')).toEqual([0.25, NaN, -0.5, 1]);
    expect(run('1 / 0 + r2')).toEqual([NaN, NaN, NaN, NaN]);
    expect(run('0 / r1')).toEqual([0, NaN, -0, 0]);
  });

  it('computes min, max and abs, and propagates NaN through them', () => {
    expect(run('min(r0, r2 * 5)')).toEqual([5, 10, 15, NaN]);
    expect(run('max(r1, r2, 3)')).toEqual([4, 3, 3, 4]);
    expect(run('max(r0, 25)')).toEqual([25, 25, 30, NaN]);
    expect(run('max(25, r0)')).toEqual([25, 25, 30, NaN]);
    expect(run('min(25, r0)')).toEqual([10, 20, 25, NaN]);
    expect(run('min(r0, 25)')).toEqual([10, 20, 25, NaN]);
    expect(run('min(r1, r0)')).toEqual([4, 0, -2, NaN]);
    expect(run('min(3, r1)')).toEqual([3, 0, -2, 1]);
    expect(run('abs(r1)')).toEqual([4, 0, 2, 1]);
    expect(run('abs(r2 - r0)')).toEqual([9, 18, 27, NaN]);
    expect(run('min(r2)')).toEqual([1, 2, 3, 4]);
    expect(run('max(1, 2) + min(-1, -2) + abs(-3)')).toEqual([3, 3, 3, 3]);
  });

  it('fills a constant expression and copies a bare variable (never returns an input)', () => {
    expect(run('2 * 3 - 1')).toEqual([5, 5, 5, 5]);
    const copy = evaluateExpression(ast('r2'), [r0, r1, r2], 4);
    expect(Array.from(copy)).toEqual([1, 2, 3, 4]);
    expect(copy).not.toBe(r2);
    copy[0] = 99;
    expect(r2[0]).toBe(1);
  });

  it('never writes into its inputs', () => {
    const a = f64(1, 2, 3);
    const b = f64(4, 5, 6);
    const out = evaluateExpression(ast('-(a * 2 + b) - abs(b) + max(a, b)', ['a', 'b']), [a, b], 3);
    // -(2 + 4) - 4 + 4 = -6, -(4 + 5) - 5 + 5 = -9, -(6 + 6) - 6 + 6 = -12
    expect(Array.from(out)).toEqual([-6, -9, -12]);
    expect(Array.from(a)).toEqual([1, 2, 3]);
    expect(Array.from(b)).toEqual([4, 5, 6]);
  });

  it('handles empty series', () => {
    expect(evaluateExpression(ast('r0 + 1'), [new Float64Array(0)], 0)).toEqual(new Float64Array(0));
  });

  it('refuses inputs of the wrong length or a missing input, with a code', () => {
    expect(() => evaluateExpression(ast('r0 + r1'), [f64(1, 2), f64(1)], 2)).toThrow(
      expect.objectContaining({ code: 'invalid_input', message: 'input 1 has 1 values, expected 2' }),
    );
    expect(() => evaluateExpression(ast('r0 + r1'), [f64(1, 2)], 2)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    expect(() => evaluateExpression(ast('r0'), [f64(1)], -1)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });

  it('refuses a malformed AST (it may come from storage) with a code', () => {
    const bad = [{ type: 'pow' }, { type: 'call', name: 'eval', args: [{ type: 'number', value: 1 }] }, { type: 'binary', operator: '%', left: { type: 'number', value: 1 }, right: { type: 'number', value: 2 } }, null];
    for (const node of bad) {
      expect(() => evaluateExpression(node as unknown as Expr, [], 1)).toThrow(expect.objectContaining({ code: 'invalid_expression' }));
    }
  });
});
