// Unit: docs/concepts/life-of-a-step.md follows one step through the code, stop by stop, naming the files and the
// functions in them — and code moves. A stop (a numbered item of "The main line", or an item of "Off the main line"
// that starts with a file) has a head before its " — ": file links, each followed by the names declared in that
// file, in backticks (`name`, or `Class.method` for a method). Checked here: every file the page links exists; every
// name of a head is declared in its file — a function, class, const, let or var, or a method inside that class's
// body (a name the file only imports or calls does not count); the main line is numbered 1 … n with n ≤ 30. The
// checker is first shown to catch a doctored page, so a test that passes is not one that cannot fail.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const PAGE = join(root, 'docs', 'concepts', 'life-of-a-step.md');
const MAX_STOPS = 30;
const MAIN_LINE = 'The main line';
const OFF_LINE = 'Off the main line';

interface Item {
  /** The section's heading. */
  readonly section: string;
  /** The item's number in a numbered list, else null. */
  readonly number: number | null;
  /** 1-based line of the item's first line. */
  readonly line: number;
  readonly text: string;
}

/** List items by section (continuation lines joined), outside fenced code. */
function itemsOf(markdown: string): Item[] {
  const items: { section: string; number: number | null; line: number; text: string }[] = [];
  let section = '';
  let fence: string | undefined;
  let open: (typeof items)[number] | undefined;
  for (const [i, line] of markdown.split('\n').entries()) {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      continue;
    }
    if (opener) {
      fence = opener;
      open = undefined;
      continue;
    }
    const heading = /^#{1,6}\s+(.*?)\s*$/.exec(line)?.[1];
    const numbered = /^(\d+)\.\s+(.*)$/.exec(line);
    const bullet = /^[-*+]\s+(.*)$/.exec(line);
    if (heading !== undefined) {
      section = heading;
      open = undefined;
    } else if (numbered) {
      open = { section, number: Number(numbered[1]), line: i + 1, text: numbered[2]! };
      items.push(open);
    } else if (bullet) {
      open = { section, number: null, line: i + 1, text: bullet[1]! };
      items.push(open);
    } else if (open && /^\s+\S/.test(line)) open.text += ` ${line.trim()}`;
    else open = undefined;
  }
  return items;
}

/** Relative link targets of the page (inline links outside fenced code), without their #anchors. */
function fileLinksOf(markdown: string): string[] {
  const prose = markdown.replace(/^\s*(`{3,}|~{3,})[\s\S]*?^\s*\1\s*$/gm, '');
  return [...prose.matchAll(/\]\(([^()\s]+)\)/g)].map((m) => m[1]!.split('#')[0]!).filter((target) => target !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

interface Head {
  readonly files: { readonly target: string; readonly names: string[] }[];
  readonly problems: string[];
}

/** A stop's head (before its " — "): each file link with the backticked names after it. */
function headOf(text: string): Head {
  const dash = text.indexOf(' — ');
  const head = dash < 0 ? text : text.slice(0, dash);
  const files: { target: string; names: string[] }[] = [];
  const problems: string[] = [];
  if (dash < 0) problems.push('no " — " after the head: say what happens there');
  for (const m of head.matchAll(/\[[^\]]*\]\(([^()\s]+)\)|(`+)([^`]+?)\2/g)) {
    if (m[1] !== undefined) files.push({ target: m[1], names: [] });
    else if (files.length === 0) problems.push(`\`${m[3]}\` comes before any file`);
    else files.at(-1)!.names.push(m[3]!.trim());
  }
  return { files, problems };
}

const IDENT = '[A-Za-z_$][\\w$]*';
const escaped = (name: string) => name.replace(/\$/g, '\\$');

/** Declared as a function, class, const, let or var (exported or not, at any depth). */
function declares(source: string, name: string): boolean {
  return new RegExp(`(?<![\\w$.])(?:function\\s*\\*?|class|const|let|var)\\s+${escaped(name)}(?![\\w$])`).test(source);
}

/**
 * `method` declared in the body of class `owner`: a line of the body that starts (after its indentation and
 * modifiers) with the name and its parameter list, and does not end in `;` (a call statement does). The body runs
 * from the class's declaration to the first line that is a lone `}` (a top-level class as the formatter writes it).
 */
function declaresMethod(source: string, owner: string, method: string): boolean {
  const start = new RegExp(`(?<![\\w$.])class\\s+${escaped(owner)}(?![\\w$])`).exec(source);
  if (!start) return false;
  const rest = source.slice(start.index);
  const end = /^\}/m.exec(rest);
  const body = end ? rest.slice(0, end.index) : rest;
  const modifiers = '(?:(?:public|private|protected|static|readonly|override|async|get|set)\\s+)*';
  return new RegExp(`^[ \\t]+${modifiers}\\*?${escaped(method)}\\s*(?:<[^()\\n]*>)?\\s*\\((?![^\\n]*;[ \\t]*$)`, 'm').test(body);
}

/** What is wrong with a page of this shape, [] when nothing. `pageDir`: where its relative links start. */
function lifeOfAStepProblems(markdown: string, pageDir: string): string[] {
  const problems: string[] = [];
  const where = (path: string) => relative(root, path).split('\\').join('/');
  for (const target of new Set(fileLinksOf(markdown))) {
    const path = resolve(pageDir, decodeURIComponent(target));
    if (!existsSync(path)) problems.push(`link ${target}: no such file (${where(path)})`);
  }
  const items = itemsOf(markdown);
  const main = items.filter((item) => item.section === MAIN_LINE && item.number !== null);
  if (main.length === 0) problems.push(`no numbered stops under "## ${MAIN_LINE}"`);
  if (main.length > MAX_STOPS) problems.push(`the main line has ${main.length} stops, more than ${MAX_STOPS}: merge some, or move a branch to "${OFF_LINE}"`);
  main.forEach((item, i) => {
    if (item.number !== i + 1) problems.push(`line ${item.line}: stop numbered ${item.number}, expected ${i + 1}`);
  });
  const stops = [...main, ...items.filter((item) => item.section === OFF_LINE && item.text.startsWith('['))];
  for (const stop of stops) {
    const label = stop.number === null ? `line ${stop.line} (off the main line)` : `stop ${stop.number} (line ${stop.line})`;
    const head = headOf(stop.text);
    for (const problem of head.problems) problems.push(`${label}: ${problem}`);
    if (head.files.length === 0) problems.push(`${label}: names no file`);
    if (head.files.every((file) => file.names.length === 0)) problems.push(`${label}: names no function, class or method`);
    for (const file of head.files) {
      const path = resolve(pageDir, decodeURIComponent(file.target.split('#')[0]!));
      if (!existsSync(path) || !statSync(path).isFile()) {
        if (file.names.length > 0) problems.push(`${label}: ${file.target} is not a file, so ${file.names.join(', ')} cannot be checked`);
        continue;
      }
      const source = readFileSync(path, 'utf8');
      for (const name of file.names) {
        const parts = new RegExp(`^(${IDENT})(?:\\.(${IDENT}))?$`).exec(name);
        if (!parts) problems.push(`${label}: \`${name}\` is not a name (write \`name\` or \`Class.method\`; other code goes after the " — ")`);
        else if (parts[2] === undefined ? !declares(source, name) : !declaresMethod(source, parts[1]!, parts[2])) {
          problems.push(`${label}: ${where(path)} declares no ${parts[2] === undefined ? name : `method ${parts[2]} in class ${parts[1]}`}`);
        }
      }
    }
  }
  return problems;
}

const pageDir = dirname(PAGE);
const stop = (n: number, head: string) => `${n}. ${head} — what happens there → what crosses.`;
const good = [
  '# Page',
  '',
  `## ${MAIN_LINE}`,
  '',
  stop(1, '[`processors/pipeline/processor.ts`](../../processors/pipeline/processor.ts) `startProcessors`, `stepConsumer`'),
  stop(2, '[`streams/step-publisher.ts`](../../streams/step-publisher.ts) `StepPublisher.publish` · [`schemas/codec.ts`](../../schemas/codec.ts) `EventCodec.encode`'),
  stop(
    3,
    '[`storage/sink/step-transcoder.ts`](../../storage/sink/step-transcoder.ts) `StepChunks.transcode` · [`web/static/run.js`](../../web/static/run.js) `renderRun`, `drawLearner`',
  ),
  '',
  `## ${OFF_LINE}`,
  '',
  '- [`learner/eval/evaluator.ts`](../../learner/eval/evaluator.ts) `startEvaluator` — the evaluator, `evaluations` (code after the dash is prose).',
].join('\n');

test('the checker passes a well-formed page and catches each kind of mistake', () => {
  assert.deepEqual(lifeOfAStepProblems(good, pageDir), []);
  const doctored = (from: string, to: string) => {
    assert.ok(good.includes(from), `the good page holds ${from}`);
    return lifeOfAStepProblems(good.replace(from, to), pageDir);
  };
  // A misspelt function, class, method, and one in the off-main-line list.
  assert.deepEqual(doctored('`startProcessors`', '`startProcesors`'), ['stop 1 (line 5): processors/pipeline/processor.ts declares no startProcesors']);
  assert.deepEqual(doctored('`StepPublisher.publish`', '`StepPublisher.publsh`'), ['stop 2 (line 6): streams/step-publisher.ts declares no method publsh in class StepPublisher']);
  assert.deepEqual(doctored('`StepChunks.transcode`', '`StepChunk.transcode`'), [
    'stop 3 (line 7): storage/sink/step-transcoder.ts declares no method transcode in class StepChunk',
  ]);
  assert.deepEqual(doctored('`startEvaluator`', '`startEvaluater`'), ['line 11 (off the main line): learner/eval/evaluator.ts declares no startEvaluater']);
  // A name the file imports and calls but does not declare; a method of another class the file calls.
  assert.deepEqual(doctored('(../../processors/pipeline/processor.ts)', '(../../processors/pipeline/command.ts)'), [
    'stop 1 (line 5): processors/pipeline/command.ts declares no startProcessors',
    'stop 1 (line 5): processors/pipeline/command.ts declares no stepConsumer',
  ]);
  assert.deepEqual(doctored('`StepPublisher.publish`', '`StepPublisher.send`'), ['stop 2 (line 6): streams/step-publisher.ts declares no method send in class StepPublisher']);
  // A file that is not there.
  assert.deepEqual(doctored('(../../schemas/codec.ts)', '(../../schemas/codecs.ts)'), [
    'link ../../schemas/codecs.ts: no such file (schemas/codecs.ts)',
    'stop 2 (line 6): ../../schemas/codecs.ts is not a file, so EventCodec.encode cannot be checked',
  ]);
  // Code in the head that is no name; a stop with no dash; a name before any file.
  assert.deepEqual(doctored('`stepConsumer`', '`trajflow processors`'), [
    'stop 1 (line 5): `trajflow processors` is not a name (write `name` or `Class.method`; other code goes after the " — ")',
  ]);
  assert.deepEqual(doctored(' — what happens there → what crosses.\n2.', ' what happens there.\n2.'), ['stop 1 (line 5): no " — " after the head: say what happens there']);
  assert.deepEqual(doctored('1. [`processors', '1. `startProcessors` [`processors'), ['stop 1 (line 5): `startProcessors` comes before any file']);
  // Numbering, and too many stops.
  assert.deepEqual(doctored('3. [`storage', '4. [`storage'), ['line 7: stop numbered 4, expected 3']);
  const long = [`## ${MAIN_LINE}`, ...Array.from({ length: MAX_STOPS + 1 }, (_, i) => stop(i + 1, '[`schemas/codec.ts`](../../schemas/codec.ts) `EventCodec`'))].join('\n');
  assert.deepEqual(lifeOfAStepProblems(long, pageDir), [`the main line has ${MAX_STOPS + 1} stops, more than ${MAX_STOPS}: merge some, or move a branch to "${OFF_LINE}"`]);
  assert.deepEqual(
    lifeOfAStepProblems(
      long
        .split('\n')
        .slice(0, MAX_STOPS + 1)
        .join('\n'),
      pageDir,
    ),
    [],
  );
});

test('the declaration checks tell a declaration from an import, a call, a longer name and another class', () => {
  const source = [
    "import { helper } from './helper.js';",
    'export async function startThing(x: number) {',
    '  helper(x);',
    '  return new Thing().run();',
    '}',
    'const shortName = 1;',
    'class Thing {',
    '  private async run<T extends object>(value?: T): Promise<void> {',
    '    this.other();',
    '    stop();',
    '  }',
    '  get size(): number {',
    '    return 0;',
    '  }',
    '}',
    'class Other {',
    '  walk(): void {}',
    '}',
  ].join('\n');
  assert.ok(declares(source, 'startThing'));
  assert.ok(declares(source, 'shortName'));
  assert.ok(declares(source, 'Thing'));
  assert.ok(!declares(source, 'helper'), 'imported and called, not declared');
  assert.ok(!declares(source, 'startThin'), 'a prefix of a declared name');
  assert.ok(!declares(source, 'short'));
  assert.ok(declaresMethod(source, 'Thing', 'run'));
  assert.ok(declaresMethod(source, 'Thing', 'size'));
  assert.ok(!declaresMethod(source, 'Thing', 'stop'), 'called in the body, not declared');
  assert.ok(!declaresMethod(source, 'Thing', 'other'));
  assert.ok(!declaresMethod(source, 'Thing', 'walk'), "another class's method");
  assert.ok(declaresMethod(source, 'Other', 'walk'));
  assert.ok(!declaresMethod(source, 'Missing', 'run'));
});

test('docs/concepts/life-of-a-step.md: its files exist, its names are declared there, the main line has at most 30 stops', () => {
  const markdown = readFileSync(PAGE, 'utf8');
  const stops = itemsOf(markdown).filter((item) => item.section === MAIN_LINE && item.number !== null);
  assert.ok(stops.length >= 10, `the main line has its stops (${stops.length} found)`);
  const named = stops.flatMap((s) => headOf(s.text).files.flatMap((f) => f.names));
  assert.ok(named.length >= stops.length, `the stops name functions (${named.length} names)`);
  assert.deepEqual(lifeOfAStepProblems(markdown, dirname(PAGE)), []);
});
