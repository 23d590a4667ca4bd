// Unit tier: which commands run under which node flags, and when `trajflow` must start itself again to get them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { missingNodeFlags, nodeFlagsFor, PROCESSORS_NODE_FLAGS } from '../../infra/node-flags.mjs';

test('the processors, and the bench that measures them, run with a 64 MB semi-space, one V8 helper thread and a 256 MB old generation before any full GC; other commands with node defaults', () => {
  assert.deepEqual(PROCESSORS_NODE_FLAGS, ['--max-semi-space-size=64', '--v8-pool-size=1', '--initial-old-space-size=256']);
  assert.deepEqual(nodeFlagsFor(['processors', '--estimator', 'gigpo']), PROCESSORS_NODE_FLAGS);
  assert.deepEqual(nodeFlagsFor(['bench', 'processors', '--json']), PROCESSORS_NODE_FLAGS);
  for (const args of [['bench', 'sink'], ['sink'], ['train'], ['learner'], [], ['up']]) assert.deepEqual(nodeFlagsFor(args), [], args.join(' '));
});

test('a flag already given on the command line or in NODE_OPTIONS (in either spelling) is not added again', () => {
  assert.deepEqual(missingNodeFlags(['processors'], [], ''), ['--max-semi-space-size=64', '--v8-pool-size=1', '--initial-old-space-size=256']);
  assert.deepEqual(missingNodeFlags(['processors'], ['--max-semi-space-size=32'], ''), ['--v8-pool-size=1', '--initial-old-space-size=256'], 'the caller chose another size');
  assert.deepEqual(missingNodeFlags(['processors'], ['--v8-pool-size=4'], '--inspect --max_semi_space_size=128 --initial_old_space_size=64'), []);
  assert.deepEqual(missingNodeFlags(['sink'], [], ''), []);
});

test('a node started with the flags sees them in process.execArgv (so trajflow does not start itself again)', () => {
  const script = 'import("./node-flags.mjs").then((m) => console.log(JSON.stringify(m.missingNodeFlags(["processors"]))))';
  const cwd = fileURLToPath(new URL('../../infra/', import.meta.url));
  const run = (flags: string[]) =>
    JSON.parse(execFileSync(process.execPath, [...flags, '--input-type=module', '-e', script], { cwd, env: { ...process.env, NODE_OPTIONS: '' } }).toString());
  assert.deepEqual(run([...PROCESSORS_NODE_FLAGS]), []);
  assert.deepEqual(run([]), [...PROCESSORS_NODE_FLAGS]);
});
