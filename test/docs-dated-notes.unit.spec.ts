// Unit: reference pages state how things are, and dated measurements live only under docs/results (issue #40).
// A page under docs/reference, docs/concepts or docs/guides, or docs/getting-started.md, fails here when its prose
// carries an ISO date (YYYY-MM-DD): "measured 2026-12-02 on …", "until 2026-11-30 it did …". Dates in link targets
// (a results page's dated heading), code blocks, inline code and HTML comments are not prose. And CHANGELOG.md keeps
// the Keep a Changelog 1.1.0 shape: its header, an [Unreleased] section, then versions newest first as
// `## [x.y.z] - YYYY-MM-DD`, each with only Keep a Changelog's subsections, one line per change. Each checker is
// first shown to catch a bad page, so a test that passes is not one that cannot fail.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { proseOutsideCode } from './helpers/markdown.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The pages that state how things are: every Markdown file under these folders, and getting-started. */
function referencePages(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return walk(path);
      return entry.endsWith('.md') ? [path] : [];
    });
  return [...['reference', 'concepts', 'guides'].flatMap((d) => walk(join(root, 'docs', d))), join(root, 'docs', 'getting-started.md')];
}

const isoDate = /(?<![\d-])(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?![\d])/g;

/** Blank out what is not prose — fenced code blocks, HTML comments, inline code, link targets — keeping line numbers. */
function proseLines(markdown: string): string[] {
  const blank = (text: string) => text.replace(/[^\n]/g, ' ');
  return proseOutsideCode(markdown, { keepColumns: true })
    .replace(/\]\([^)\s]*(?:\s+"[^"]*")?\)/g, (link) => `]${blank(link.slice(1))}`)
    .replace(/^(\s{0,3}\[[^\]]+\]:)\s*\S+.*$/gm, '$1')
    .replace(/<(?:https?|mailto):[^>\s]+>/g, blank)
    .split('\n');
}

/** Every ISO date in a page's prose, with its line number (1-based) and the line as written. */
function datesInProse(markdown: string): { line: number; date: string; text: string }[] {
  const written = markdown.split('\n');
  return proseLines(markdown).flatMap((line, i) => [...line.matchAll(isoDate)].map((m) => ({ line: i + 1, date: m[0], text: written[i]! })));
}

test('the date check finds a date in prose, and none in link targets, code or comments', () => {
  const page = [
    '# Page',
    'Measured 2026-12-02 on the 2-core VM.',
    'See [the run](../results/processors.md#2026-12-01-2250-utc) and <https://example.org/2026-12-01>.',
    '`scale-2026-12-05T001030Z.json` and a comment <!-- 2026-11-29 -->',
    '```sh',
    'trajflow bench scale --save   # writes docs/results/scale-2026-12-05T001030Z.json',
    '```',
    '[ref]: ../results/sink.md#2026-11-29',
    'until 2026-11-30 it did otherwise; [the 2026-11-29 run](sink.md) too',
    'version 1.2.3, ports 19092-19093, 2026-13-01 is no date',
  ].join('\n');
  assert.deepEqual(
    datesInProse(page).map(({ line, date }) => `${line}:${date}`),
    ['2:2026-12-02', '9:2026-11-30', '9:2026-11-29'],
  );
  assert.deepEqual(datesInProse('```\n2026-12-02\n```\nafter the block 2026-12-03\n'), [{ line: 4, date: '2026-12-03', text: 'after the block 2026-12-03' }]);
});

test('reference, concept and guide pages carry no dated notes (dated measurements belong in docs/results)', () => {
  const problems: string[] = [];
  for (const file of referencePages()) {
    const where = relative(root, file).split('\\').join('/');
    for (const { line, date, text } of datesInProse(readFileSync(file, 'utf8'))) {
      problems.push(`${where}:${line}: ${date} in "${text.trim()}" — state how things are, and move the measurement to a docs/results page (link it)`);
    }
  }
  assert.deepEqual(problems, []);
});

const subsections = new Set(['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security']);

/** What keeps a changelog from the Keep a Changelog 1.1.0 shape, or [] when it has it. */
function changelogProblems(markdown: string, packageVersion?: string): string[] {
  const problems: string[] = [];
  const lines = markdown.split('\n');
  if (lines[0] !== '# Changelog') problems.push('line 1: the title is "# Changelog"');
  const firstSection = lines.findIndex((l) => l.startsWith('## '));
  const header = lines.slice(0, firstSection < 0 ? lines.length : firstSection).join('\n');
  if (!/\]\(https:\/\/keepachangelog\.com\/en\/1\.1\.0\/?\)/.test(header)) problems.push('the header names the format: [Keep a Changelog](https://keepachangelog.com/en/1.1.0/)');
  if (firstSection < 0 || lines[firstSection] !== '## [Unreleased]') problems.push('the first section is "## [Unreleased]"');

  const versions: { version: number[]; date: string; line: number }[] = [];
  let section: string | undefined;
  let subsection: string | undefined;
  let seen = new Set<string>();
  let entries = 0;
  const closeSection = (line: number) => {
    if (section && section !== '[Unreleased]' && entries === 0) problems.push(`line ${line}: ${section} lists no change`);
  };
  for (const [i, line] of lines.entries()) {
    const n = i + 1;
    if (i < firstSection || firstSection < 0) continue;
    if (line.startsWith('## ')) {
      closeSection(n);
      section = line.slice(3);
      subsection = undefined;
      seen = new Set();
      entries = 0;
      if (section === '[Unreleased]') {
        if (n !== firstSection + 1) problems.push(`line ${n}: [Unreleased] comes first, once`);
        continue;
      }
      const m = /^\[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})$/.exec(section);
      if (!m) {
        problems.push(`line ${n}: a version heading is "## [x.y.z] - YYYY-MM-DD": ${line}`);
        continue;
      }
      const date = m[4]!;
      if (Number.isNaN(Date.parse(`${date}T00:00:00Z`)) || new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date) problems.push(`line ${n}: no such date ${date}`);
      versions.push({ version: [Number(m[1]), Number(m[2]), Number(m[3])], date, line: n });
    } else if (line.startsWith('### ')) {
      subsection = line.slice(4);
      if (!section) problems.push(`line ${n}: ${line} outside a version`);
      if (!subsections.has(subsection)) problems.push(`line ${n}: "${line}" — a subsection is one of ${[...subsections].join(', ')}`);
      if (seen.has(subsection)) problems.push(`line ${n}: ${subsection} twice in ${section}`);
      seen.add(subsection);
    } else if (line.startsWith('#')) {
      problems.push(`line ${n}: only "## " versions and "### " subsections below the header: ${line}`);
    } else if (line.trim() !== '') {
      if (!subsection) problems.push(`line ${n}: text under ${section} outside a subsection: ${line}`);
      else if (!line.startsWith('- ')) problems.push(`line ${n}: one line per change, each "- …" on a single line: ${line}`);
      else {
        entries++;
        if (/\b\d{1,2}:\d{2}\b/.test(line)) problems.push(`line ${n}: a change carries no time of day (the version has the date): ${line}`);
        if (new RegExp(isoDate.source).test(line)) problems.push(`line ${n}: a change carries no date (the version has it; dated measurements go to docs/results): ${line}`);
      }
    }
  }
  closeSection(lines.length);
  for (const [k, v] of versions.entries()) {
    const older = versions[k + 1];
    if (!older) continue;
    const newer = v.version.findIndex((x, j) => x !== older.version[j]);
    if (newer < 0 || v.version[newer]! < older.version[newer]!)
      problems.push(`line ${older.line}: versions go newest first (${older.version.join('.')} after ${v.version.join('.')})`);
    if (v.date < older.date) problems.push(`line ${older.line}: dates go newest first (${older.date} after ${v.date})`);
  }
  if (packageVersion !== undefined && versions[0] && versions[0].version.join('.') !== packageVersion) {
    problems.push(`the newest version ${versions[0].version.join('.')} is not package.json's ${packageVersion}`);
  }
  return problems;
}

test('the changelog check accepts the shape and catches each way out of it', () => {
  const good = [
    '# Changelog',
    '',
    'Based on [Keep a Changelog](https://keepachangelog.com/en/1.1.0/).',
    '',
    '## [Unreleased]',
    '',
    '## [0.2.0] - 2026-12-02',
    '',
    '### Added',
    '',
    '- A thing.',
    '',
    '### Fixed',
    '',
    '- A bug.',
    '',
    '## [0.1.0] - 2026-11-29',
    '',
    '### Added',
    '',
    '- The start.',
  ];
  assert.deepEqual(changelogProblems(good.join('\n'), '0.2.0'), []);
  const bad = (edit: (lines: string[]) => void) => {
    const lines = [...good];
    edit(lines);
    return changelogProblems(lines.join('\n'), '0.2.0');
  };
  const fails = (edit: (lines: string[]) => void, pattern: RegExp) => {
    const problems = bad(edit);
    assert.ok(
      problems.some((p) => pattern.test(p)),
      `expected ${pattern} among ${JSON.stringify(problems)}`,
    );
  };
  fails((l) => (l[0] = '# Changes'), /title/);
  fails((l) => (l[2] = 'What changed, when, and what was measured.'), /header names the format/);
  fails((l) => l.splice(4, 2), /first section is "## \[Unreleased\]"/);
  fails((l) => (l[6] = '## 2026-12-02'), /version heading/);
  fails((l) => (l[6] = '## [0.2.0]'), /version heading/);
  fails((l) => (l[6] = '## [0.2.0] - 2026-02-30'), /no such date/);
  fails((l) => (l[12] = '### Measured'), /a subsection is one of/);
  fails((l) => (l[12] = '### Added'), /Added twice/);
  fails((l) => (l[12] = '#### Fixed'), /only "## " versions/);
  fails((l) => l.splice(11, 0, '  and how it was measured at 05:40.'), /one line per change/);
  fails((l) => (l[10] = '- A thing (05:40–06:05).'), /time of day/);
  fails((l) => (l[10] = '- Measured 2026-12-02 on the 2-core VM.'), /carries no date/);
  fails((l) => (l[8] = 'Some narrative.'), /outside a subsection/);
  fails((l) => l.splice(8, 7), /lists no change/);
  fails((l) => (l[16] = '## [0.3.0] - 2026-11-29'), /versions go newest first/);
  fails((l) => (l[16] = '## [0.1.0] - 2026-12-05'), /dates go newest first/);
  assert.ok(changelogProblems(good.join('\n'), '0.3.0').some((p) => /package\.json/.test(p)));
});

test('CHANGELOG.md has the Keep a Changelog shape, its newest version the one in package.json', () => {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  assert.deepEqual(changelogProblems(readFileSync(join(root, 'CHANGELOG.md'), 'utf8'), version), []);
});
