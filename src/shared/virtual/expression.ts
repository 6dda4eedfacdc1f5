// Arithmetic expressions over a virtual register's source registers (`r0 - 0.5 * r1`).
// A hand-written tokenizer and a precedence-climbing parser produce a plain-data AST: it is
// JSON- and structured-clone-safe, so it can be stored and sent to worker threads. Nothing is
// ever evaluated with eval/new Function. Grammar (docs/virtual-registers.md):
//
//   expression := unary (('+' | '-' | '*' | '/') unary)*      * and / bind tighter; all left-associative
//   unary      := ('-' | '+') unary | primary
//   primary    := number | variable | function '(' expression (',' expression)* ')' | '(' expression ')'
//   function   := 'min' | 'max' | 'abs'
//
// Hostile input stays cheap: at most MAX_EXPRESSION_LENGTH characters and MAX_NESTING_DEPTH
// levels of parentheses, calls and unary signs, so parsing is linear and its recursion bounded.

import type { BinaryOperator, Expr, FunctionName } from './expressionAst.ts';

export type { BinaryOperator, Expr, FunctionName } from './expressionAst.ts';
export { evaluateExpression } from './expressionEval.ts';

export const MAX_EXPRESSION_LENGTH = 1000;
export const MAX_NESTING_DEPTH = 64;

export type ParseResult = { ok: true; ast: Expr } | { ok: false; message: string; position: number };

type Token =
  | { kind: 'number'; value: number; text: string; position: number }
  | { kind: 'name'; text: string; position: number }
  | { kind: 'symbol'; text: '+' | '-' | '*' | '/' | '(' | ')' | ','; position: number }
  | { kind: 'end'; position: number };

const FUNCTIONS: Record<FunctionName, { minArgs: number; maxArgs: number }> = {
  min: { minArgs: 1, maxArgs: Infinity },
  max: { minArgs: 1, maxArgs: Infinity },
  abs: { minArgs: 1, maxArgs: 1 },
};
const PRECEDENCE: Record<string, number> = { '+': 1, '-': 1, '*': 2, '/': 2 };

/** Thrown inside the parser only; parseExpression turns it into `{ ok: false }`. */
class ParseFailure {
  constructor(
    readonly message: string,
    readonly position: number,
  ) {}
}

const NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const WORD_TAIL = /[A-Za-z0-9_.]*/y;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i += 1;
      continue;
    }
    if ('+-*/(),'.includes(c)) {
      tokens.push({ kind: 'symbol', text: c as '+', position: i });
      i += 1;
      continue;
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(text);
    if (number) {
      // `1e`, `1.2.3` and `2r0` are one mistyped word, not a number followed by something.
      WORD_TAIL.lastIndex = NUMBER.lastIndex;
      const tail = WORD_TAIL.exec(text)![0];
      const word = number[0] + tail;
      if (tail !== '') throw new ParseFailure(`invalid number ${word} at ${i}`, i);
      const value = Number(word);
      if (!Number.isFinite(value)) throw new ParseFailure(`number out of range ${word} at ${i}`, i);
      tokens.push({ kind: 'number', value, text: word, position: i });
      i += word.length;
      continue;
    }
    NAME.lastIndex = i;
    const name = NAME.exec(text);
    if (name) {
      tokens.push({ kind: 'name', text: name[0], position: i });
      i += name[0].length;
      continue;
    }
    throw new ParseFailure(`unexpected character '${c}' at ${i}`, i);
  }
  tokens.push({ kind: 'end', position: text.length });
  return tokens;
}

function describe(token: Token): string {
  switch (token.kind) {
    case 'number':
      return `number ${token.text}`;
    case 'name':
      return `name ${token.text}`;
    case 'symbol':
      return `'${token.text}'`;
    case 'end':
      return 'end of expression';
  }
}

class Parser {
  private at = 0;
  private readonly variables: Map<string, number>;

  constructor(
    private readonly tokens: Token[],
    variables: readonly string[],
  ) {
    this.variables = new Map();
    variables.forEach((name, index) => {
      if (!this.variables.has(name)) this.variables.set(name, index);
    });
  }

  parse(): Expr {
    const ast = this.expression(1, 0);
    const next = this.peek();
    if (next.kind !== 'end') throw this.unexpected(next);
    return ast;
  }

  private peek(): Token {
    return this.tokens[this.at]!;
  }

  private next(): Token {
    const token = this.tokens[this.at]!;
    if (token.kind !== 'end') this.at += 1;
    return token;
  }

  private isSymbol(token: Token, text: string): boolean {
    return token.kind === 'symbol' && token.text === text;
  }

  private unexpected(token: Token): ParseFailure {
    if (token.kind === 'end') return new ParseFailure('unexpected end of expression', token.position);
    return new ParseFailure(`unexpected ${describe(token)} at ${token.position}`, token.position);
  }

  private deeper(depth: number, token: Token): number {
    if (depth + 1 > MAX_NESTING_DEPTH) {
      throw new ParseFailure(`nesting deeper than ${MAX_NESTING_DEPTH} at ${token.position}`, token.position);
    }
    return depth + 1;
  }

  /** Precedence climbing: operands joined by operators of precedence ≥ minPrecedence. */
  private expression(minPrecedence: number, depth: number): Expr {
    let left = this.unary(depth);
    for (;;) {
      const token = this.peek();
      if (token.kind !== 'symbol') return left;
      const precedence = PRECEDENCE[token.text];
      if (precedence === undefined || precedence < minPrecedence) return left;
      this.next();
      // precedence + 1 on the right makes equal operators group to the left: a - b - c = (a - b) - c.
      const right = this.expression(precedence + 1, depth);
      left = { type: 'binary', operator: token.text as BinaryOperator, left, right };
    }
  }

  private unary(depth: number): Expr {
    const token = this.peek();
    if (this.isSymbol(token, '-') || this.isSymbol(token, '+')) {
      this.next();
      const operand = this.unary(this.deeper(depth, token));
      return token.kind === 'symbol' && token.text === '-' ? { type: 'negate', operand } : operand;
    }
    return this.primary(depth);
  }

  private primary(depth: number): Expr {
    const token = this.next();
    if (token.kind === 'number') return { type: 'number', value: token.value };
    if (token.kind === 'name') return this.name(token, depth);
    if (this.isSymbol(token, '(')) {
      const inner = this.expression(1, this.deeper(depth, token));
      const close = this.next();
      if (!this.isSymbol(close, ')')) throw new ParseFailure(`expected ')' at ${close.position}`, close.position);
      return inner;
    }
    throw this.unexpected(token);
  }

  private name(token: Token & { kind: 'name' }, depth: number): Expr {
    const followedByParen = this.isSymbol(this.peek(), '(');
    if (Object.hasOwn(FUNCTIONS, token.text)) {
      if (!followedByParen) {
        const after = this.peek().position;
        throw new ParseFailure(`expected '(' after ${token.text} at ${after}`, after);
      }
      return this.call(token, this.deeper(depth, token));
    }
    const index = this.variables.get(token.text);
    if (index !== undefined) return { type: 'variable', name: token.text, index };
    if (followedByParen) throw new ParseFailure(`unknown function ${token.text} at ${token.position}`, token.position);
    throw new ParseFailure(`unknown name ${token.text} at ${token.position}`, token.position);
  }

  private call(token: Token & { kind: 'name' }, depth: number): Expr {
    const name = token.text as FunctionName;
    const { minArgs, maxArgs } = FUNCTIONS[name];
    this.next(); // '('
    const args: Expr[] = [];
    if (!this.isSymbol(this.peek(), ')')) {
      for (;;) {
        args.push(this.expression(1, depth));
        const separator = this.next();
        if (this.isSymbol(separator, ')')) break;
        if (!this.isSymbol(separator, ',')) {
          throw new ParseFailure(`expected ',' or ')' at ${separator.position}`, separator.position);
        }
      }
    } else {
      this.next();
    }
    if (args.length < minArgs || args.length > maxArgs) {
      const wanted = minArgs === maxArgs ? `${minArgs} argument` : `at least ${minArgs} argument`;
      throw new ParseFailure(`${name} takes ${wanted}, got ${args.length} at ${token.position}`, token.position);
    }
    return { type: 'call', name, args };
  }
}

/**
 * Parses `text` into an AST. Names must be in `variables` (the engine passes r0..rN, one per
 * source register, in order); a variable's index in that list is its input index. Errors name
 * the 0-based character position, also returned as `position`.
 */
export function parseExpression(text: string, variables: readonly string[]): ParseResult {
  if (text.length > MAX_EXPRESSION_LENGTH) {
    return { ok: false, message: `expression longer than ${MAX_EXPRESSION_LENGTH} characters`, position: MAX_EXPRESSION_LENGTH };
  }
  if (text.trim() === '') return { ok: false, message: 'empty expression', position: 0 };
  try {
    return { ok: true, ast: new Parser(tokenize(text), variables).parse() };
  } catch (err) {
    if (err instanceof ParseFailure) return { ok: false, message: err.message, position: err.position };
    throw err;
  }
}

/** The variable names an expression uses, each once, in input-index order. */
export function expressionVariables(ast: Expr): string[] {
  const found = new Map<number, string>();
  const visit = (node: Expr): void => {
    switch (node.type) {
      case 'number':
        return;
      case 'variable':
        found.set(node.index, node.name);
        return;
      case 'negate':
        return visit(node.operand);
      case 'binary':
        visit(node.left);
        return visit(node.right);
      case 'call':
        return node.args.forEach(visit);
    }
  };
  visit(ast);
  return [...found.entries()].sort((a, b) => a[0] - b[0]).map(([, name]) => name);
}

/** Fully parenthesised text of an AST: shows how an expression was grouped (errors, docs, tests). */
export function formatExpression(ast: Expr): string {
  switch (ast.type) {
    case 'number':
      return String(ast.value);
    case 'variable':
      return ast.name;
    case 'negate':
      return `(-${formatExpression(ast.operand)})`;
    case 'binary':
      return `(${formatExpression(ast.left)} ${ast.operator} ${formatExpression(ast.right)})`;
    case 'call':
      return `${ast.name}(${ast.args.map(formatExpression).join(', ')})`;
  }
}
