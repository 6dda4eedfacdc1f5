// The plain-data AST of a virtual register's expression: what the parser (expression.ts)
// produces and the evaluator (expressionEval.ts) consumes. JSON- and structured-clone-safe.

export type BinaryOperator = '+' | '-' | '*' | '/';
export type FunctionName = 'min' | 'max' | 'abs';

export type Expr =
  | { type: 'number'; value: number }
  /** `index` is the variable's position in the list given to parseExpression: inputs[index]. */
  | { type: 'variable'; name: string; index: number }
  | { type: 'negate'; operand: Expr }
  | { type: 'binary'; operator: BinaryOperator; left: Expr; right: Expr }
  | { type: 'call'; name: FunctionName; args: Expr[] };
