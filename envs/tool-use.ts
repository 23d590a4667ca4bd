// ToolUse: a multi-turn arithmetic word problem with a calculator tool. Each turn the agent answers with
// exactly one command (RAGEN format, see actions.ts):
//   <answer>calc: <expression></answer>   the calculator's output is the next observation (reward 0);
//                                          it is environment text, so the policy loss never covers it
//   <answer>final: <number></answer>       ends the episode: reward 1 if right, else 0
// A bare number ("<answer>42</answer>") counts as a final answer. Commands match case-insensitively.
// Invalid turns (no answer tag, unknown command, an expression the calculator rejects, a final answer
// that is not a number) leave the state unchanged and get an observation saying what was wrong.
// The episode is truncated (success 0) after maxTurns turns without a final answer.
import { extractAnswer, splitActions } from './actions.js';
import { CalculatorError, evaluate, formatNumber, MAX_EXPRESSION_LENGTH } from './calculator.js';
import type { EnvId, Environment, ResetResult, StepResult } from './contract.js';
import { EpisodeLifecycle } from './lifecycle.js';
import { integerOption, rejectUnknownOptions } from './option-checks.js';
import { Rng, RngStream } from '../core/rng.js';
import { generateWordProblem, type WordProblem } from './word-problems.js';

export interface ToolUseOptions {
  /** Turns before truncation: room for a few calculator calls and the final answer. */
  maxTurns: number;
}

export const TOOL_USE_DEFAULTS: Readonly<ToolUseOptions> = { maxTurns: 4 };

export const TOOL_USE_COMMANDS = ['calc', 'final'] as const;
const OPERATORS = ['+', '-', '*', '/'] as const;
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const TOLERANCE = 1e-6;

interface ToolCall {
  expression: string;
  result: number;
}

/** FNV-1a, to name a problem compactly in state keys. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

type Command = ({ kind: 'calc'; expression: string } | { kind: 'final'; value: string } | { kind: 'invalid'; problem: string }) & {
  /** Commands after the first "||" (one command per turn; the rest is ignored, as RAGEN truncates). */
  ignored: string[];
};

function parseCommand(text: string): Command {
  const extraction = extractAnswer(text);
  if (!extraction.ok) return { kind: 'invalid', problem: extraction.problem, ignored: [] };
  const { considered, ignored } = splitActions(extraction.value.answer, 1);
  const [first = ''] = considered;
  const match = /^(calc|final)\s*:\s*([\s\S]*)$/i.exec(first);
  if (match) {
    const body = (match[2] ?? '').trim();
    return match[1]?.toLowerCase() === 'calc' ? { kind: 'calc', expression: body, ignored } : { kind: 'final', value: body, ignored };
  }
  if (NUMBER.test(first.replace(/,/g, ''))) return { kind: 'final', value: first, ignored };
  const problem = first === '' ? 'the answer is empty' : `unknown command ${JSON.stringify(first.slice(0, 40))}; use calc: or final:`;
  return { kind: 'invalid', problem, ignored };
}

export class ToolUseEnv implements Environment {
  readonly id: EnvId = { name: 'ToolUse', version: 'v1' };
  readonly actionVocabulary = TOOL_USE_COMMANDS;
  readonly maxActionsPerTurn = 1;
  readonly maxTurns: number;
  private readonly lifecycle = new EpisodeLifecycle('ToolUse');
  private problem: WordProblem = { kind: 'none', text: '', answer: 0, numbers: [] };
  private calls: ToolCall[] = [];
  private finalAnswer: number | null = null;

  constructor(options: Partial<ToolUseOptions> = {}) {
    rejectUnknownOptions('ToolUse', options, Object.keys(TOOL_USE_DEFAULTS));
    const o = { ...TOOL_USE_DEFAULTS, ...options };
    this.maxTurns = integerOption('ToolUse', 'maxTurns', o.maxTurns, 1, 100);
  }

  /** The current problem (for tests and tools). */
  get task(): WordProblem {
    return this.problem;
  }

  reset(seed: number): ResetResult {
    this.lifecycle.start(seed);
    this.problem = generateWordProblem(new Rng(seed, RngStream.task));
    this.calls = [];
    this.finalAnswer = null;
    return { observation: `Problem: ${this.problem.text}`, stateKey: this.stateKey(), info: { seed: String(seed), problemKind: this.problem.kind } };
  }

  step(actionText: string): StepResult {
    this.lifecycle.beginTurn();
    const command = parseCommand(String(actionText));
    const keyBefore = this.stateKey();
    let observation: string;
    let reward = 0;
    let terminated = false;
    let actionValid = true;
    const info: Record<string, string> = { command: command.kind };
    if (command.ignored.length > 0) info.ignoredActions = command.ignored.join(' || ');
    if (command.kind === 'calc') {
      try {
        const result = evaluate(command.expression);
        this.calls.push({ expression: command.expression, result });
        observation = `Calculator: ${command.expression} = ${formatNumber(result)}`;
        info.toolOutput = formatNumber(result);
        info.observationSource = 'tool';
      } catch (error) {
        if (!(error instanceof CalculatorError)) throw error;
        actionValid = false;
        info.invalidReason = `calculator error: ${error.message}`;
        observation = this.invalidObservation(info.invalidReason);
      }
    } else if (command.kind === 'final') {
      const value = command.value.replace(/,/g, '').replace(/\.$/, '');
      if (NUMBER.test(value)) {
        this.finalAnswer = Number(value);
        terminated = true;
        const correct = Math.abs(this.finalAnswer - this.problem.answer) <= TOLERANCE;
        reward = correct ? 1 : 0;
        observation = correct ? `Your final answer ${formatNumber(this.finalAnswer)} is correct.` : `Your final answer ${formatNumber(this.finalAnswer)} is wrong.`;
        info.endReason = correct ? 'correct' : 'wrong';
      } else {
        actionValid = false;
        info.invalidReason = `the final answer ${JSON.stringify(command.value.slice(0, 40))} is not a number`;
        observation = this.invalidObservation(info.invalidReason);
      }
    } else {
      actionValid = false;
      info.invalidReason = command.problem;
      observation = this.invalidObservation(command.problem);
    }
    const truncated = !terminated && this.lifecycle.turns >= this.maxTurns;
    if (truncated) info.endReason = 'max-turns';
    this.lifecycle.endTurn(terminated, truncated);
    const stateKey = this.stateKey();
    const metrics: Record<string, number> = {
      turn: this.lifecycle.turns,
      toolCalls: this.calls.length,
      actionsIgnored: command.ignored.length,
      actionEffective: stateKey === keyBefore ? 0 : 1,
    };
    if (terminated || truncated) metrics.success = reward === 1 ? 1 : 0;
    return { observation, reward, terminated, truncated, actionValid, info, metrics, stateKey };
  }

  private invalidObservation(problem: string): string {
    return `Invalid action: ${problem}. Answer with <answer>calc: <expression></answer> or <answer>final: <number></answer>.`;
  }

  /** Problem + the distinct values computed so far (order-free: the same facts are the same state). */
  private stateKey(): string {
    const known = [...new Set(this.calls.map((c) => formatNumber(c.result)))].sort();
    const end = this.finalAnswer === null ? '' : `|final:${formatNumber(this.finalAnswer)}`;
    return `problem:${fnv1a(this.problem.text)}|known:${known.join(',')}${end}`;
  }

  render(): string {
    const lines = [`Problem: ${this.problem.text}`];
    for (const call of this.calls) lines.push(`Calculator: ${call.expression} = ${formatNumber(call.result)}`);
    if (this.finalAnswer !== null) lines.push(`Final answer: ${formatNumber(this.finalAnswer)}`);
    return lines.join('\n');
  }

  systemPrompt(): string {
    return [
      'You are solving an arithmetic word problem and you have a calculator tool.',
      'Each turn, give exactly one command inside <answer></answer>:',
      `- calc: <expression> runs the calculator (numbers, + - * /, parentheses; at most ${MAX_EXPRESSION_LENGTH} characters), e.g. <answer>calc: (23 - 5) * 14</answer>. Its result is shown to you next turn.`,
      '- final: <number> gives your final answer and ends the episode, e.g. <answer>final: 252</answer>.',
      `A right final answer earns reward 1, a wrong one 0. You have ${this.maxTurns} turns in total.`,
      'Answer format: <think>your reasoning</think><answer>calc: 12 * 7</answer>',
    ].join('\n');
  }

  /** Calculator calls on every ordered pair of known numbers with each operator, and each known number as final answer. */
  validActions(): readonly string[] {
    const known = [...new Set([...this.problem.numbers, ...this.calls.map((c) => c.result)])].map(formatNumber);
    const actions: string[] = [];
    known.forEach((a, i) =>
      known.forEach((b, j) => {
        if (i === j) return;
        for (const op of OPERATORS) if (!(op === '/' && Number(b) === 0)) actions.push(`calc: ${a} ${op} ${b}`);
      }),
    );
    for (const n of known) actions.push(`final: ${n}`);
    return actions;
  }
}
