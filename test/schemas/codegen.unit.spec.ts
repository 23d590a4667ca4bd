import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generatedTypesPath, generateTypes } from '../../schemas/codegen.js';
import { eventNames, generatedVersions, listSchemaFiles, recordNames } from '../../schemas/index.js';

test('schemas/generated/types.ts is up to date with the .avsc files (run: node --import tsx schemas/codegen.ts)', () => {
  assert.equal(readFileSync(generatedTypesPath(), 'utf8'), generateTypes());
});

test('the generated tables list every event folder at its latest version', () => {
  const latest = new Map(listSchemaFiles().map((f) => [f.event, f.version]));
  assert.deepStrictEqual([...eventNames].sort(), [...latest.keys()].sort());
  for (const event of eventNames) {
    assert.equal(generatedVersions[event], latest.get(event));
    assert.match(recordNames[event], /^trajflow\.events\.[A-Z]\w+Event$/);
  }
});
