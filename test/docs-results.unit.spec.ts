// Unit: the generated results pages (docs/results/<bench>-runs.md) show exactly the figures of the JSON files
// beside them. The pages are generated so that no figure is retyped; this fails when a JSON file was added or
// changed without `npm run docs`, and proves the check notices a changed figure and an orphaned page.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const results = join(root, 'docs', 'results');

function generator(...args: string[]) {
  return spawnSync(process.execPath, ['scripts/docs-results.mjs', ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
}

test('docs/results: every generated page is up to date with the JSON files (node scripts/docs-results.mjs --check)', () => {
  const result = generator('--check');
  assert.equal(result.status, 0, `${result.stderr}`);
  assert.ok(readdirSync(results).includes('learning-runs.md'), 'the learning results have their generated page');
});

test('the check fails on a changed figure and on a page whose JSON files are gone', () => {
  const copy = mkdtempSync(join(tmpdir(), 'trajflow-results-'));
  try {
    cpSync(results, copy, { recursive: true });
    assert.equal(generator('--check', '--dir', copy).status, 0);
    const file = readdirSync(copy).find((f) => f.startsWith('learning-real-') && f.endsWith('.json'))!;
    const json = JSON.parse(readFileSync(join(copy, file), 'utf8'));
    json.results[0].real.curve.at(-1).heldOut = 0.99;
    writeFileSync(join(copy, file), JSON.stringify(json));
    assert.equal(generator('--check', '--dir', copy).status, 1, 'a changed held-out figure makes the page stale');
    assert.equal(generator('--dir', copy).status, 0);
    assert.match(readFileSync(join(copy, 'learning-runs.md'), 'utf8'), /0\.99/);
    for (const f of readdirSync(copy).filter((name) => name.endsWith('.json'))) rmSync(join(copy, f));
    const orphaned = generator('--check', '--dir', copy);
    assert.equal(orphaned.status, 1);
    assert.match(orphaned.stderr, /learning-runs\.md was generated from JSON files that are gone/);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});
