// Unit: the start-up self-check refuses a kafkajs without the read_committed fix. The shipped kafkajs 2.2.4
// filter is rebuilt from patches/kafkajs+2.2.4.patch (its removed and context lines of that file) into a temp
// directory beside kafkajs' own utils/long.js, and the check must throw on it, saying to run `npm install`;
// on the installed (patched) kafkajs it must pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { abortedFilterIsCorrect, assertKafkajsPatched, type AbortedFilter } from '../../streams/kafkajs-self-check.js';

const require = createRequire(import.meta.url);
const FILTER = 'src/consumer/filterAbortedMessages.js';
const PATCH = fileURLToPath(new URL('../../patches/kafkajs+2.2.4.patch', import.meta.url));

/** The file's text before (`-` and context lines) and after (`+` and context lines) the patch's hunks for it. */
function sidesOfPatch(relative: string): { before: string; after: string } {
  const sections = readFileSync(PATCH, 'utf8').split(/^diff --git /m);
  const section = sections.find((s) => s.startsWith(`a/node_modules/kafkajs/${relative} `));
  assert.ok(section, `the patch changes ${relative}`);
  const body = section.split('\n').slice(section.split('\n').findIndex((line) => line.startsWith('@@')));
  assert.equal(body.filter((line) => line.startsWith('@@ -1,')).length, 1, 'one hunk from line 1: the whole file');
  const before: string[] = [];
  const after: string[] = [];
  for (const line of body.slice(1)) {
    if (line.startsWith('\\')) continue; // "\ No newline at end of file"
    if (line.startsWith('-') || line.startsWith(' ')) before.push(line.slice(1));
    if (line.startsWith('+') || line.startsWith(' ')) after.push(line.slice(1));
  }
  return { before: before.join('\n'), after: after.join('\n') };
}

test('the installed kafkajs passes the self-check and carries the patch file', () => {
  const installed = require.resolve(`kafkajs/${FILTER}`);
  assert.equal(abortedFilterIsCorrect(require(installed) as AbortedFilter), true);
  assert.doesNotThrow(() => assertKafkajsPatched());
  assert.equal(readFileSync(installed, 'utf8').trimEnd(), sidesOfPatch(FILTER).after.trimEnd(), 'node_modules/kafkajs is the patched file');
});

test('the shipped kafkajs 2.2.4 filter fails the self-check with an error that says to run npm install', () => {
  const root = mkdtempSync(join(tmpdir(), 'trajflow-kafkajs-unpatched-'));
  try {
    mkdirSync(join(root, 'src', 'consumer'), { recursive: true });
    mkdirSync(join(root, 'src', 'utils'));
    copyFileSync(require.resolve('kafkajs/src/utils/long.js'), join(root, 'src', 'utils', 'long.js'));
    const shipped = join(root, FILTER);
    writeFileSync(shipped, `${sidesOfPatch(FILTER).before}\n`);
    assert.equal(abortedFilterIsCorrect(require(shipped) as AbortedFilter), false, 'the shipped filter keeps a record of the second aborted transaction');
    assert.throws(
      () => assertKafkajsPatched(shipped),
      (error: Error & { code?: string }) =>
        error.code === 'KAFKA_CLIENT_UNPATCHED' && /Run `npm install`/.test(error.message) && error.message.includes('patches/kafkajs+2.2.4.patch'),
    );
    // refused every time, not only on the first call
    assert.throws(() => assertKafkajsPatched(shipped), /npm install/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
