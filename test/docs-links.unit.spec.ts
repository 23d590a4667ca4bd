// Unit: every relative link in README.md, CHANGELOG.md and docs/**/*.md points at a file of the repository, and
// every `#anchor` into a Markdown file at one of its headings (GitHub's slugs). The documentation moved out of
// the README into docs/, and pages and folders keep moving; a dead link is found here instead of by a reader.
// External http(s) links are not fetched (the tests run without network), only checked to be well-formed URLs.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { proseOutsideCode } from './helpers/markdown.js';

const root = fileURLToPath(new URL('..', import.meta.url));

function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return walk(path);
      return entry.endsWith('.md') ? [path] : [];
    });
  // Every Markdown page the repository holds: the entrance, the changelog, docs/, and the READMEs beside code.
  return [join(root, 'README.md'), join(root, 'CHANGELOG.md'), join(root, 'detectors', 'README.md'), join(root, 'examples', 'python', 'README.md'), ...walk(join(root, 'docs'))];
}

/** The text outside fenced code blocks, inline code spans and HTML comments: links there are not links. */
const proseOf = (markdown: string): string => proseOutsideCode(markdown);

/** Link targets: inline links and images, reference definitions, autolinks. */
function linksOf(markdown: string): string[] {
  const prose = proseOf(markdown);
  const targets: string[] = [];
  for (const m of prose.matchAll(/\]\(\s*<?([^()\s>]+(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) targets.push(m[1]!);
  for (const m of prose.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/gm)) targets.push(m[1]!);
  for (const m of prose.matchAll(/<((?:https?|mailto):[^>\s]+)>/g)) targets.push(m[1]!);
  return targets;
}

/** GitHub's anchor of a heading: its text without markup, lower case, punctuation dropped, spaces to hyphens. */
function slugOf(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/\*+/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown file offers: its headings' slugs (repeats get -1, -2 …) and explicit HTML ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined;
      continue;
    }
    if (opener) {
      fence = opener;
      continue;
    }
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const base = slugOf(heading);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

function problemsOf(file: string): string[] {
  const problems: string[] = [];
  const markdown = readFileSync(file, 'utf8');
  const where = relative(root, file);
  for (const target of linksOf(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      if (/^mailto:/i.test(target)) continue;
      if (!/^https?:\/\//i.test(target)) {
        problems.push(`${where}: ${target}: only http(s) and mailto links may leave the repository`);
        continue;
      }
      try {
        const url = new URL(target);
        if (!url.hostname.includes('.') && url.hostname !== 'localhost') problems.push(`${where}: ${target}: no such host name`);
      } catch {
        problems.push(`${where}: ${target}: not a well-formed URL`);
      }
      continue;
    }
    const [pathPart = '', anchor] = target.split('#', 2);
    let path: string;
    try {
      path = decodeURIComponent(pathPart);
    } catch {
      problems.push(`${where}: ${target}: bad percent-encoding`);
      continue;
    }
    const resolved = path === '' ? file : path.startsWith('/') ? join(root, path) : resolve(dirname(file), path);
    const inRepo = relative(root, resolved);
    if (inRepo.startsWith(`..${sep}`) || inRepo === '..') {
      problems.push(`${where}: ${target}: points outside the repository`);
      continue;
    }
    if (!existsSync(resolved)) {
      problems.push(`${where}: ${target}: no such file (${inRepo})`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) {
      problems.push(`${where}: ${target}: no heading with the anchor #${anchor} in ${inRepo}`);
    }
  }
  return problems;
}

test('every relative link in README.md, CHANGELOG.md and docs/ resolves (file, and heading for #anchors)', () => {
  const files = markdownFiles();
  assert.ok(files.length > 10, `the docs tree has its pages (${files.length} found)`);
  const problems = files.flatMap(problemsOf);
  assert.deepEqual(problems, [], `dead or malformed links:\n${problems.join('\n')}`);
});

test('the link check sees what it should: code is not prose, GitHub slugs, repeated headings', () => {
  assert.deepEqual(linksOf('see [a](docs/a.md#x) and `[b](nope.md)`\n```\n[c](nope.md)\n```\n[d]: ../d.md\n<https://example.org/x>'), [
    'docs/a.md#x',
    '../d.md',
    'https://example.org/x',
  ]);
  assert.equal(slugOf('The `trajflow train` command: flags, presets & resume'), 'the-trajflow-train-command-flags-presets--resume');
  assert.equal(slugOf('2026-12-02'), '2026-12-02');
  assert.equal(slugOf('`policy_shift_spike` (2026-11-30)'), 'policy_shift_spike-2026-11-30');
  assert.deepEqual([...anchorsOf('# A\n## A\n```\n# B\n```\n## Ω 3 × 4')], ['a', 'a-1', 'ω-3--4']);
});
