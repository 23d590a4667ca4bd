// `trajflow bench supervised`: can the policy model represent the task at all? Cross-entropy on BFS-optimal
// actions (supervised-train.ts) with the preset's model and environment settings, held-out greedy success after
// every --eval-every examples, beside what optimal play solves within the action budget (docs/results/learning.md
// cites its tables).
//   trajflow bench supervised --env FrozenLake|Sokoban [--examples N] [--eval-every N] [--batch B] [--lr X] [--model JSON] [--seed S] [--eval-tasks K] [--json]
import { cpus } from 'node:os';
import { ConfigError } from '../core/errors.js';
import { Rng, RngStream } from '../core/rng.js';
import { TRAIN_PRESETS } from '../cli/train/presets.js';
import { jsonObjectFlag, numberFlag, parseFlagPairs, positiveInt } from '../infra/cli/flags.js';
import { selectBackend } from '../learner/backend.js';
import { MODEL_DEFAULTS } from '../learner/model/config.js';
import { SUPERVISED_ENVS, supervisedTask, type SupervisedEnv } from './supervised-states.js';
import { trainSupervised, type SupervisedPoint } from './supervised-train.js';
import { emitResult } from './results-file.js';

const FLAGS = ['--env', '--examples', '--eval-every', '--batch', '--lr', '--model', '--seed', '--eval-tasks'] as const;
const USAGE =
  'trajflow bench supervised [--env FrozenLake|Sokoban] [--examples N] [--eval-every N] [--batch 32] [--lr 1e-3] ' +
  '[--model \'{"gridNeighbours":false}\'] [--seed 1] [--eval-tasks 100] [--json]';

/** Examples and evaluation interval of the runs docs/results/learning.md cites, per environment. */
const RUN_LENGTH: Record<SupervisedEnv, { examples: number; evalEvery: number }> = {
  FrozenLake: { examples: 16_000, evalEvery: 2_000 },
  Sokoban: { examples: 48_000, evalEvery: 4_000 },
};
const BATCH = 32;
const LEARNING_RATE = 1e-3;
/** Held-out states for the one-step accuracy at each evaluation. */
const EVAL_STATES = 200;
/** Seed S draws states from Rng(S + 6, policy stream): seed 1 is Rng(7), the stream of the runs of docs/results/learning.md. */
const STATE_SEED_OFFSET = 6;

export async function runSupervisedBench(args: string[]): Promise<number> {
  const f = parseFlagPairs(
    args.slice(1).filter((a) => a !== '--json' && a !== '--save'),
    FLAGS,
    USAGE,
  );
  const env = f['--env'] ?? 'FrozenLake';
  if (!(SUPERVISED_ENVS as readonly string[]).includes(env)) throw new ConfigError(`--env ${env}: bench supervised has BFS labels for ${SUPERVISED_ENVS.join(' and ')}`);
  const preset = TRAIN_PRESETS[env]!;
  const length = RUN_LENGTH[env as SupervisedEnv];
  const examples = positiveInt('examples', f['--examples'], length.examples);
  const evalEvery = positiveInt('eval-every', f['--eval-every'], length.evalEvery);
  const batch = positiveInt('batch', f['--batch'], BATCH);
  const learningRate = numberFlag('lr', f['--lr'], { positive: true }) ?? LEARNING_RATE;
  const seed = positiveInt('seed', f['--seed'], 1);
  const evalTasks = positiveInt('eval-tasks', f['--eval-tasks'], 100);
  // The preset's model (the grid policy with the neighbour stem), the seed's initial weights, then --model.
  const model = { ...preset.model, seed, ...jsonObjectFlag('model', f['--model'], { example: '{"gridNeighbours":false}', known: Object.keys(MODEL_DEFAULTS) }) };
  const envOptions = preset.envOptions;
  const task = supervisedTask(env as SupervisedEnv, envOptions);

  const backend = await selectBackend('auto');
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, backend: backend.description };
  console.error(
    `bench supervised: ${env} ${JSON.stringify(envOptions)}, model ${JSON.stringify(model)}, batch ${batch}, lr ${learningRate}, ${examples} examples, ${backend.description}`,
  );
  const progress = (p: SupervisedPoint) =>
    console.error(
      `  ${p.examples} examples, ${p.seconds.toFixed(0)} s: greedy held-out ${p.greedySuccess.toFixed(3)}, one-step held-out ${p.stepAccuracy.toFixed(3)}${p.trainLoss === undefined ? '' : `, train loss ${p.trainLoss.toFixed(3)}, train accuracy ${p.trainAccuracy!.toFixed(3)}`}`,
    );
  const result = await trainSupervised(
    { task, model, examples, evalEvery, batch, learningRate, evalTasks, evalStates: EVAL_STATES, states: new Rng(seed + STATE_SEED_OFFSET, RngStream.policy) },
    progress,
  );

  console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, node ${machine.node}, ${machine.backend}`);
  console.log(
    `${env}, cross-entropy on BFS-optimal actions (batch ${batch}, lr ${learningRate}, seed ${seed}): held-out greedy success over ${evalTasks} tasks, one-step accuracy over ${EVAL_STATES} held-out states`,
  );
  console.log(`optimal play solves ${result.optimalSuccess.toFixed(2)} of the held-out tasks within the ${result.actionBudget} actions`);
  console.log(`  ${'examples'.padStart(8)}  greedy  one-step  train loss  train acc`);
  for (const p of result.curve) {
    const train = p.trainLoss === undefined ? '' : `  ${p.trainLoss.toFixed(3).padStart(10)}  ${p.trainAccuracy!.toFixed(3).padStart(9)}`;
    console.log(`  ${String(p.examples).padStart(8)}  ${p.greedySuccess.toFixed(3).padStart(6)}  ${p.stepAccuracy.toFixed(3).padStart(8)}${train}`);
  }
  emitResult(args, { bench: 'supervised', machine, env, envOptions, model, batch, learningRate, seed, examples, evalEvery, evalTasks, evalStates: EVAL_STATES, ...result });
  return 0;
}
