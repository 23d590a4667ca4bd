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
  const parser = new Parser(expression);
  if (parser.peek() === undefined) throw new CalculatorError('the expression is empty');
  const value = parser.expression();
  if (parser.peek() !== undefined) parser.fail('unexpected character');
  if (!Number.isFinite(value)) throw new CalculatorError('the result is not a finite number');
  return value;
}

/** The grammar's rules over one text, each consuming what it matched and returning its value. */
class Parser {
  private pos = 0;
  private depth = 0;

  constructor(private readonly text: string) {}

  peek(): string | undefined {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos] as string)) this.pos += 1;
    return this.text[this.pos];
  }

  fail(what: string): never {
    throw new CalculatorError(this.pos >= this.text.length ? `${what} at the end` : `${what} at position ${this.pos + 1} ('${this.text[this.pos]}')`);
  }

  expression(): number {
    let value = this.term();
    for (let op = this.peek(); op === '+' || op === '-'; op = this.peek()) {
      this.pos += 1;
      const right = this.term();
      value = op === '+' ? value + right : value - right;
    }
    return value;
  }

  private term(): number {
    let value = this.factor();
    for (let op = this.peek(); op === '*' || op === '/'; op = this.peek()) {
      this.pos += 1;
      const right = this.factor();
      if (op === '/' && right === 0) throw new CalculatorError('division by zero');
      value = op === '*' ? value * right : value / right;
    }
    return value;
  }

  private factor(): number {
    const next = this.peek();
    if (next === '+' || next === '-') {
      this.pos += 1;
      if (++this.depth > MAX_DEPTH) this.fail('too many nested signs');
      const value = this.factor();
      this.depth -= 1;
      return next === '-' ? -value : value;
    }
    if (next === '(') {
      this.pos += 1;
      if (++this.depth > MAX_DEPTH) this.fail('too deeply nested');
      const value = this.expression();
      if (this.peek() !== ')') this.fail("expected ')'");
      this.pos += 1;
      this.depth -= 1;
      return value;
    }
    return this.number();
  }

  private number(): number {
    const match = /^(\d+(\.\d*)?|\.\d+)/.exec(this.text.slice(this.pos));
    if (!match) return this.fail('expected a number');
    this.pos += match[0].length;
    return Number(match[0]);
  }
}

/** Prints a result without float noise: 12 significant digits, no trailing zeros, -0 as 0. */
export function formatNumber(value: number): string {
  const rounded = Number(value.toPrecision(12));
  return Object.is(rounded, -0) ? '0' : String(rounded);
}
