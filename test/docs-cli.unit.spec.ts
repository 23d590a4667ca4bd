// Unit: docs/reference/cli.md is what the commands print for --help today. The page is generated
// (scripts/docs-cli.mjs) so that a flag added to a command shows up in the reference; this test fails when
// someone changes a usage line and forgets `npm run docs`.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

test("docs/reference/cli.md matches every command's --help (node scripts/docs-cli.mjs --check)", () => {
  // Sixteen short node processes, two at a time on two cores: ≈ 10 s.
  const result = spawnSync(process.execPath, ['scripts/docs-cli.mjs', '--check'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  assert.equal(result.status, 0, `${result.stderr}\nrun \`npm run docs\` and commit docs/reference/cli.md`);
});
