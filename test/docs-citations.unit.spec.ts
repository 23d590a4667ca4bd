// Unit: the sources cite only documents that are in the repository. The reasoning behind the estimators, losses
// and detectors lives in docs/ (docs/algorithms.md); a clone of the project alone must not hold dangling
// references to notes outside it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const SKIP = new Set(['node_modules', 'scratch', '.git', '.trajflow', 'test-artifacts', 'target']);
const SOURCE = /\.(ts|mts|mjs|js|wat|sql|py|java|md)$/;

function sources(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (SKIP.has(entry)) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...sources(path));
    else if (SOURCE.test(entry)) found.push(path);
  }
  return found;
}

test('no source or doc cites a note outside the repository; the algorithms page they cite exists', () => {
  const outside = /(?<![\w/])(ALGORITHMS|DESIGN|STYLE)\.md|\.\.\/shared\//g;
  const offenders: string[] = [];
  const self = fileURLToPath(import.meta.url);
  for (const file of sources(root).filter((f) => f !== self)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(outside)) offenders.push(`${relative(root, file)}: ${match[0]}`);
  }
  assert.deepEqual(offenders, [], 'cite docs/ instead');
  assert.ok(existsSync(join(root, 'docs', 'algorithms.md')));
  const cited = sources(root).filter((f) => readFileSync(f, 'utf8').includes('docs/algorithms.md'));
  assert.ok(cited.length > 10, `the sources cite docs/algorithms.md (${cited.length} files)`);
});
