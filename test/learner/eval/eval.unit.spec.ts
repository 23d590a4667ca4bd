// Held-out evaluation (learner/eval): evaluate() on a tiny fresh policy gives consistent pass@k / pass^k
// and the same numbers for the same seeds; the eval command's batching does not change them; the
// command parses its flags strictly and evaluates a checkpoint end to end.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../core/config.js';
import { ConfigError } from '../../../core/errors.js';
import { createEnv } from '../../../envs/registry.js';
import { EVAL_SEEDS } from '../../../envs/seeds.js';
import { selectBackend } from '../../../learner/backend.js';
import { writeCheckpoint } from '../../../learner/checkpoint/checkpoint.js';
import { evalCommand, parseEvalArgs, resolveCheckpoint, type EvalReport } from '../../../learner/eval/command.js';
import { evaluateBundle } from '../../../learner/eval/compare.js';
import { evalEnvironment } from '../../../learner/eval/run-environment.js';
import { evaluate, type EvalResult } from '../../../learner/eval/evaluate.js';
import { createPolicyBundle, disposeBundle, policyOf, type PolicyBundle } from '../../../learner/policy/bundle.js';
import { TOKENIZER_NAME } from '../../../tokenizer/index.js';

const TINY = { width: 16, layers: 1, heads: 2, contextLength: 128 };
const KS = [1, 2, 4, 8];
let bundle: PolicyBundle;
let dir: string;

before(async () => {
  await selectBackend('wasm');
  // The Bandit: an untrained policy picks the good arm about half the time, so pass@k is not all 0 or 1.
  bundle = createPolicyBundle(createEnv('Bandit').actionVocabulary, TINY);
  dir = await mkdtemp(join(tmpdir(), 'trajflow-eval-'));
});
after(async () => {
  disposeBundle(bundle);
  await rm(dir, { recursive: true, force: true });
});

function evalTiny(seeds: readonly number[], maxBatch?: number): Promise<EvalResult> {
  return evaluate({
    createEnv: () => createEnv('Bandit'),
    seeds,
    greedy: policyOf(bundle, 0, { greedy: true, ...(maxBatch ? { maxBatch } : {}) }),
    sampling: policyOf(bundle, 0, maxBatch ? { maxBatch } : {}),
    samples: 8,
    ks: KS,
  });
}

test('evaluate(): pass@k grows with k, pass^k shrinks, pass^k ≤ pass@k, pass@1 = pass^1; the same seeds give the same result', async () => {
  const seeds = EVAL_SEEDS.take(24);
  const result = await evalTiny(seeds);
  assert.equal(result.tasks, 24);
  const at = KS.map((k) => result.passAtK[`pass@${k}`]!);
  const hat = KS.map((k) => result.passHatK[`pass^${k}`]!);
  for (const v of [...at, ...hat]) assert.ok(v >= 0 && v <= 1, `${v} in [0, 1]`);
  for (let i = 1; i < KS.length; i++) {
    assert.ok(at[i]! >= at[i - 1]! - 1e-12, `pass@${KS[i]} ${at[i]} >= pass@${KS[i - 1]} ${at[i - 1]}`);
    assert.ok(hat[i]! <= hat[i - 1]! + 1e-12, `pass^${KS[i]} ${hat[i]} <= pass^${KS[i - 1]} ${hat[i - 1]}`);
  }
  KS.forEach((k, i) => assert.ok(hat[i]! <= at[i]! + 1e-12, `pass^${k} ≤ pass@${k}`));
  assert.ok(Math.abs(at[0]! - hat[0]!) < 1e-12, 'pass@1 = pass^1 (both the mean success rate)');
  assert.ok(at[KS.length - 1]! > 0 && hat[KS.length - 1]! < 1, `non-trivial values: pass@8 ${at[3]}, pass^8 ${hat[3]}`);
  assert.ok(result.greedySuccess === 0 || result.greedySuccess === 1 || (result.greedySuccess > 0 && result.greedySuccess < 1));
  assert.deepEqual(await evalTiny(seeds), result, 'deterministic for the same seeds');
});

test('the eval command batches forward passes without changing any number', async () => {
  const seeds = EVAL_SEEDS.take(12);
  const whole = await evalTiny(seeds);
  const chunked = await evalTiny(seeds, 5);
  assert.deepEqual(chunked, whole);
});

test('evaluateBundle puts the random policy on the same seeds next to the model', async () => {
  const seeds = EVAL_SEEDS.take(16);
  let episodes = 0;
  const report = await evaluateBundle(bundle, 0, { envName: 'Bandit', seeds, samples: 4, ks: [1, 4], maxBatch: 7, onEpisode: () => episodes++ });
  assert.equal(episodes, 16 * (1 + 4), 'progress counts every greedy and sampled episode of the policy');
  assert.deepEqual(Object.keys(report.random.passAtK), ['pass@1', 'pass@4']);
  assert.ok(report.random.success >= 0 && report.random.success <= 1);
  assert.ok(report.random.passHatK['pass^4']! <= report.random.passAtK['pass@4']!);
  assert.deepEqual(
    report.policy,
    await evaluate({ createEnv: () => createEnv('Bandit'), seeds, greedy: policyOf(bundle, 0, { greedy: true }), sampling: policyOf(bundle, 0), samples: 4, ks: [1, 4] }),
  );
});

test('eval flags: what is wrong is named', () => {
  const fails = (args: string[], pattern: RegExp) =>
    assert.throws(
      () => parseEvalArgs(args),
      (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
      `${args.join(' ')} → ${pattern}`,
    );
  fails([], /--run-id \(or --checkpoint DIR\) is required/);
  fails(['--run-id', 'r', '--bogus', '1'], /unknown option '--bogus'/);
  fails(['--run-id'], /--run-id needs a value/);
  fails(['--run-id', 'r', '--env', 'Chess'], /--env 'Chess' is not a built-in environment/);
  fails(['--run-id', 'r', '--env-options', '{nope'], /--env-options must be a JSON object/);
  fails(['--run-id', 'r', '--env-options', '[1]'], /--env-options must be a JSON object/);
  fails(['--run-id', 'r', '--env', 'FrozenLake', '--env-options', '{"wings":2}'], /unknown option 'wings'/);
  fails(['--run-id', 'r', '--version', 'newest'], /--version needs an integer/);
  fails(['--run-id', 'r', '--tasks', '0'], /--tasks needs an integer in 1\.\./);
  fails(['--run-id', 'r', '--samples', '4', '--k', '1,8'], /--k needs an integer in 1\.\.4, got '8'/);
  fails(['--run-id', 'r', '--k', '1,x'], /--k needs an integer/);
  fails(['--run-id', 'r', '--samples', '0', '--k', '1'], /--k needs sampled trials/);
  fails(['--run-id', 'r', '--temperature', '0'], /--temperature needs a positive number/);
  fails(['--run-id', 'r', '--backend', 'tpu'], /backend "tpu" is not one of/);
  fails(['--run-id', 'r', '--env', '--json'], /--env needs a value/);

  const defaults = parseEvalArgs(['--run-id', 'r']);
  assert.deepEqual(
    { version: defaults.version, env: defaults.envName, tasks: defaults.tasks, samples: defaults.samples, ks: defaults.ks, json: defaults.json },
    { version: 'latest', env: undefined, tasks: 200, samples: 8, ks: [1, 4, 8], json: false },
  );
  const set = parseEvalArgs(['--json', '--run-id', 'r', '--version', '3', '--env', 'Bandit', '--samples', '4', '--k', '4,1,4']);
  assert.deepEqual({ version: set.version, env: set.envName, ks: set.ks, json: set.json }, { version: 3, env: 'Bandit', ks: [1, 4], json: true });
  assert.deepEqual(parseEvalArgs(['--run-id', 'r', '--samples', '2']).ks, [1], 'default ks above --samples are left out');
});

async function saveCheckpoint(root: string, version: number): Promise<void> {
  const values = await bundle.model.values();
  await writeCheckpoint(root, {
    runId: 'eval-test',
    version,
    parentVersion: version === 0 ? null : version - 1,
    updates: version,
    tokenizer: TOKENIZER_NAME,
    replyWords: bundle.vocabulary.words,
    model: bundle.model.config,
    weights: [...bundle.model.parameters].map(([name, variable]) => ({ name, shape: variable.shape, values: values.get(name)! })),
    optimizer: [],
    offsets: {},
    recentSampleIds: [],
    lastStep: null,
  });
}

test('trajflow eval on a checkpoint directory: --version, latest, one JSON object', async () => {
  const root = join(dir, 'run');
  await saveCheckpoint(root, 2);
  await saveCheckpoint(root, 5);
  const config = loadConfig();
  assert.equal((await resolveCheckpoint(config, { runId: undefined, checkpoint: root, version: 'latest' })).manifest.version, 5);
  assert.equal((await resolveCheckpoint(config, { runId: undefined, checkpoint: root, version: 2 })).manifest.version, 2);
  assert.equal((await resolveCheckpoint(config, { runId: undefined, checkpoint: join(root, 'v00000002'), version: 'latest' })).manifest.version, 2);
  await assert.rejects(resolveCheckpoint(config, { runId: undefined, checkpoint: root, version: 3 }), /no checkpoint of version 3 .*versions on disk: 2, 5/);
  await assert.rejects(
    resolveCheckpoint(config, { runId: 'no-such-run-eval', checkpoint: undefined, version: 'latest' }),
    /no checkpoint for run no-such-run-eval under topic prefix/,
  );

  const lines: string[] = [];
  const log = console.log;
  console.log = (line: string) => void lines.push(line);
  let code: number;
  try {
    code = await evalCommand.run(['--checkpoint', root, '--env', 'Bandit', '--tasks', '6', '--samples', '4', '--k', '1,4', '--backend', 'wasm', '--json']);
  } finally {
    console.log = log;
  }
  assert.equal(code, 0);
  assert.equal(lines.length, 1, 'one line: the JSON object');
  const report = JSON.parse(lines[0]!) as EvalReport;
  assert.equal(report.version, 5);
  assert.equal(report.runId, 'eval-test');
  assert.equal(report.tasks, 6);
  assert.deepEqual(report.seeds, { first: EVAL_SEEDS.first, last: EVAL_SEEDS.first + 5 });
  assert.deepEqual(Object.keys(report.policy.passAtK), ['pass@1', 'pass@4']);
  assert.deepEqual(Object.keys(report.random.passHatK), ['pass^1', 'pass^4']);
  assert.equal(report.backend, 'wasm');
});

test("eval knows the run: the checkpoint's environment and options, a different one only with --other-env", () => {
  const manifest = { runId: 'r', env: { name: 'FrozenLake', options: { slippery: false, maxTurns: 10 } } };
  const none = { envName: undefined, envOptions: undefined, otherEnv: false };
  assert.deepEqual(evalEnvironment(manifest, none), { envName: 'FrozenLake', envOptions: { slippery: false, maxTurns: 10 } });
  // The same options in another key order are the same task.
  assert.deepEqual(evalEnvironment(manifest, { ...none, envName: 'FrozenLake', envOptions: { maxTurns: 10, slippery: false } }).envOptions, { maxTurns: 10, slippery: false });
  assert.throws(
    () => evalEnvironment(manifest, { ...none, envOptions: { slippery: true } }),
    (e: unknown) => e instanceof ConfigError && /was trained on FrozenLake .*--other-env/.test(e.message),
  );
  assert.throws(() => evalEnvironment(manifest, { ...none, envName: 'Bandit' }), /--other-env/);
  assert.deepEqual(evalEnvironment(manifest, { envName: 'Bandit', envOptions: undefined, otherEnv: true }), { envName: 'Bandit', envOptions: {} });
  // A checkpoint from before runs recorded their environment: --env is needed.
  assert.throws(() => evalEnvironment({ runId: 'old' }, none), /does not record its environment.*--env/);
  assert.deepEqual(evalEnvironment({ runId: 'old' }, { ...none, envName: 'Bandit' }), { envName: 'Bandit', envOptions: {} });
});
