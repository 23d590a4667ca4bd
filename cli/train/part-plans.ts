// Which parts `trajflow train` starts, in which order, with which flags, and which of their lines it shows (pure).
// Each part is the same `trajflow <part>` a user can start by hand (parts.ts runs them).
import type { TrainConfig } from './config.js';

export interface PartPlan {
  readonly name: string;
  /** The part's flags each time it starts; `lastIteration`: the last iteration any actors process of the run started. */
  args(lastIteration: number): string[];
  /** Lines to show (default: all). */
  readonly show?: (line: string) => boolean;
}

/**
 * The order parts stop in on Ctrl-C or at the end: the gateway and the actors first (the gateway answers the calls
 * in flight, the actors finish the iterations they started and report their last iteration), then the learner and
 * the evaluator, then the consumers.
 */
export const STOP_ORDER = ['gateway', 'actors', 'learner', 'evaluator', 'processors', 'detectors', 'dashboard', 'sink'] as const;

/** kafkajs logs retriable coordinator moves and rebalances as errors; they are noise here. */
export function isKafkaNoise(line: string): boolean {
  return /not the correct coordinator|rebalancing|The group is rebalancing|concurrent operation on the same transaction/.test(line);
}

/** The consumers' JSON start-up dump is noise on the run's console. */
const quietStartup = (line: string) => !/^(sink|processors|dashboard): \{/.test(line);

/** The parts in the order they start; the evaluator only with --eval-every > 0. `updates`: --updates, checked. */
export function trainParts(s: TrainConfig, updates: number | undefined): PartPlan[] {
  const { preset } = s;
  // The preset's estimator options only belong to the preset's estimator.
  const estimatorOptions = s.estimator === preset.estimator && preset.estimatorOptions ? ['--estimator-options', JSON.stringify(preset.estimatorOptions)] : [];
  // Actors and learner build version 0 from the same shape and seed, so the actors' v0 is the learner's.
  const model = ['--model', JSON.stringify({ ...preset.model, seed: s.seed })];
  // The actors' steps name their iteration, so the processors make one rollout batch per iteration (closed by
  // its last group); these settings batch the groups of another producer in the same run alike.
  const batching = ['--max-batch-groups', String(s.groups), '--batch-window-ms', '5000'];
  const evaluator: PartPlan[] =
    s.evalEvery > 0
      ? [
          {
            name: 'evaluator',
            args: () => [
              '--run-id',
              s.runId,
              '--every',
              String(s.evalEvery),
              '--tasks',
              String(s.evalTasks),
              ...(updates === undefined ? [] : ['--until-version', String(updates)]),
            ],
          },
        ]
      : [];
  return [
    { name: 'sink', args: () => [], show: quietStartup },
    {
      name: 'processors',
      args: () => ['--estimator', s.estimator, ...estimatorOptions, '--group-size', String(s.groupSize), ...batching, ...s.filters.flatMap((name) => ['--filter', name])],
      show: quietStartup,
    },
    { name: 'learner', args: () => learnerArgs(s, model), show: (line) => !line.startsWith('learner: config') },
    { name: 'detectors', args: () => ['--run-id', s.runId], show: (line) => /alert|error|Error/i.test(line) },
    ...evaluator,
    { name: 'dashboard', args: () => ['--port', s.port], show: (line) => /http:\/\/|error|Error/.test(line) },
    ...gateway(s, model),
    ...(s.actors ? [actorsPart(s, model)] : []),
  ];
}

/** The gateway in front of the run's own policy (the learner's model, seed and temperature): agents' calls are the run's steps. */
function gateway(s: TrainConfig, model: readonly string[]): PartPlan[] {
  if (s.gatewayPort === null) return [];
  const temperature = s.preset.optimizer?.temperature ?? 1;
  return [
    {
      name: 'gateway',
      args: () => ['--upstream', 'policy', '--run-id', s.runId, '--env', s.env, '--port', String(s.gatewayPort), '--temperature', String(temperature), ...model],
      show: (line) => /http:\/\/|error|Error/.test(line),
    },
  ];
}

function actorsPart(s: TrainConfig, model: readonly string[]): PartPlan {
  return {
    name: 'actors',
    // A restarted actors process continues after the last iteration any earlier one started.
    args: (lastIteration) => [
      '--env',
      s.env,
      '--run-id',
      s.runId,
      '--groups',
      String(s.groups),
      '--group-size',
      String(s.groupSize),
      '--max-staleness',
      s.maxStaleness,
      '--env-options',
      s.envOptions,
      '--first-iteration',
      String(lastIteration + 1),
      '--progress-ms',
      '2000',
      ...model,
      '--seed',
      String(s.taskSeeds),
    ],
    show: (line) => !line.startsWith('actors: {'),
  };
}

function learnerArgs(s: TrainConfig, model: readonly string[]): string[] {
  return [
    '--run-id',
    s.runId,
    '--env',
    s.env,
    '--env-options',
    s.envOptions,
    '--lr',
    String(s.lr),
    '--max-staleness',
    s.maxStaleness,
    ...model,
    '--optimizer',
    JSON.stringify(s.preset.optimizer ?? {}),
    ...(s.preset.loss ? ['--loss', JSON.stringify(s.preset.loss)] : []),
    ...(s.updatesFlag ? ['--updates', s.updatesFlag] : []),
  ];
}
