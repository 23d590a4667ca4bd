// Unit: the packed package carries every source folder, so its CLI (bin/trajflow.mjs runs the TypeScript
// sources through tsx) finds every module bin/main.ts loads. package.json "files" names the folders one by one; a
// new top-level folder of sources that is not added there is missing from the tarball, which only the pack test
// (test/sdk/pack.e2e.spec.ts) would otherwise notice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../core/config.js';

/** Folders that are not part of the package: tests, docs, examples, build tools, build output, dependencies, state. */
const NOT_PACKED = new Set(['test', 'docs', 'examples', 'scripts', 'dist', 'node_modules', 'patches', 'scratch', 'test-artifacts']);

function holdsSources(dir: string): boolean {
  return readdirSync(dir).some((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? holdsSources(path) : /\.(ts|mjs|js)$/.test(entry);
  });
}

test('package.json "files" lists every top-level folder of sources', () => {
  const files = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { files: string[] }).files;
  const folders = readdirSync(projectRoot).filter(
    (entry) => !entry.startsWith('.') && !NOT_PACKED.has(entry) && statSync(join(projectRoot, entry)).isDirectory() && holdsSources(join(projectRoot, entry)),
  );
  assert.ok(folders.includes('streams') && folders.includes('bin'), folders.join(', '));
  const missing = folders.filter((folder) => !files.includes(`${folder}/`));
  assert.deepEqual(missing, [], `add ${missing.map((f) => `"${f}/"`).join(', ')} to "files" in package.json`);
  assert.ok(files.includes('dist/'), 'the built SDK is packed');
});
