// Unit: the actors' checkpoint provider says in one line that a version's checkpoint was pruned (a rerun reads the
// version topic from its start, the learner keeps only its last checkpoints) and keeps the current policy; a
// checkpoint that is there but unreadable is reported in full.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { selectBackend } from '../../../learner/backend.js';
import { createPolicyBundle, disposeBundle, policyOf } from '../../../learner/policy/bundle.js';
import { createCheckpointPolicyProvider } from '../../../learner/policy/checkpoint-provider.js';
import type { PolicyVersionEvent } from '../../../schemas/index.js';

await selectBackend('wasm');

const versionAt = (directory: string, version: number): PolicyVersionEvent =>
  ({
    runId: 'r',
    version,
    weightsUri: pathToFileURL(directory).href,
    checksum: '0'.repeat(64),
    parentVersion: version - 1,
    learnerStep: version,
    createdAtMs: 0,
  }) as PolicyVersionEvent;

test('a pruned checkpoint is one line and the current policy stays; a corrupt one is reported with its error', async () => {
  const home = await mkdtemp(join(tmpdir(), 'trajflow-provider-'));
  const bundle = createPolicyBundle(['Left', 'Down', 'Right', 'Up'], { width: 16, layers: 1, heads: 2, contextLength: 32, seed: 1 });
  const lines: unknown[][] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void lines.push(args);
  try {
    const provider = createCheckpointPolicyProvider({ initial: policyOf(bundle, 0) });
    await provider.onVersion(versionAt(join(home, 'v1'), 1));
    assert.equal(provider.current().version, 0, 'the current policy stays');
    assert.equal(lines.length, 1);
    assert.match(String(lines[0]![0]), /^actors: policy version 1 skipped: its checkpoint was pruned/);
    assert.equal(lines[0]!.length, 1, 'no stack trace');
    await mkdir(join(home, 'v2'));
    await writeFile(join(home, 'v2', 'manifest.json'), '{ not json');
    await provider.onVersion(versionAt(join(home, 'v2'), 2));
    assert.equal(lines.length, 2);
    assert.match(String(lines[1]![0]), /could not load policy version 2/);
    assert.match(String(lines[1]![1]), /no readable checkpoint manifest/);
  } finally {
    console.error = original;
    disposeBundle(bundle);
    await rm(home, { recursive: true, force: true });
  }
});
