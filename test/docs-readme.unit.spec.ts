// Unit: README.md stays an entrance — short enough to read (≤ 25,000 bytes; the detail lives in docs/) — and its
// command table names exactly the commands of bin/main.ts, so a command added or removed shows up in the README.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const readme = readFileSync(new URL('../README.md', import.meta.url));

test('README.md is at most 25,000 bytes', () => {
  assert.ok(readme.length <= 25_000, `README.md is ${readme.length} bytes: move detail to a docs/ page and link it`);
});

test("README's command table lists exactly the commands of bin/main.ts", () => {
  const main = readFileSync(`${root}bin/main.ts`, 'utf8');
  const table = main.slice(main.indexOf('const commands'), main.indexOf('};', main.indexOf('const commands')));
  const commands = [...table.matchAll(/^\s+(\w+): async \(\) =>/gm)].map((m) => m[1]!).sort();
  assert.ok(commands.length >= 10, `found the command table in bin/main.ts (${commands.join(', ')})`);
  const listed = [...readme.toString().matchAll(/^\| `trajflow (\w+)[^`]*` \|/gm)].map((m) => m[1]!).sort();
  assert.deepEqual(listed, commands, 'one README row per command: | `trajflow <command>` | what it does |');
});
