// Unit: code says what and why; results live in docs/results and history in git. No comment in the product's
// sources cites a date, a run count, a machine, an issue number or a file outside the repository: a comment states
// the intent in a sentence, and the figures it rests on are on the results page it links. Only comments are read
// (through the TypeScript parser), so string literals and data — fixture ids with dates in them — are not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Not the product's sources: dependencies, tests, docs, build output, generated code, untracked notes, data. */
const SKIP = new Set(['node_modules', 'test', 'docs', 'dist', 'generated', 'scratch', 'test-artifacts', 'target', 'patches']);
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
/** Generated (scripts/build-wasm-kernels.mjs); the comment it carries is written by that script. */
const GENERATED = /\.wasm\.ts$/;

const N = '(?:\\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|January|February|March|April|June|July|August|September|October|November|December)';

interface Rule {
  readonly name: string;
  readonly why: string;
  readonly pattern: RegExp;
}

const RULES: readonly Rule[] = [
  {
    name: 'date',
    why: 'a date is history: git has it, and a result keeps its date on its results page',
    // ISO dates and months (2026-11-30, 2026-12, 2026-12-02T155016Z), but not the JSON Schema dialect named "2020-12".
    pattern: new RegExp(
      [
        '(?<!(?:Schema|draft)\\W{0,3})\\b20\\d{2}-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\\d|3[01]))?(?!\\d)',
        `\\b${MONTH}\\.? (?:\\d{1,2}(?:st|nd|rd|th)?|20\\d{2})(?!\\d)`,
        `\\b\\d{1,2}(?:st|nd|rd|th)? ${MONTH}\\b`,
        '\\b\\d{1,2}/\\d{1,2}/20\\d{2}\\b',
      ].join('|'),
      'g',
    ),
  },
  {
    name: 'run count',
    why: 'how many runs showed something is a measurement: it belongs on the results page with its runs',
    // "1 of 7 full runs", "in 3 runs", "those four seed-1 runs", "two runs side by side", "runs minutes apart".
    // Saying what a bench does ("two in-process training runs with identical seeds") is not a count of runs seen.
    pattern: new RegExp(
      [
        `\\b${N} (?:out )?of (?:the |those |these |its |all )?${N} (?:[\\w-]+ ){0,2}runs?\\b`,
        `\\b(?:in|over|across|after|from|of|those|these) (?:(?:all|both|the|those|these) )?${N} (?:[\\w-]+ ){0,2}runs\\b`,
        `\\b(?:${N}|both) (?:[\\w-]+ )?runs (?:were |ran )?side by side\\b`,
        '\\bruns? (?:[\\w-]+ ){0,2}(?:seconds|minutes|hours|days) apart\\b',
        `(?:≈|~|\\babout|\\bsome|\\bnearly|\\balmost) ?${N} (?:\\S+ ){0,3}runs\\b`,
      ].join('|'),
      'gi',
    ),
  },
  {
    name: 'machine',
    why: 'the machine a figure was measured on belongs beside the figure on its results page',
    // The host described (a 2-core VM, a CPU model, "this shared machine"). A core count as the CPU budget the
    // design targets ("on 2 cores the worker's messages do not wait") is a design statement and passes, and so
    // does "this machine" for the local host (addresses only this machine can reach, a cluster on this machine).
    pattern: new RegExp(
      [
        '\\b(?:\\d+|one|two|four|eight|single|dual|quad)[- ]core (?:VM|machine|box|host|server|laptop|instance|runner)s?\\b',
        '\\bVMs?\\b',
        '\\b(?:AMD|Intel|EPYC|Xeon|Ryzen|Threadripper|Graviton|Neoverse|Apple M[1-9]|Core i[3579])\\b',
        '\\bthis (?:shared|loaded|noisy|busy|slow|fast) (?:machine|box|host)\\b',
        '\\bthis (?:box|laptop|workstation)\\b',
        '\\b(?:my|our) (?:[\\w-]+ )?(?:machine|laptop|box|host|workstation)\\b',
      ].join('|'),
      'g',
    ),
  },
  {
    name: 'issue number',
    why: 'an issue or task number means nothing to a reader of the code; say what the code does instead',
    // "#39", "issue 40", "task 12" — not "tasks 1, 2, 3" or a "--tasks 200" flag, not a "#anchor" or "§3".
    pattern: /(?<![\w&#/])#\d+\b|\b(?:[Ii]ssue|[Tt]icket|[Bb]ug|PR|[Pp]ull request|[Tt]ask) #?\d+\b|\bGH-\d+\b/g,
  },
  {
    name: 'outside path',
    why: 'a file outside the repository is not in a reader’s clone; cite docs/ instead',
    // A parent path, the untracked scratch/ folder, an absolute path into someone's machine, and a Markdown file
    // the repository does not hold (see markdownOutside). ~/.cache and /proc are paths the product itself uses.
    pattern: /(?<![\w.])\.\.\/|(?<![\w/.-])scratch\/|(?<![\w.~])\/(?:tmp|home|Users|root|mnt|work)\//g,
  },
];

interface Offence {
  readonly line: number;
  readonly rule: string;
  readonly match: string;
  readonly text: string;
}

/** Every comment of a source file: its text and the 1-based line it starts on. */
function commentsOf(file: string, text: string): { readonly line: number; readonly text: string }[] {
  const kind = /\.(m|c)?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const found = new Map<number, { line: number; text: string }>();
  // Every comment is in the trivia before some token: walking every token (getChildren) reaches each one. The
  // trivia's comments on the line of the token before it are its "trailing" ones, those after a line break "leading".
  const visit = (node: ts.Node): void => {
    for (const range of [...(ts.getTrailingCommentRanges(text, node.pos) ?? []), ...(ts.getLeadingCommentRanges(text, node.pos) ?? [])]) {
      if (!found.has(range.pos)) found.set(range.pos, { line: source.getLineAndCharacterOfPosition(range.pos).line + 1, text: text.slice(range.pos, range.end) });
    }
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...found.values()].sort((a, b) => a.line - b.line);
}

/**
 * The Markdown files a comment cites that the repository does not hold: a path from the root or from the file's
 * folder, or a bare name some page of the repository has (scripts name "benchmarks.md" beside docs/results/).
 */
function markdownOutside(file: string, comment: string, pages: ReadonlySet<string>): string[] {
  const names = new Set([...pages].map((page) => basename(page)));
  // A placeholder such as docs/results/<bench>-runs.md names no file.
  const cited = [...comment.matchAll(/(?<![\w./<>{}*$-])((?:[\w.-]+\/)*[\w.-]+\.md)\b/g)].map((m) => m[1]!);
  return cited.filter((path) => {
    if (!path.includes('/')) return !names.has(path);
    return !pages.has(normalize(path)) && !pages.has(normalize(join(dirname(file), path)));
  });
}

/** The offences in one file's comments, one per match, on the line of the comment the match is on. */
function offencesIn(file: string, text: string, pages: ReadonlySet<string>): Offence[] {
  const offences: Offence[] = [];
  for (const comment of commentsOf(file, text)) {
    comment.text.split('\n').forEach((lineText, i) => {
      const line = comment.line + i;
      for (const rule of RULES) {
        for (const m of lineText.matchAll(rule.pattern)) offences.push({ line, rule: rule.name, match: m[0], text: lineText.trim() });
      }
      for (const path of markdownOutside(file, lineText, pages)) offences.push({ line, rule: 'outside path', match: path, text: lineText.trim() });
    });
  }
  return offences;
}

function walk(dir: string, keep: (entry: string) => boolean): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (!SKIP.has(entry) && !entry.startsWith('.')) found.push(...walk(path, keep));
    } else if (keep(entry)) found.push(relative(root, path));
  }
  return found;
}

const markdownPages = (): Set<string> => {
  const pages = walk(root, (entry) => entry.endsWith('.md'));
  // docs/ is skipped as a source folder, not as a place pages live in.
  const docs = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('.md'));
  return new Set([...pages, ...docs.map((p) => join('docs', p))]);
};

test('no comment in the sources cites a date, a run count, a machine, an issue number or a file outside the repository', () => {
  const pages = markdownPages();
  const files = walk(root, (entry) => SOURCE.test(entry) && !GENERATED.test(entry));
  assert.ok(
    files.length > 300 && files.includes('web/static/app.js') && files.includes('scripts/docs-cli.mjs') && files.includes('.dependency-cruiser.cjs'),
    `${files.length} files`,
  );
  const offences: string[] = [];
  for (const file of files) {
    for (const o of offencesIn(file, readFileSync(join(root, file), 'utf8'), pages)) offences.push(`${file}:${o.line} [${o.rule}] "${o.match}" in: ${o.text}`);
  }
  const why = RULES.map((r) => `${r.name}: ${r.why}`).join('\n');
  assert.deepEqual(offences, [], `${offences.join('\n')}\n\nSay the intent in a sentence; move the figures to docs/results.\n${why}`);
});

test('the scanner reads comments only, and each rule catches its cases and passes legitimate comments', () => {
  const pages = new Set(['README.md', 'docs/results/processors.md', 'docs/algorithms.md', 'detectors/README.md']);
  const scan = (source: string, file = 'x/y.ts') => offencesIn(file, source, pages).map((o) => `${o.line} ${o.rule}: ${o.match}`);
  // Spelled in pieces: test/docs-citations.unit.spec.ts reads this file's text too.
  const outsideNote = ['DESIGN', 'md'].join('.');
  const sharedNotes = ['..', 'shared', 'notes'].join('/');
  const bad = [
    '// measured 2026-11-30 with a warm cache',
    '/* it flipped on Nov 30 and again in 2026-12 */',
    '/** the sink fell behind in 1 of 7 full runs */',
    '// seen in 3 runs; the default was chosen from those four seed-1 runs',
    '// two runs side by side; the ceiling moved between runs minutes apart; ≈ 90 `bench processors` runs left 53 GB',
    '// 6.5 µs per add (AMD EPYC 2-core VM); slower on this shared machine',
    '// the cap the issue asks for (#39), see issue 40 and task 12',
    `// from ${sharedNotes}, scratch/adam-check.mts, /tmp/p and ${outsideNote}`,
  ].join('\n');
  assert.deepEqual(scan(bad), [
    '1 date: 2026-11-30',
    '2 date: Nov 30',
    '2 date: 2026-12',
    '3 run count: 1 of 7 full runs',
    '4 run count: in 3 runs',
    '4 run count: from those four seed-1 runs',
    '5 run count: two runs side by side',
    '5 run count: runs minutes apart',
    '5 run count: ≈ 90 `bench processors` runs',
    '6 machine: AMD',
    '6 machine: EPYC',
    '6 machine: 2-core VM',
    '6 machine: this shared machine',
    '7 issue number: #39',
    '7 issue number: issue 40',
    '7 issue number: task 12',
    '8 outside path: ../',
    '8 outside path: scratch/',
    '8 outside path: /tmp/',
    `8 outside path: ${outsideNote}`,
  ]);
  const fine = [
    "const id = 'run-2026-11-30/g1'; // a fixture id's date is data, and so is the string's",
    `const note = 'seen in 3 runs on a 2-core VM (#39), ${sharedNotes}';`,
    '/** A JSON Schema (2020-12, OpenAPI 3.1 dialect); Hilton et al. 2021 */',
    '// Two in-process training runs with identical seeds; Training tasks 1, 2, 3; [--tasks 200] [--seeds 1,2,3]',
    "// on 2 cores the worker's messages do not wait behind GC helpers; addresses only this machine can reach",
    '// docs/results/processors.md#node-flags, docs/algorithms.md §3 step 4, detectors/README.md, README.md, docs/results/<bench>-runs.md',
    '// trained from scratch; reading /proc per sample; default ~/.cache/trajflow; group closed with 1 of 8 (minimum 2)',
  ].join('\n');
  assert.deepEqual(scan(fine), []);
  const inTemplate = ['// measured on Dec 2', `export const a = \`${'$'}{/* 2026-12-02 */ 1}\`; // on a 2-core VM`, 'f(1, /* #40 */ 2);', ''].join('\n');
  assert.deepEqual(scan(inTemplate, 'x/y.mjs'), ['1 date: Dec 2', '2 date: 2026-12-02', '2 machine: 2-core VM', '3 issue number: #40']);
  assert.deepEqual(scan('// see ../README.md\n', 'x/y.ts'), ['1 outside path: ../']);
});
