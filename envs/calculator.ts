// The ToolUse environment's calculator: a small recursive-descent parser over numbers, + - * /,
// parentheses and unary signs. No eval, no identifiers; input length and nesting are bounded.
//   expression := term (('+' | '-') term)*
//   term       := factor (('*' | '/') factor)*
//   factor     := ('+' | '-') factor | number | '(' expression ')'
import { TrajflowError } from '../core/errors.js';

export const MAX_EXPRESSION_LENGTH = 200;
const MAX_DEPTH = 32;

export class CalculatorError extends TrajflowError {
  constructor(message: string) {
    super('ENV_CALCULATOR', message);
  }
}

/** Evaluates an arithmetic expression; throws CalculatorError with a short reason. */
export function evaluate(expression: string): number {
  if (expression.length > MAX_EXPRESSION_LENGTH) throw new CalculatorError(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  const text = expression;
  let pos = 0;
  let depth = 0;

  const skipSpaces = (): void => {
    while (pos < text.length && /\s/.test(text[pos] as string)) pos += 1;
  };
  const peek = (): string | undefined => {
    skipSpaces();
    return text[pos];
  };
  const fail = (what: string): never => {
    throw new CalculatorError(pos >= text.length ? `${what} at the end` : `${what} at position ${pos + 1} ('${text[pos]}')`);
  };

  const number = (): number => {
    const match = /^(\d+(\.\d*)?|\.\d+)/.exec(text.slice(pos));
    if (!match) return fail('expected a number');
    pos += match[0].length;
    return Number(match[0]);
  };

  const factor = (): number => {
    const next = peek();
    if (next === '+' || next === '-') {
      pos += 1;
      if (++depth > MAX_DEPTH) fail('too many nested signs');
      const value = factor();
      depth -= 1;
      return next === '-' ? -value : value;
    }
    if (next === '(') {
      pos += 1;
      if (++depth > MAX_DEPTH) fail('too deeply nested');
      const value = expressionRule();
      if (peek() !== ')') fail("expected ')'");
      pos += 1;
      depth -= 1;
      return value;
    }
    return number();
  };

  const term = (): number => {
    let value = factor();
    for (let op = peek(); op === '*' || op === '/'; op = peek()) {
      pos += 1;
      const right = factor();
      if (op === '/' && right === 0) throw new CalculatorError('division by zero');
      value = op === '*' ? value * right : value / right;
    }
    return value;
  };

  const expressionRule = (): number => {
    let value = term();
    for (let op = peek(); op === '+' || op === '-'; op = peek()) {
      pos += 1;
      const right = term();
      value = op === '+' ? value + right : value - right;
    }
    return value;
  };

  if (peek() === undefined) throw new CalculatorError('the expression is empty');
  const value = expressionRule();
  if (peek() !== undefined) fail('unexpected character');
  if (!Number.isFinite(value)) throw new CalculatorError('the result is not a finite number');
  return value;
}

/** Prints a result without float noise: 12 significant digits, no trailing zeros, -0 as 0. */
export function formatNumber(value: number): string {
  const rounded = Number(value.toPrecision(12));
  return Object.is(rounded, -0) ? '0' : String(rounded);
}
