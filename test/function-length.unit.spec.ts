// Unit: the Kafka-facing shells stay thin. Their decisions live in pure cores with unit tests of their own
// (docs/design/layers.md); a function of the shells that grows past MAX_LINES is a decision creeping back
// into the I/O, where only integration tests see it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const MAX_LINES = 60;
const root = fileURLToPath(new URL('..', import.meta.url));

/** The files that start a Kafka-facing part, and the trainer whose update every learner step runs. */
const SHELLS = [
  'storage/sink/sink.ts',
  'processors/pipeline/processor.ts',
  'learner/loop/learner.ts',
  'learner/train/trainer.ts',
  'learner/eval/evaluator.ts',
  'learner/local/local-run.ts',
  'detectors/start-detectors.ts',
  'envs/actors/run.ts',
  'learner/replay/run-replay.ts',
  'cli/train/command.ts',
];

interface LongFunction {
  readonly where: string;
  readonly lines: number;
}

export function longFunctions(file: string, text: string, max: number): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node, owner: string): void => {
    const isFunction =
      ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isConstructorDeclaration(node);
    if (isFunction && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      const name = node.name?.getText() ?? owner;
      if (last - first + 1 > max) found.push({ where: `${file}:${first + 1} ${name}`, lines: last - first + 1 });
    }
    const next = ts.isVariableDeclaration(node) || ts.isPropertyAssignment(node) ? node.name.getText() : owner;
    ts.forEachChild(node, (child) => visit(child, next));
  };
  visit(source, '(anonymous)');
  return found;
}

test(`no function in the Kafka-facing shells is longer than ${MAX_LINES} lines`, () => {
  const long = SHELLS.flatMap((file) => longFunctions(file, readFileSync(`${root}${file}`, 'utf8'), MAX_LINES));
  assert.deepEqual(long, [], long.map((f) => `${f.where}: ${f.lines} lines`).join('\n'));
});

test('the measure counts a long function, a long method and a long arrow, and passes short ones', () => {
  const body = (n: number) => Array.from({ length: n }, (_, i) => `  const a${i} = ${i};`).join('\n');
  const text = `function long() {\n${body(70)}\n}\nfunction short() {\n${body(3)}\n}\nclass C {\n  m() {\n${body(65)}\n  }\n}\nconst arrow = () => {\n${body(61)}\n};\n`;
  const found = longFunctions('x.ts', text, MAX_LINES).map((f) => f.where.replace(/^x\.ts:\d+ /, ''));
  assert.deepEqual(found, ['long', 'm', 'arrow']);
});
