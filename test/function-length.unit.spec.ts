// Unit: no function of the project's code is longer than MAX_LINES. A long closure is where decisions hide from
// unit tests; the long ones became small state machines with pure transitions and thin shells
// (docs/design/layers.md). Generated data (the *.wasm.ts kernels) and the tests themselves are not counted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const MAX_LINES = 60;
const root = fileURLToPath(new URL('..', import.meta.url));

/** Every folder of source code, bench and web included. */
const SOURCE_ROOTS = [
  'api',
  'bench',
  'bin',
  'cli',
  'core',
  'detectors',
  'envs',
  'examples',
  'gateway',
  'infra',
  'learner',
  'processors',
  'rollout',
  'schemas',
  'scripts',
  'sdk',
  'storage',
  'streams',
  'tokenizer',
  'web',
];

const isSource = (name: string): boolean => /\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.d.mts') && !name.endsWith('.wasm.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return isSource(entry.name) ? [relative(root, path)] : [];
  });
}

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

test(`no function of the project's code is longer than ${MAX_LINES} lines`, () => {
  const files = SOURCE_ROOTS.flatMap((dir) => sourceFiles(join(root, dir)));
  assert.ok(files.length > 400, `expected the whole tree, found ${files.length} files`);
  const long = files.flatMap((file) => longFunctions(file, readFileSync(join(root, file), 'utf8'), MAX_LINES));
  assert.deepEqual(long, [], long.map((f) => `${f.where}: ${f.lines} lines`).join('\n'));
});

test('the measure counts a long function, a long method and a long arrow, and passes short ones', () => {
  const body = (n: number) => Array.from({ length: n }, (_, i) => `  const a${i} = ${i};`).join('\n');
  const text = `function long() {\n${body(70)}\n}\nfunction short() {\n${body(3)}\n}\nclass C {\n  m() {\n${body(65)}\n  }\n}\nconst arrow = () => {\n${body(61)}\n};\n`;
  const found = longFunctions('x.ts', text, MAX_LINES).map((f) => f.where.replace(/^x\.ts:\d+ /, ''));
  assert.deepEqual(found, ['long', 'm', 'arrow']);
});
