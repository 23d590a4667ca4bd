// `trajflow learner`: the training loop as its own process (see learner/loop/learner.ts).
//   trajflow learner --run-id R [--env FrozenLake] [--updates N] [--batch-tokens T] [--lr X] ...
import { ensureUp } from '../infra/up.js';
import { loadConfig } from '../core/config.js';
import { ConfigError } from '../core/errors.js';
import { connectBackbone, shutdownOnSignals } from '../streams/index.js';
import { jsonObjectFlag, numberFlag, parseFlagPairs, positiveInt } from '../infra/cli/flags.js';
import type { Command } from '../infra/cli/command.js';
import { parseBackendChoice } from './backend.js';
import { buildLearnerConfig, type LearnerConfigInput } from './loop/config.js';
import { startLearner } from './loop/learner.js';
import { MODEL_DEFAULTS } from './model/config.js';
import { OPTIMIZER_DEFAULTS } from './train/config.js';

const FLAGS = [
  '--run-id',
  '--env',
  '--updates',
  '--batch-tokens',
  '--min-samples',
  '--max-wait-ms',
  '--max-staleness',
  '--lr',
  '--epochs',
  '--minibatches',
  '--temperature',
  '--backend',
  '--width',
  '--layers',
  '--heads',
  '--context',
  '--seed',
  '--model',
  '--optimizer',
  '--loss',
  '--template-every',
  '--template-pairs',
  '--env-options',
  '--batch-timeout-ms',
] as const;
const USAGE =
  'trajflow learner --run-id R [--env FrozenLake] [--updates N] [--batch-tokens 4096] [--min-samples 8] [--max-wait-ms 2000] ' +
  '[--max-staleness K] [--lr 3e-4] [--epochs 1] [--minibatches 1] [--temperature 1] [--backend auto|node-gpu|node|wasm|cpu] ' +
  '[--width 64] [--layers 2] [--heads 4] [--context 256] [--seed 1] [--model JSON] [--optimizer JSON] [--loss JSON] [--template-every 10] [--template-pairs 16] ' +
  '[--env-options JSON] [--batch-timeout-ms 10000] [--config trajflow.json]';

/**
 * The learner's settings from its flags. `--model`, `--optimizer` and `--loss` take partial JSON objects of
 * those parts of the config (the shape logged at start; e.g. --loss '{"clipHigh":0.28}'), and the single-value
 * flags (--width, --lr, …) win over them. All of it is checked by buildLearnerConfig.
 */
export function learnerInputFromArgs(args: readonly string[]): LearnerConfigInput {
  const f = parseFlagPairs(args, FLAGS, USAGE);
  // The JSON flags give whole parts of the config; the single-value flags below win over them.
  const parts = {
    model: jsonObjectFlag('model', f['--model'], { example: '{"width":128}', known: Object.keys(MODEL_DEFAULTS) }) as Partial<LearnerConfigInput['model']>,
    optimizer: jsonObjectFlag('optimizer', f['--optimizer'], { example: '{"warmupUpdates":10}', known: Object.keys(OPTIMIZER_DEFAULTS) }) as Partial<
      LearnerConfigInput['optimizer']
    >,
    // The loss config refuses unknown keys itself (buildPolicyLossConfig).
    ...(f['--loss'] === undefined ? {} : { loss: jsonObjectFlag('loss', f['--loss'], { example: '{"entropyCoeff":0.001}' }) as LearnerConfigInput['loss'] }),
  };
  const runId = f['--run-id'];
  if (runId === undefined) throw new ConfigError(`--run-id is required (the actors' run id); usage: ${USAGE}`);
  const pick = <T>(value: T | undefined) => (value === undefined ? {} : value);
  const int = (name: string, raw: string | undefined) => (raw === undefined ? undefined : positiveInt(name, raw, 0));
  const model = {
    ...parts.model,
    ...strip({
      width: int('width', f['--width']),
      layers: int('layers', f['--layers']),
      heads: int('heads', f['--heads']),
      contextLength: int('context', f['--context']),
      seed: f['--seed'] === undefined ? undefined : Number(f['--seed']),
    }),
  };
  const optimizer = {
    ...parts.optimizer,
    ...strip({
      learningRate: numberFlag('lr', f['--lr'], { positive: true }),
      epochs: int('epochs', f['--epochs']),
      minibatches: int('minibatches', f['--minibatches']),
      temperature: numberFlag('temperature', f['--temperature'], { positive: true }),
    }),
  };
  return {
    ...(parts.loss ? { loss: parts.loss } : {}),
    runId,
    ...pick(
      strip({
        envName: f['--env'],
        envOptions: f['--env-options'] === undefined ? undefined : jsonObjectFlag('env-options', f['--env-options'], { example: '{"slippery":false}' }),
        batchTimeoutMs: int('batch-timeout-ms', f['--batch-timeout-ms']),
        maxUpdates: int('updates', f['--updates']),
        batchTokens: int('batch-tokens', f['--batch-tokens']),
        minSamples: int('min-samples', f['--min-samples']),
        maxWaitMs: f['--max-wait-ms'] === undefined ? undefined : Number(f['--max-wait-ms']),
        maxStaleness: f['--max-staleness'] === undefined ? undefined : Number(f['--max-staleness']),
        backend: f['--backend'] === undefined ? undefined : parseBackendChoice(f['--backend']),
      }),
    ),
    model,
    optimizer,
    templateCollapse: strip({
      every: f['--template-every'] === undefined ? undefined : Number(f['--template-every']),
      pairs: f['--template-pairs'] === undefined ? undefined : Number(f['--template-pairs']),
    }),
  };
}

function strip<T extends Record<string, unknown>>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export const learnerCommand: Command = {
  summary: 'train the policy on <prefix>.samples; checkpoint and publish a policy version after every update',
  usage: USAGE,
  async run(args) {
    const trajflow = loadConfig();
    const config = buildLearnerConfig(trajflow, learnerInputFromArgs(args));
    await ensureUp(trajflow);
    const backbone = await connectBackbone(trajflow, { clientId: `trajflow-learner-${config.runId}` });
    try {
      const run = await startLearner(backbone, config, {
        onStep: (step, version) =>
          console.error(
            `learner: update ${step.step} → v${version.version}  loss ${step.totalLoss.toFixed(4)}  entropy ${step.entropy.toFixed(3)}  grad ${step.gradNormPreClip.toFixed(3)}  ${step.samples} samples ${step.tokens} tokens  ${step.durationMs.toFixed(0)} ms  staleness ${step.stalenessMean.toFixed(2)} (max ${step.stalenessMax})  dropped stale ${step.metrics.droppedStale ?? 0}`,
          ),
      });
      const release = shutdownOnSignals([{ close: () => run.stop().then(() => undefined) }], { exit: false });
      try {
        const stats = await run.done;
        console.log(
          `learner: stopped at v${stats.version} after ${stats.updates} updates (${stats.samplesTrained} samples trained, ${stats.droppedStale} stale dropped, ${stats.duplicates} duplicates)`,
        );
      } finally {
        release();
      }
      return 0;
    } finally {
      await backbone.close();
    }
  },
};
